"""A batch of right-hand sides with one matrix (jax.vmap over b) is solved in
one FFI call on one setup with multi-vector kernels: every lane must give the
iterations, status and solution of its own eager solve, and match SciPy's
direct solver."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from helpers import poisson2d, random_nonsymmetric
from jax.experimental import sparse as jsparse

import jaxamg

jax.config.update("jax_enable_x64", True)

LANES = 8


def poisson3d(m: int) -> sp.csr_array:
    """The 7-point Laplacian on an m^3 grid with Dirichlet boundaries."""
    P = sp.csr_array(poisson2d(m))
    T = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(m, m))
    I2, I1 = sp.eye_array(m * m), sp.eye_array(m)
    return sp.csr_array(sp.kron(I1, P) + sp.kron(T, I2)).sorted_indices()


def right_hand_sides(rng, n, dtype):
    B = rng.normal(size=(LANES, n)) * np.logspace(-2, 3, LANES)[:, None]
    B[3] = 0.0  # converged before the first iteration
    return B.astype(dtype)


def eager_lanes(A, B, X0=None, **kw):
    out = []
    for k in range(B.shape[0]):
        x0 = None if X0 is None else jnp.asarray(X0[k])
        x, info = jaxamg.solve(A, jnp.asarray(B[k]), x0=x0, **kw)
        out.append((np.asarray(x), info))
    return out


def check_lanes(X, info, eager, A_sp, B, exact, rtol_scipy):
    for k, (x_k, info_k) in enumerate(eager):
        assert int(info["iterations"][k]) == int(info_k["iterations"]), k
        assert int(info["status"][k]) == int(info_k["status"]), k
        hist_k = np.asarray(info_k["residual_history"])
        hist = np.asarray(info["residual_history"][k])[: hist_k.size]
        if exact:
            np.testing.assert_array_equal(np.asarray(X[k]), x_k)
            np.testing.assert_array_equal(hist, hist_k)
        else:
            np.testing.assert_allclose(
                np.asarray(X[k]), x_k, rtol=1e-9, atol=1e-12 * abs(x_k).max()
            )
            np.testing.assert_allclose(hist, hist_k, rtol=1e-9)
        ref = spla.spsolve(A_sp.tocsc().astype(np.float64), B[k].astype(np.float64))
        scale = max(abs(ref).max(), 1e-300)
        np.testing.assert_allclose(np.asarray(X[k]), ref, rtol=0, atol=rtol_scipy * scale)
    assert int(info["iterations"][3]) == 0
    assert int(info["status"][3]) == int(jaxamg.AMGXStatus.SUCCESS)


PCG_CHEBY = {
    "solver": "PCG",
    "tolerance": 1e-10,
    "preconditioner": {
        "solver": "AMG",
        "aggressive_levels": 1,
        "strength_threshold": 0.25,
        "smoother": {
            "scope": "cheby",
            "solver": "CHEBYSHEV",
            "chebyshev_polynomial_order": 2,
            "chebyshev_lambda_estimate_mode": 3,
            "cheby_max_lambda": 1.0,
            "cheby_min_lambda": 0.25,
            "preconditioner": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 1.0},
        },
    },
}


IDRMSYNC_AGGREGATION = {
    "solver": "IDRMSYNC",
    "subspace_dim_s": 4,
    "tolerance": 1e-10,
    "preconditioner": {
        "solver": "AMG",
        "algorithm": "AGGREGATION",
        "selector": "SIZE_2",
        "smoother": {"scope": "l1", "solver": "JACOBI_L1"},
    },
}


# 12^3 = 1728 rows: the engine's reductions are serial, so batched and
# one-lane solves agree bit for bit.
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "config", [None, PCG_CHEBY, IDRMSYNC_AGGREGATION], ids=["default", "pcg_cheby", "idrmsync"]
)
def test_vmap_over_b_matches_eager_lanes_and_spsolve(rng, dtype, config):
    A_sp = poisson3d(12).astype(dtype)
    A = jsparse.BCSR.from_scipy_sparse(A_sp)
    B = right_hand_sides(rng, A_sp.shape[0], dtype)
    kw = {"config": config, "tolerance": 1e-10 if dtype == np.float64 else 1e-6}
    X, info = jax.vmap(lambda b: jaxamg.solve(A, b, **kw))(jnp.asarray(B))
    check_lanes(
        X,
        info,
        eager_lanes(A, B, **kw),
        A_sp,
        B,
        exact=True,
        rtol_scipy=1e-8 if dtype == np.float64 else 2e-5,
    )


def test_jit_vmap_over_b_and_x0_nonsymmetric(rng):
    n = 900
    A_sp = random_nonsymmetric(n, 6.0 / n, rng)
    A = jsparse.BCSR.from_scipy_sparse(A_sp)
    B = right_hand_sides(rng, n, np.float64)
    X0 = rng.normal(size=(LANES, n))
    X0[3] = 0.0
    kw = {"tolerance": 1e-11}
    X, info = jax.jit(jax.vmap(lambda b, x0: jaxamg.solve(A, b, x0=x0, **kw)))(
        jnp.asarray(B), jnp.asarray(X0)
    )
    # Relative residual 1e-11 with cond(A) of a few hundred: 1e-8 in x.
    check_lanes(X, info, eager_lanes(A, B, X0, **kw), A_sp, B, exact=True, rtol_scipy=1e-8)


# 24^3 = 13824 rows: threaded reductions, equal to rounding.
def test_vmap_threaded_size_matches_to_rounding(rng):
    A_sp = poisson3d(24)
    A = jsparse.BCSR.from_scipy_sparse(A_sp)
    B = right_hand_sides(rng, A_sp.shape[0], np.float64)
    kw = {"tolerance": 1e-10}
    X, info = jax.vmap(lambda b: jaxamg.solve(A, b, **kw))(jnp.asarray(B))
    check_lanes(X, info, eager_lanes(A, B, **kw), A_sp, B, exact=False, rtol_scipy=1e-8)


def test_vmap_of_grad_runs_batched_adjoints(rng):
    """The adjoint solves (A^T) of a vmapped gradient are one batch too."""
    n = 400
    A_sp = random_nonsymmetric(n, 5.0 / n, rng)
    A = jsparse.BCSR.from_scipy_sparse(A_sp)
    B = rng.normal(size=(LANES, n))
    w = rng.normal(size=n)

    def loss(b):
        return jnp.dot(jnp.asarray(w), jaxamg.solve(A, b, tolerance=1e-12)[0])

    G = jax.vmap(jax.grad(loss))(jnp.asarray(B))
    lam = spla.spsolve(A_sp.T.tocsc(), w)  # d/db w^T A^-1 b = A^-T w
    for k in range(LANES):
        np.testing.assert_allclose(np.asarray(G[k]), lam, rtol=1e-8, atol=1e-10 * abs(lam).max())
