"""The AmgX smoothers KACZMARZ, POLYNOMIAL and KPZ_POLYNOMIAL through
``jaxamg.solve``: as AMG smoothers under FGMRES and PCG, single right-hand
sides and vmapped batches, against SciPy's direct solve."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from helpers import weighted_poisson2d

import jaxamg

jax.config.update("jax_enable_x64", True)


def _system(symmetric: bool, seed: int):
    rng = np.random.default_rng(seed)
    A = weighted_poisson2d(20, symmetric, rng)
    return A, rng.standard_normal((3, A.shape[0]))


def _config(outer: str, smoother: dict) -> dict:
    return {
        "config_version": 2,
        "solver": {
            "scope": "main",
            "solver": outer,
            "max_iters": 300,
            "tolerance": 1e-10,
            "convergence": "RELATIVE_INI",
            "monitor_residual": 1,
            "gmres_n_restart": 30,
            "preconditioner": {
                "scope": "amg",
                "solver": "AMG",
                "max_iters": 1,
                "smoother": {"scope": "smoother", **smoother},
            },
        },
    }


CASES = [
    ("FGMRES", {"solver": "KACZMARZ", "relaxation_factor": 1.0}, False),
    ("FGMRES", {"solver": "KACZMARZ", "relaxation_factor": 1.0}, True),
    ("PCG", {"solver": "POLYNOMIAL", "kpz_order": 3}, True),
    ("PCG", {"solver": "KPZ_POLYNOMIAL", "kpz_order": 3, "kpz_mu": 4}, True),
    ("FGMRES", {"solver": "KPZ_POLYNOMIAL", "kpz_order": 4, "kpz_mu": 8}, False),
]


@pytest.mark.parametrize(("outer", "smoother", "symmetric"), CASES)
def test_smoother_in_amg_solves_like_scipy_direct_and_under_vmap(outer, smoother, symmetric):
    A, B = _system(symmetric, seed=len(smoother["solver"]) + symmetric)
    reference = np.stack([spla.spsolve(A.tocsc(), b) for b in B])
    config = _config(outer, smoother)
    x, info = jaxamg.solve(A, jnp.asarray(B[0]), config=config)
    assert int(info["status"]) == 0, info
    err = np.linalg.norm(np.asarray(x) - reference[0]) / np.linalg.norm(reference[0])
    assert err < 1e-8, err

    batched = jax.vmap(lambda b: jaxamg.solve(A, b, config=config)[0])(jnp.asarray(B))
    errs = np.linalg.norm(np.asarray(batched) - reference, axis=1) / np.linalg.norm(
        reference, axis=1
    )
    assert errs.max() < 1e-8, errs


def test_kaczmarz_alone_solves_a_system_with_zero_diagonals():
    # Rows reversed: most diagonals are zero, so GS and Jacobi cannot run;
    # Kaczmarz projects row by row and converges to the direct solution.
    A, B = _system(False, seed=3)
    A = sp.csr_matrix(A[::-1])
    A.sort_indices()
    assert (A.diagonal() == 0).sum() > A.shape[0] // 2
    reference = spla.spsolve(A.tocsc(), B[0])
    x, info = jaxamg.solve(
        A,
        jnp.asarray(B[0]),
        config={
            "config_version": 2,
            "solver": {
                "scope": "main",
                "solver": "FGMRES",
                "max_iters": 400,
                "tolerance": 1e-10,
                "convergence": "RELATIVE_INI",
                "gmres_n_restart": 50,
                "preconditioner": {"scope": "k", "solver": "KACZMARZ", "max_iters": 2},
            },
        },
    )
    assert int(info["status"]) == 0, info
    err = np.linalg.norm(np.asarray(x) - reference) / np.linalg.norm(reference)
    assert err < 1e-8, err
