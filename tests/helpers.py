"""Test problems and configurations shared by the Python tests.

Matrices are random (seeded per test) and checked against SciPy's direct
solver, an implementation independent of the engine.
"""

from __future__ import annotations

import json

import numpy as np
import scipy.sparse as sp


def random_spd(n: int, density: float, rng: np.random.Generator) -> sp.csr_array:
    """A random sparse symmetric matrix made positive definite by strict
    diagonal dominance."""
    R = sp.random_array((n, n), density=density, rng=rng, data_sampler=rng.standard_normal)
    S = (R + R.T).tocsr()
    S.setdiag(0)
    S.eliminate_zeros()
    dominance = np.asarray(abs(S).sum(axis=1)).ravel() + 1.0 + rng.random(n)
    return sp.csr_array(S + sp.diags_array(dominance)).sorted_indices()


def random_nonsymmetric(n: int, density: float, rng: np.random.Generator) -> sp.csr_array:
    """A random sparse nonsymmetric matrix, nonsingular by row diagonal
    dominance."""
    R = sp.random_array((n, n), density=density, rng=rng, data_sampler=rng.standard_normal)
    R = R.tocsr()
    R.setdiag(0)
    R.eliminate_zeros()
    dominance = np.asarray(abs(R).sum(axis=1)).ravel() + 1.0 + rng.random(n)
    return sp.csr_array(R + sp.diags_array(dominance)).sorted_indices()


def poisson2d(m: int) -> sp.csr_array:
    """The 5-point Laplacian on an m x m grid with Dirichlet boundaries."""
    T = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(m, m))
    identity = sp.eye_array(m)
    return sp.csr_array(sp.kron(T, identity) + sp.kron(identity, T)).sorted_indices()


def weighted_poisson2d(m: int, symmetric: bool, rng: np.random.Generator) -> sp.csr_matrix:
    """2D Poisson on m x m with random diagonal weights (SPD), plus a random
    convection term when nonsymmetric (still diagonally dominant)."""
    t = sp.diags([-np.ones(m - 1), 2 * np.ones(m), -np.ones(m - 1)], [-1, 0, 1])
    A = sp.kronsum(t, t).tocsr() + sp.diags(rng.uniform(0.05, 0.5, m * m))
    if not symmetric:
        c = sp.diags([-np.ones(m - 1), np.ones(m - 1)], [-1, 1])
        A = A + 0.4 * sp.kron(sp.identity(m), c) * rng.uniform(0.5, 1.0)
    A = sp.csr_matrix(A)
    A.sort_indices()
    return A


def krylov_config(solver: str, tolerance: float, *, max_iters: int = 1000, **extra) -> str:
    """A nested config: `solver` preconditioned by one block-Jacobi sweep."""
    main = {
        "scope": "main",
        "solver": solver,
        "convergence": "RELATIVE_INI",
        "tolerance": tolerance,
        "max_iters": max_iters,
        "monitor_residual": 1,
        "store_res_history": 1,
        "preconditioner": {"scope": "jacobi", "solver": "BLOCK_JACOBI", "max_iters": 1},
    }
    main.update(extra)
    return json.dumps({"config_version": 2, "solver": main})


def amg_config(tolerance: float, *, outer: str = "PCG") -> str:
    """`outer` preconditioned by one V-cycle of classical AMG whose coarsest
    level is smoothed, not factorised."""
    return json.dumps(
        {
            "config_version": 2,
            "solver": {
                "scope": "main",
                "solver": outer,
                "convergence": "RELATIVE_INI",
                "tolerance": tolerance,
                "max_iters": 200,
                "monitor_residual": 1,
                "store_res_history": 1,
                "preconditioner": {
                    "scope": "amg",
                    "solver": "AMG",
                    "algorithm": "CLASSICAL",
                    "selector": "PMIS",
                    "interpolator": "D2",
                    "max_iters": 1,
                    "smoother": {"scope": "smoother", "solver": "BLOCK_JACOBI"},
                    "coarse_solver": {"scope": "coarse", "solver": "BLOCK_JACOBI", "max_iters": 20},
                },
            },
        }
    )


def relative_error(x: np.ndarray, reference: np.ndarray) -> float:
    return float(np.linalg.norm(x.astype(np.float64) - reference) / np.linalg.norm(reference))


def cache_entries() -> list:
    """The native solver cache's entries (jaxamg.get_solver_cache_info)."""
    import jaxamg

    return jaxamg.get_solver_cache_info()["single_gpu"]["entries"]


def assert_grads_match_central_differences(
    f, data, b, g_data, g_b, rng: np.random.Generator, eps: float = 1e-6
) -> None:
    """`g_data`, `g_b` (the gradient of f(data, b)) against central differences
    in 6 random matrix values and 4 random right-hand-side entries."""
    import jax.numpy as jnp
    import pytest

    for k in rng.choice(data.shape[0], size=6, replace=False):
        e = jnp.zeros_like(data).at[k].set(eps)
        fd = (f(data + e, b) - f(data - e, b)) / (2 * eps)
        assert float(g_data[k]) == pytest.approx(float(fd), rel=1e-5, abs=1e-8)
    for i in rng.choice(b.shape[0], size=4, replace=False):
        e = jnp.zeros_like(b).at[i].set(eps)
        fd = (f(data, b + e) - f(data, b - e)) / (2 * eps)
        assert float(g_b[i]) == pytest.approx(float(fd), rel=1e-5, abs=1e-8)
