"""block_dim: the coupled kron(Poisson, [[2,1],[1,2]]) system (unknowns
interleaved node-major) solved with block aggregation, against SciPy and the
scalar solve; jit, vmap and gradients with block_dim=2."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from jax.experimental import sparse as jsparse

import jaxamg

jax.config.update("jax_enable_x64", True)

COUPLING = np.array([[2.0, 1.0], [1.0, 2.0]])


def poisson2d(m):
    """2-D 5-point Laplacian (diagonal 4) on an m x m grid."""
    T = sp.diags([-np.ones(m - 1), 2 * np.ones(m), -np.ones(m - 1)], [-1, 0, 1])
    I = sp.identity(m)
    return (sp.kron(T, I) + sp.kron(I, T)).tocsr()


def kron_system(m, coupling=COUPLING):
    # Row i*k + c is component c of node i.
    return sp.kron(poisson2d(m), coupling).tocsr()


def test_kron_block_solve_converges_fast_and_matches_spsolve(rng):
    A = kron_system(64)
    b = rng.normal(size=A.shape[0])
    x, info = jaxamg.solve(jsparse.BCSR.from_scipy_sparse(A), jnp.asarray(b), block_dim=2)
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
    assert info["iterations"] <= 20
    ref = spla.spsolve(A.tocsc(), b)
    assert np.linalg.norm(np.asarray(x) - ref) <= 1e-4 * np.linalg.norm(ref)
    print(f"block_dim=2: {info['iterations']} iterations")


def test_scalar_default_solve_of_the_kron_system_needs_far_more_iterations(rng):
    A = kron_system(64)
    b = rng.normal(size=A.shape[0])
    _, block = jaxamg.solve(A, jnp.asarray(b), block_dim=2)
    _, scalar = jaxamg.solve(A, jnp.asarray(b))
    print(f"block_dim=2: {block['iterations']} iterations ({block['status']}); "
          f"block_dim=1: {scalar['iterations']} iterations ({scalar['status']})")
    assert scalar["iterations"] >= 5 * block["iterations"]


def test_block_dim_under_jit_and_vmap(rng):
    A = kron_system(12)
    Aj = jsparse.BCSR.from_scipy_sparse(A)
    n = A.shape[0]
    B = rng.normal(size=(3, n))
    tight = {"tolerance": 1e-11, "max_iters": 200}

    @jax.jit
    def f(data, rhs):
        M = jsparse.BCSR((data, Aj.indices, Aj.indptr), shape=Aj.shape)
        return jaxamg.solve(M, rhs, block_dim=2, **tight)

    x, info = f(Aj.data, jnp.asarray(B[0]))
    assert int(info["status"]) == int(jaxamg.AMGXStatus.SUCCESS)
    np.testing.assert_allclose(np.asarray(x), spla.spsolve(A.tocsc(), B[0]), rtol=1e-8, atol=1e-10)
    X, infos = jax.vmap(lambda rhs: jaxamg.solve(Aj, rhs, block_dim=2, **tight))(jnp.asarray(B))
    for k in range(3):
        np.testing.assert_allclose(
            np.asarray(X[k]), spla.spsolve(A.tocsc(), B[k]), rtol=1e-8, atol=1e-10
        )
    assert np.all(np.asarray(infos["iterations"]) <= 20)


def test_block_dim_gradients_match_dense(rng):
    # A nonsymmetric coupling, so the adjoint solve really uses A^T.
    A = kron_system(8, np.array([[3.0, 1.0], [-0.5, 2.0]]))
    Aj = jsparse.BCSR.from_scipy_sparse(A)
    n = A.shape[0]
    b = jnp.asarray(rng.normal(size=n))
    w = jnp.asarray(rng.normal(size=n))
    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    cols = np.asarray(A.indices)
    tight = {"tolerance": 1e-12, "max_iters": 300}

    def loss_amg(data, rhs):
        M = jsparse.BCSR((data, Aj.indices, Aj.indptr), shape=Aj.shape)
        return jnp.dot(w, jaxamg.solve(M, rhs, block_dim=2, **tight)[0])

    def loss_dense(data, rhs):
        D = jnp.zeros((n, n)).at[rows, cols].add(data)
        return jnp.dot(w, jnp.linalg.solve(D, rhs))

    g_data, g_b = jax.grad(loss_amg, argnums=(0, 1))(Aj.data, b)
    r_data, r_b = jax.grad(loss_dense, argnums=(0, 1))(Aj.data, b)
    np.testing.assert_allclose(np.asarray(g_b), np.asarray(r_b), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(np.asarray(g_data), np.asarray(r_data), rtol=1e-7, atol=1e-9)


def test_block_dim_not_dividing_rows_is_rejected():
    A = poisson2d(5)  # 25 rows
    with pytest.raises(ValueError, match="divisible"):
        jaxamg.solve(A, jnp.ones(25), block_dim=2)
