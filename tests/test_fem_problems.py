"""The finite-element benchmark problems (bench/fem_problems.py) at tiny sizes:
each system has the properties its docstring claims, and config="auto"
solves it like a direct solver."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

pytest.importorskip("skfem")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = {
    "elast3d-nu030": 3,
    "elast3d-nu045": 3,
    "elast3d-nu049": 3,
    "jumpfem3d": 8,
    "anisofem2d": 12,
    "supg2d": 12,
    "neumann3d": 6,
}


@pytest.fixture(scope="module")
def fem():
    # bench/ is not a package: load the module by path.
    spec = importlib.util.spec_from_file_location(
        "bench_fem_problems", os.path.join(REPO, "bench", "fem_problems.py")
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def systems(fem):
    assert set(TINY) == set(fem.FAMILIES)
    return {f: fem.build(f, n, np.random.default_rng(7)) for f, n in TINY.items()}


def asymmetry(A: sp.csr_matrix) -> float:
    return abs(A - A.T).max() / abs(A).max()


@pytest.mark.parametrize("family", sorted(TINY))
def test_symmetry_as_claimed(fem, systems, family):
    if fem.SYMMETRIC[family]:
        assert asymmetry(systems[family].A) < 1e-12
    else:
        assert asymmetry(systems[family].A) > 1e-3


@pytest.mark.parametrize("family", [f for f in sorted(TINY) if f != "supg2d"])
def test_spectrum(systems, family):
    """Dirichlet (and clamped) systems are SPD; the Neumann one is positive
    semidefinite with exactly one zero eigenvalue."""
    system = systems[family]
    eigenvalues = np.linalg.eigvalsh(system.A.toarray())
    scale = eigenvalues[-1]
    if system.singular:
        assert abs(eigenvalues[0]) < 1e-12 * scale
        assert eigenvalues[1] > 1e-6 * scale
    else:
        assert eigenvalues[0] > 1e-8 * scale


def test_neumann_null_space_and_consistent_rhs(systems):
    system = systems["neumann3d"]
    ones = np.ones(system.A.shape[0])
    assert np.abs(system.A @ ones).max() < 1e-12 * abs(system.A).max()
    assert abs(ones @ system.b) < 1e-12 * np.abs(system.b).sum()


@pytest.mark.parametrize("family", ["elast3d-nu030", "elast3d-nu049"])
def test_rigid_body_modes_away_from_the_clamp(systems, family):
    """K annihilates the rigid-body modes, so the clamped matrix does too on
    every row whose node has no neighbour on the clamped face x = 0: this
    checks the coordinates against the unknowns' numbering."""
    import jaxamg

    system = systems[family]
    modes = jaxamg.rigid_body_modes(system.coordinates)
    residual = np.abs(system.A @ modes).max(axis=1)
    h = 1.0 / TINY[family]
    far = np.repeat(system.coordinates[:, 0] > h + 1e-12, 3)
    assert far.any() and (~far).any()
    assert residual[far].max() < 1e-12 * abs(system.A).max() * np.abs(modes).max()
    assert residual[~far].max() > 1e-3 * abs(system.A).max()


def reference_solution(system) -> np.ndarray:
    if not system.singular:
        return spla.spsolve(sp.csc_matrix(system.A), system.b)
    # b is consistent: pin one unknown to 0, then remove the mean.
    x = np.zeros(system.A.shape[0])
    x[1:] = spla.spsolve(sp.csc_matrix(system.A[1:, 1:]), system.b[1:])
    return x - x.mean()


@pytest.mark.parametrize("family", sorted(TINY))
def test_auto_config_solves_it(systems, family):
    import jax

    import jaxamg

    system = systems[family]
    A = system.A
    kwargs = {"block_dim": system.block_dim}
    if system.coordinates is not None:
        kwargs["near_nullspace"] = jaxamg.rigid_body_modes(system.coordinates)
    if system.singular:
        A = jaxamg.with_cache(A, is_symmetric=True, nullspace="constant")
    with jax.enable_x64(True):  # the float64 solve that a 1e-8 residual needs
        x, info = jaxamg.solve(A, system.b, config="auto", **kwargs)
    x = np.asarray(x)
    assert int(info["status"]) == 0, info.get("config_choice")
    relres = np.linalg.norm(system.b - system.A @ x) / np.linalg.norm(system.b)
    assert relres <= 1e-8
    expected = reference_solution(system)
    if system.singular:
        x = x - x.mean()
    assert np.linalg.norm(x - expected) <= 1e-5 * np.linalg.norm(expected)
