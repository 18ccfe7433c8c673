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
    print(
        f"block_dim=2: {block['iterations']} iterations ({block['status']}); "
        f"block_dim=1: {scalar['iterations']} iterations ({scalar['status']})"
    )
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


def _block_gs_config(smoother):
    return {
        "config_version": 2,
        "solver": {
            "scope": "main",
            "solver": "FGMRES",
            "gmres_n_restart": 30,
            "max_iters": 200,
            "tolerance": 1e-11,
            "convergence": "RELATIVE_INI",
            "monitor_residual": 1,
            "preconditioner": {
                "scope": "amg",
                "solver": "AMG",
                "algorithm": "AGGREGATION",
                "selector": "SIZE_2",
                "max_iters": 1,
                "cycle": "V",
                "presweeps": 1,
                "postsweeps": 1,
                "coarse_solver": "DENSE_LU_SOLVER",
                "smoother": {"scope": "gs", "solver": smoother, "relaxation_factor": 1.0},
            },
        },
    }


@pytest.mark.parametrize("smoother", ["GS", "MULTICOLOR_GS"])
def test_block_gauss_seidel_smoother_solves_and_differentiates(rng, smoother):
    # Nonsymmetric 2x2 coupling with a zero in the block diagonal: scalar
    # Gauss-Seidel cannot divide by it, block Gauss-Seidel inverts the block.
    coupling = np.array([[0.0, 2.0], [-1.5, 1.0]])
    A = (kron_system(10, coupling) + sp.kron(sp.identity(100), np.diag([0.0, 3.0]))).tocsr()
    A.sort_indices()
    Aj = jsparse.BCSR.from_scipy_sparse(A)
    n = A.shape[0]
    b = jnp.asarray(rng.normal(size=n))
    w = jnp.asarray(rng.normal(size=n))
    cfg = _block_gs_config(smoother)

    @jax.jit
    def solve(data, rhs):
        M = jsparse.BCSR((data, Aj.indices, Aj.indptr), shape=Aj.shape)
        return jaxamg.solve(M, rhs, config=cfg, block_dim=2)

    x, info = solve(Aj.data, b)
    assert int(info["status"]) == int(jaxamg.AMGXStatus.SUCCESS), info
    ref = spla.spsolve(A.tocsc(), np.asarray(b))
    np.testing.assert_allclose(np.asarray(x), ref, rtol=1e-8, atol=1e-10)

    rows = np.repeat(np.arange(n), np.diff(A.indptr))
    g_data, g_b = jax.grad(lambda d, r: jnp.dot(w, solve(d, r)[0]), argnums=(0, 1))(Aj.data, b)
    # Adjoint: A^T lam = w, dL/db = lam, dL/da_ij = -lam_i x_j.
    lam = spla.spsolve(A.T.tocsc(), np.asarray(w))
    np.testing.assert_allclose(np.asarray(g_b), lam, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(
        np.asarray(g_data), -lam[rows] * ref[A.indices], rtol=1e-7, atol=1e-9
    )
