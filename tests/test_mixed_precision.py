"""A float32 AMG hierarchy inside a float64 solve ("x_amg_precision": "FLOAT"
in the AMG scope): solutions against SciPy's spsolve, iterations against a
float64 hierarchy, gradients against central finite differences, and the
config check of the setting."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from helpers import assert_grads_match_central_differences, poisson2d, random_nonsymmetric
from jax.experimental import sparse as jsparse

import jaxamg

jax.config.update("jax_enable_x64", True)


def config(outer, precision="FLOAT", tolerance=1e-10):
    return {
        "config_version": 2,
        "solver": {
            "scope": "main",
            "solver": outer,
            "tolerance": tolerance,
            "convergence": "RELATIVE_INI",
            "max_iters": 300,
            "preconditioner": {
                "scope": "amg",
                "solver": "AMG",
                "algorithm": "CLASSICAL",
                "selector": "PMIS",
                "x_amg_precision": precision,
                "max_iters": 1,
                "cycle": "V",
                "coarse_solver": "DENSE_LU_SOLVER",
                "smoother": {"scope": "l1", "solver": "JACOBI_L1"},
            },
        },
    }


def random_coefficients(m, rng):
    """A 2-D diffusion operator with log-normal cell coefficients (about four
    orders of magnitude), SPD."""
    c = np.exp(rng.normal(scale=1.5, size=(m, m)))
    cx = 2 * c[:, 1:] * c[:, :-1] / (c[:, 1:] + c[:, :-1])  # faces between columns
    cy = 2 * c[1:, :] * c[:-1, :] / (c[1:, :] + c[:-1, :])  # faces between rows
    idx = np.arange(m * m).reshape(m, m)
    rows = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    cols = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    w = np.concatenate([cx.ravel(), cy.ravel()])
    off = sp.coo_array((-w, (rows, cols)), shape=(m * m, m * m))
    off = off + off.T
    diag = -np.asarray(off.sum(axis=1)).ravel() + c.ravel()  # Dirichlet boundary share
    return sp.csr_array(off + sp.diags_array(diag)).sorted_indices()


def as_bcsr(A):
    return jsparse.BCSR.from_scipy_sparse(sp.csr_matrix(A))


@pytest.mark.parametrize(
    "outer, make",
    [
        ("PCG", "coefficients"),
        ("PCGF", "coefficients"),
        ("FGMRES", "nonsymmetric"),
        ("PBICGSTAB", "nonsymmetric"),
    ],
)
def test_matches_spsolve_with_float64_accuracy(rng, outer, make):
    if make == "coefficients":
        A = random_coefficients(40, rng)
    else:
        A = sp.csr_array(poisson2d(40) + 0.5 * random_nonsymmetric(1600, 3 / 1600, rng))
    b = rng.normal(size=A.shape[0])
    ref = spla.spsolve(sp.csc_matrix(A), b)
    x, info = jaxamg.solve(as_bcsr(A), jnp.asarray(b), config=config(outer))
    _, info_hi = jaxamg.solve(as_bcsr(A), jnp.asarray(b), config=config(outer, "SAME"))
    assert int(info["status"]) == 0
    x = np.asarray(x)
    assert x.dtype == np.float64
    assert np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b)
    # The error is at most cond(A) times the residual (cond ~ 1e4 to 1e5).
    assert np.linalg.norm(x - ref) <= 1e-5 * np.linalg.norm(ref)
    assert int(info["iterations"]) <= int(info_hi["iterations"]) + 2


def test_grad_matches_central_differences(rng):
    A = sp.csr_array(poisson2d(8) + 0.3 * random_nonsymmetric(64, 3 / 64, rng))
    Aj = as_bcsr(A)
    b = jnp.asarray(rng.normal(size=64))
    w = jnp.asarray(rng.uniform(0.5, 2.0, size=64))
    cfg = config("FGMRES", tolerance=1e-12)

    def f(data, rhs):
        M = jsparse.BCSR((data, Aj.indices, Aj.indptr), shape=Aj.shape)
        x, _ = jaxamg.solve(M, rhs, config=cfg)
        return jnp.sum(w * x**2) + jnp.sum(jnp.sin(x))

    g_data, g_b = jax.grad(f, argnums=(0, 1))(Aj.data, b)
    assert_grads_match_central_differences(f, Aj.data, b, g_data, g_b, rng)


def test_float32_solve_ignores_the_setting(rng):
    A = random_coefficients(24, rng).astype(np.float32)
    b = rng.normal(size=A.shape[0]).astype(np.float32)
    x, info = jaxamg.solve(as_bcsr(A), jnp.asarray(b), config=config("PCG", tolerance=1e-5))
    x_same, _ = jaxamg.solve(as_bcsr(A), jnp.asarray(b), config=config("PCG", "SAME", 1e-5))
    assert x.dtype == np.float32 and int(info["status"]) == 0
    np.testing.assert_array_equal(np.asarray(x), np.asarray(x_same))


def test_unknown_precision_is_rejected():
    A = as_bcsr(poisson2d(6))
    with pytest.raises(jaxamg.ConfigError, match="x_amg_precision.*HALF.*SAME, FLOAT"):
        jaxamg.solve(A, jnp.ones(36), config=config("PCG", "HALF"))


def test_vmap_over_right_hand_sides(rng):
    # Several right-hand sides on one setup (solved one lane after another:
    # the multi-vector cycle covers float64 hierarchies only).
    A = random_coefficients(20, rng)
    B = rng.normal(size=(3, A.shape[0]))
    M = as_bcsr(A)
    X = jax.vmap(lambda r: jaxamg.solve(M, r, config=config("PCG"))[0])(jnp.asarray(B))
    for k in range(3):
        ref = spla.spsolve(sp.csc_matrix(A), B[k])
        assert np.linalg.norm(np.asarray(X[k]) - ref) <= 1e-5 * np.linalg.norm(ref)
        assert np.linalg.norm(B[k] - A @ np.asarray(X[k])) <= 1e-10 * np.linalg.norm(B[k])
