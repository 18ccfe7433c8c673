"""Derivatives of jaxamg.solve against dense references and finite
differences: reverse mode (b, matrix values, builder parameters), forward
mode, higher order, transforms combined."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from helpers import assert_grads_match_central_differences
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg import matrices

jax.config.update("jax_enable_x64", True)

CFG = {"solver": "FGMRES", "tolerance": 1e-12, "max_iters": 300}


def random_system(rng, n=36, skew=0.8):
    m = int(np.sqrt(n))
    A = sp.csr_matrix(np.asarray(matrices.poisson_matrix(m, skew=skew).todense(), np.float64))
    A = (A + 0.3 * sp.random(n, n, density=2.0 / n, random_state=rng.integers(1 << 31))).tocsr()
    A.sort_indices()
    return jsparse.BCSR.from_scipy_sparse(A), jnp.asarray(rng.normal(size=n))


def dense_of(Aj, data):
    n = Aj.shape[0]
    rows = np.repeat(np.arange(n), np.diff(np.asarray(Aj.indptr)))
    return jnp.zeros((n, n)).at[rows, np.asarray(Aj.indices)].add(data)


def loss_amg(Aj, w):
    def f(data, b):
        M = jsparse.BCSR((data, Aj.indices, Aj.indptr), shape=Aj.shape)
        x, _ = jaxamg.solve(M, b, **CFG)
        return jnp.sum(w * x**2) + jnp.sum(jnp.sin(x))

    return f


def loss_dense(Aj, w):
    def f(data, b):
        x = jnp.linalg.solve(dense_of(Aj, data), b)
        return jnp.sum(w * x**2) + jnp.sum(jnp.sin(x))

    return f


def test_reverse_mode_matches_dense_solve(rng):
    Aj, b = random_system(rng)
    w = jnp.asarray(rng.uniform(0.5, 2.0, size=b.shape))
    ga = jax.grad(loss_amg(Aj, w), argnums=(0, 1))(Aj.data, b)
    gd = jax.grad(loss_dense(Aj, w), argnums=(0, 1))(Aj.data, b)
    np.testing.assert_allclose(np.asarray(ga[0]), np.asarray(gd[0]), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(np.asarray(ga[1]), np.asarray(gd[1]), rtol=1e-7, atol=1e-10)


def test_reverse_mode_matches_central_differences(rng):
    Aj, b = random_system(rng, n=25)
    w = jnp.asarray(rng.uniform(0.5, 2.0, size=b.shape))
    f = loss_amg(Aj, w)
    g_data, g_b = jax.grad(f, argnums=(0, 1))(Aj.data, b)
    assert_grads_match_central_differences(f, Aj.data, b, g_data, g_b, rng)


def test_forward_mode_jvp_and_jacfwd(rng):
    Aj, b = random_system(rng)
    dA = jnp.asarray(rng.normal(size=Aj.data.shape))
    db = jnp.asarray(rng.normal(size=b.shape))

    def sol(data, rhs):
        M = jsparse.BCSR((data, Aj.indices, Aj.indptr), shape=Aj.shape)
        return jaxamg.solve(M, rhs, **CFG)[0]

    _, t = jax.jvp(sol, (Aj.data, b), (dA, db))
    _, t_ref = jax.jvp(lambda d, r: jnp.linalg.solve(dense_of(Aj, d), r), (Aj.data, b), (dA, db))
    np.testing.assert_allclose(np.asarray(t), np.asarray(t_ref), rtol=1e-7, atol=1e-10)
    J = jax.jacfwd(sol, argnums=1)(Aj.data, b)
    np.testing.assert_allclose(
        np.asarray(J), np.linalg.inv(np.asarray(dense_of(Aj, Aj.data))), rtol=1e-7, atol=1e-10
    )


def test_grad_of_grad_and_hessian(rng):
    Aj, b = random_system(rng, n=16)
    w = jnp.asarray(rng.uniform(0.5, 2.0, size=b.shape))
    H = jax.hessian(loss_amg(Aj, w), argnums=1)(Aj.data, b)
    H_ref = jax.hessian(loss_dense(Aj, w), argnums=1)(Aj.data, b)
    np.testing.assert_allclose(np.asarray(H), np.asarray(H_ref), rtol=1e-6, atol=1e-9)
    gg = jax.grad(lambda d: jnp.sum(jax.grad(loss_amg(Aj, w), argnums=1)(d, b) ** 2))(Aj.data)
    gg_ref = jax.grad(lambda d: jnp.sum(jax.grad(loss_dense(Aj, w), argnums=1)(d, b) ** 2))(Aj.data)
    np.testing.assert_allclose(np.asarray(gg), np.asarray(gg_ref), rtol=1e-6, atol=1e-9)


def test_jit_vmap_of_grad(rng):
    Aj, b = random_system(rng)
    w = jnp.asarray(rng.uniform(0.5, 2.0, size=b.shape))
    B = jnp.asarray(rng.normal(size=(3,) + b.shape))
    g = jax.jit(jax.vmap(jax.grad(loss_amg(Aj, w), argnums=1), in_axes=(None, 0)))(Aj.data, B)
    g_ref = jax.vmap(jax.grad(loss_dense(Aj, w), argnums=1), in_axes=(None, 0))(Aj.data, B)
    np.testing.assert_allclose(np.asarray(g), np.asarray(g_ref), rtol=1e-7, atol=1e-10)


def test_gradient_through_a_builder_parameter():
    b = matrices.rhs_linear(64, dtype=jnp.float64)

    def loss(d):
        x, _ = jaxamg.solve(matrices.tridiagonal_matrix(64, d, dtype=jnp.float64), b, **CFG)
        return jnp.sum(x**2)

    def loss_ref(d):
        A = matrices.tridiagonal_matrix(64, d, dtype=jnp.float64).todense()
        return jnp.sum(jnp.linalg.solve(A, b) ** 2)

    g = jax.grad(loss)(2.5)
    assert float(g) == pytest.approx(float(jax.grad(loss_ref)(2.5)), rel=1e-7)
    fd = (loss(2.5 + 1e-6) - loss(2.5 - 1e-6)) / 2e-6
    assert float(g) == pytest.approx(float(fd), rel=1e-5)
    skew_grad = jax.grad(
        lambda s: jnp.sum(
            jaxamg.solve(
                matrices.poisson_matrix(6, s, dtype=jnp.float64),
                matrices.rhs_ones(36, jnp.float64),
                **CFG,
            )[0]
            ** 2
        )
    )(0.5)
    skew_ref = jax.grad(
        lambda s: jnp.sum(
            jnp.linalg.solve(
                matrices.poisson_matrix(6, s, dtype=jnp.float64).todense(),
                matrices.rhs_ones(36, jnp.float64),
            )
            ** 2
        )
    )(0.5)
    assert float(skew_grad) == pytest.approx(float(skew_ref), rel=1e-7)


def test_is_symmetric_flag_shares_the_operator_and_a_wrong_flag_is_detectably_wrong(rng):
    A = matrices.poisson_matrix(6, dtype=jnp.float64)
    b = jnp.asarray(rng.normal(size=36))
    jaxamg.with_cache(A, is_symmetric=True)
    g = jax.grad(lambda r: jnp.sum(jaxamg.solve(A, r, **CFG)[0] ** 3))(b)
    g_ref = jax.grad(lambda r: jnp.sum(jnp.linalg.solve(A.todense(), r) ** 3))(b)
    np.testing.assert_allclose(np.asarray(g), np.asarray(g_ref), rtol=1e-8)
    N = matrices.poisson_matrix(6, skew=1.5, dtype=jnp.float64)
    jaxamg.with_cache(N, is_symmetric=True)  # a lie: the gradient must differ
    g_wrong = jax.grad(lambda r: jnp.sum(jaxamg.solve(N, r, **CFG)[0] ** 3))(b)
    g_true = jax.grad(lambda r: jnp.sum(jnp.linalg.solve(N.todense(), r) ** 3))(b)
    assert not np.allclose(np.asarray(g_wrong), np.asarray(g_true), rtol=1e-3)


def test_x0_has_zero_gradient(rng):
    Aj, b = random_system(rng)
    x0 = jnp.asarray(rng.normal(size=b.shape))
    g = jax.grad(lambda z: jnp.sum(jaxamg.solve(Aj, b, x0=z, **CFG)[0] ** 2))(x0)
    assert np.all(np.asarray(g) == 0.0)


def test_failed_adjoint_warns():
    A = matrices.convection_diffusion_matrix_2d(32, epsilon=1e-3, dtype=jnp.float64)
    b = matrices.rhs_ones(32 * 32, dtype=jnp.float64)
    # A few iterations converge the forward solve loosely, not the adjoint.
    with pytest.warns(jaxamg.AdjointConvergenceWarning, match="adjoint solve"):
        jax.grad(lambda r: jnp.sum(jaxamg.solve(A, r, solver="PBICGSTAB", max_iters=2)[0]))(b)
        jax.effects_barrier()
