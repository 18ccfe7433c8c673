"""Status codes and the iteration limit of every Krylov solver, seen from
Python (direct calls and under jax.jit).

The engine's own tests (cpp/tests/test_krylov_status.cc) check the same rules
on the C++ API; these check that they survive the FFI and `info`:

* NOT_CONVERGED with exactly `max_iters` iterations when the limit is too
  small, a history of `max_iters + 1` entries ending at `residual`, and
  DIVERGED instead when that residual is above the initial one (not for
  the CG family);
* SUCCESS within the limit, with the answer of SciPy's direct solver;
* FAILED with a NaN solution and no iterations for NaN input under jit;
* DIVERGED on a breakdown (a Krylov divisor exactly zero at the first step),
  with a finite iterate and the loop stopped at once;
* DIVERGED when the monitored residual grows past `rel_div_tolerance` times
  the initial one, direct and under vmap (the lanes' loop), and the solve
  running on when the test is disabled (DIVERGED again if it then runs out
  of iterations above the initial residual).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg import AMGXStatus

jax.config.update("jax_enable_x64", True)

KRYLOV = ["CG", "PCG", "PCGF", "BICGSTAB", "PBICGSTAB", "GMRES", "FGMRES", "IDR", "IDRMSYNC"]
SYMMETRIC_ONLY = {"CG", "PCG", "PCGF"}


def exhausted_status(name: str, history) -> AMGXStatus:
    """Out of iterations: DIVERGED when x is worse than x0 = 0, except for the
    CG family, whose residual may rise while its A-norm error falls."""
    above = history[-1] > history[0]
    return AMGXStatus.DIVERGED if above and name not in SYMMETRIC_ONLY else AMGXStatus.NOT_CONVERGED


def krylov_config(name: str, **fields) -> dict:
    """`name` with no preconditioning (a NOSOLVER preconditioner, as in the
    engine's tests), so each method's own recurrence is what is tested."""
    config = {
        "solver": name,
        "preconditioner": {"scope": "p", "solver": "NOSOLVER", "max_iters": 1},
        "convergence": "RELATIVE_INI",
        "tolerance": 1e-8,
        "max_iters": 1000,
    }
    config.update(fields)
    return config


def convection_diffusion(m: int, eps: float) -> sp.csr_matrix:
    """-eps Laplace(u) + u_x on an m x m grid (central differences): nonsymmetric."""
    h = 1.0 / (m + 1)
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m)) * (eps / h**2)
    C = sp.diags([-1.0, 1.0], [-1, 1], shape=(m, m)) / (2 * h)
    identity = sp.eye(m)
    return sp.csr_matrix(sp.kron(identity, T + C) + sp.kron(T, identity))


def problem(name: str, rng: np.random.Generator):
    """An SPD Poisson matrix for the CG family, a nonsymmetric one otherwise."""
    A = convection_diffusion(8, 1.0 if name in SYMMETRIC_ONLY else 0.05)
    if name in SYMMETRIC_ONLY:
        A = sp.csr_matrix((A + A.T) / 2)
    return A, rng.standard_normal(A.shape[0])


@pytest.mark.parametrize("name", KRYLOV)
def test_max_iters_too_small_is_not_converged(name, rng):
    A, b = problem(name, rng)
    x, info = jaxamg.solve(A, b, config=krylov_config(name, max_iters=3, tolerance=1e-10))
    history = info["residual_history"]
    assert info["status"] == exhausted_status(name, history)
    assert info["iterations"] == 3
    assert len(history) == 4
    assert info["residual"] == history[-1]
    assert history[0] == pytest.approx(np.linalg.norm(b), rel=1e-12)
    assert history[-1] > 1e-10 * history[0]
    # The reported residual is that of the returned x.
    assert history[-1] == pytest.approx(np.linalg.norm(b - A @ np.asarray(x)), rel=1e-6)


@pytest.mark.parametrize("name", KRYLOV)
def test_max_iters_is_respected_under_jit(name, rng):
    A, b = problem(name, rng)
    config = krylov_config(name, max_iters=4, tolerance=1e-12)
    x, info = jax.jit(lambda rhs: jaxamg.solve(A, rhs, config=config))(jnp.asarray(b))
    history = np.asarray(info["residual_history"])
    assert int(info["status"]) == exhausted_status(name, history)
    assert int(info["iterations"]) == 4
    assert history.shape == (5,)  # max_iters + 1, nothing padded here
    assert np.all(np.isfinite(history))
    assert float(info["residual"]) == history[-1]


@pytest.mark.parametrize("name", KRYLOV)
def test_converges_within_the_limit(name, rng):
    A, b = problem(name, rng)
    limit = 400
    x, info = jaxamg.solve(A, b, config=krylov_config(name, max_iters=limit))
    assert info["status"] == AMGXStatus.SUCCESS
    assert 1 <= info["iterations"] <= limit
    assert len(info["residual_history"]) == info["iterations"] + 1
    assert info["residual"] <= 1e-8 * info["residual_history"][0]
    reference = sp.linalg.spsolve(A.tocsc(), b)
    np.testing.assert_allclose(np.asarray(x), reference, rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("name", KRYLOV)
def test_nan_under_jit_is_failed(name, rng):
    A, b = problem(name, rng)
    M = jsparse.BCSR.from_scipy_sparse(A)
    config = krylov_config(name)

    @jax.jit
    def run(data, rhs):
        return jaxamg.solve(
            jsparse.BCSR((data, M.indices, M.indptr), shape=M.shape), rhs, config=config
        )

    bad = np.asarray(M.data).copy()
    bad[5] = np.nan
    x, info = run(bad, jnp.asarray(b))
    assert int(info["status"]) == AMGXStatus.FAILED
    assert int(info["iterations"]) == 0
    assert np.all(np.isnan(np.asarray(x)))
    b_bad = b.copy()
    b_bad[0] = np.inf
    x, info = run(M.data, jnp.asarray(b_bad))
    assert int(info["status"]) == AMGXStatus.FAILED
    assert np.all(np.isnan(np.asarray(x)))


# Breakdowns, as in the engine's tests: each matrix makes the first step's
# divisor exactly zero.
BREAKDOWNS = {
    # <p, A p> = 0 for diag(1, -1), b = (1, 1).
    "CG": ([[1.0, 0.0], [0.0, -1.0]], [1.0, 1.0], 1, {}),
    "PCG": ([[1.0, 0.0], [0.0, -1.0]], [1.0, 1.0], 1, {}),
    "PCGF": ([[1.0, 0.0], [0.0, -1.0]], [1.0, 1.0], 1, {}),
    # Skew-symmetric: <r0, A r0> = 0 (BiCGStab's <r0, v>, IDR's M(0, 0)).
    "BICGSTAB": ([[0.0, 1.0], [-1.0, 0.0]], [1.0, 1.0], 1, {}),
    "PBICGSTAB": ([[0.0, 1.0], [-1.0, 0.0]], [1.0, 1.0], 1, {}),
    "IDR": ([[0.0, 1.0], [-1.0, 0.0]], [1.0, 1.0], 1, {"subspace_dim_s": 1}),
    "IDRMSYNC": ([[0.0, 1.0], [-1.0, 0.0]], [1.0, 1.0], 1, {"subspace_dim_s": 1}),
    # No solution: the second Hessenberg column is zero.
    "GMRES": ([[0.0, 1.0], [0.0, 0.0]], [0.0, 1.0], 2, {}),
    "FGMRES": ([[0.0, 1.0], [0.0, 0.0]], [0.0, 1.0], 2, {}),
}


@pytest.mark.filterwarnings("ignore::jaxamg.NullSpaceWarning")
@pytest.mark.parametrize("name", KRYLOV)
def test_breakdown_is_diverged(name):
    # (solve always monitors the outer solver; the unmonitored case is
    # covered by the engine's tests.)
    dense, b, iterations, extra = BREAKDOWNS[name]
    config = krylov_config(name, max_iters=50, **extra)
    x, info = jaxamg.solve(np.array(dense), np.array(b), config=config)
    assert info["status"] == AMGXStatus.DIVERGED
    assert info["iterations"] == iterations
    assert np.all(np.isfinite(np.asarray(x)))


def _cg_first_step_growth(delta: float):
    """A diagonal SPD matrix and b on which CG's first residual is about
    3.5 / delta times the initial one: 49 unit eigenvalues and one M with
    M delta^2 = 49 make the first step length about 1/2, so the component
    of b along M (delta) becomes about -M delta / 2 = -24.5 / delta. CG then
    converges at the second step (two distinct eigenvalues)."""
    M = 49.0 / delta**2
    diagonal = np.ones(50)
    diagonal[17] = M
    b = np.ones(50)
    b[17] = delta
    return sp.csr_matrix(sp.diags(diagonal)), b


@pytest.mark.parametrize("name", ["CG", "PCG"])
def test_growing_residual_is_diverged_direct_and_batched(name):
    A, b = _cg_first_step_growth(1e-3)
    growth = 3.5e3
    config = krylov_config(name, rel_div_tolerance=1e3)
    x, info = jaxamg.solve(A, b, config=config)
    history = np.asarray(info["residual_history"])
    assert info["status"] == AMGXStatus.DIVERGED
    assert int(info["iterations"]) == 1
    assert history[1] / history[0] == pytest.approx(growth, rel=0.01)
    true = np.linalg.norm(b - A @ np.asarray(x))
    assert true == pytest.approx(float(info["residual"]), rel=1e-9)

    B = np.stack([b, -2.0 * b])
    _, infos = jax.vmap(lambda rhs: jaxamg.solve(A, rhs, config=config))(B)
    assert [AMGXStatus(int(s)) for s in infos["status"]] == [AMGXStatus.DIVERGED] * 2
    assert np.asarray(infos["iterations"]).tolist() == [1, 1]

    # Disabled (<= 0), the same solve goes on and converges at step two.
    x, info = jaxamg.solve(A, b, config=krylov_config(name, rel_div_tolerance=-1))
    assert info["status"] == AMGXStatus.SUCCESS and int(info["iterations"]) == 2
    np.testing.assert_allclose(np.asarray(x), b / A.diagonal(), rtol=1e-8)

    # Stopped after the growing step, it ends above its initial residual, but
    # CG's error fell in the A-norm: NOT_CONVERGED, direct and under vmap.
    config = krylov_config(name, rel_div_tolerance=-1, max_iters=1)
    _, info = jaxamg.solve(A, b, config=config)
    history = np.asarray(info["residual_history"])
    assert history[-1] > history[0]
    assert info["status"] == AMGXStatus.NOT_CONVERGED and int(info["iterations"]) == 1
    _, infos = jax.vmap(lambda rhs: jaxamg.solve(A, rhs, config=config))(B)
    assert [AMGXStatus(int(s)) for s in infos["status"]] == [AMGXStatus.NOT_CONVERGED] * 2
