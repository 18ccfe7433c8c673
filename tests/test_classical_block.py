"""Classical AMG on block systems (block_dim > 1): unknown-based coarsening,
as hypre's num_functions. 3-D linear elasticity (Hex1, node-interleaved
unknowns) at nu = 0.45, where scalar classical AMG over every coupling
converges slowly: solutions against SciPy's direct solve, a resetup with
new values, float32, and the iterations against the scalar hierarchy."""

import jax
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import skfem
from jax.experimental import sparse as jsparse
from skfem.models.elasticity import lame_parameters, linear_elasticity

import jaxamg

jax.config.update("jax_enable_x64", True)


def elasticity_3d(cells, nu):
    """Hex1 elasticity on the unit cube clamped at x = 0, unknowns
    node-interleaved (block_dim=3)."""
    grid = np.linspace(0.0, 1.0, cells + 1)
    mesh = skfem.MeshHex.init_tensor(grid, grid, grid)
    basis = skfem.Basis(mesh, skfem.ElementVector(skfem.ElementHex1()))
    assert np.array_equal(basis.nodal_dofs[0], 3 * np.arange(mesh.nvertices))
    K = skfem.asm(linear_elasticity(*lame_parameters(1.0, nu)), basis)
    clamped = basis.get_dofs(lambda x: np.isclose(x[0], 0.0)).all()
    free = np.setdiff1d(np.arange(basis.N), clamped)
    A = sp.csr_matrix(K[free][:, free])
    A.sort_indices()
    return A


def classical(tolerance=1e-10):
    """The shipped PCG + classical AMG (PMIS, D2, theta 0.25, symmetric
    multicolour GS) to `tolerance`."""
    cfg = jaxamg.config.load("PCG_CLASSICAL_MCGS_T025")
    cfg["solver"]["tolerance"] = tolerance
    return cfg


@pytest.fixture(scope="module")
def elasticity():
    return elasticity_3d(10, 0.45)


def relative_error(x, ref):
    return float(np.linalg.norm(np.asarray(x, np.float64) - ref) / np.linalg.norm(ref))


def test_block_classical_matches_spsolve_and_beats_the_scalar_hierarchy(elasticity, rng):
    A = elasticity
    b = rng.normal(size=A.shape[0])
    ref = spla.spsolve(A.tocsc(), b)
    x, info = jaxamg.solve(A, b, block_dim=3, config=classical())
    assert int(info["status"]) == 0
    assert relative_error(x, ref) < 1e-7
    # The same hierarchy built over every coupling (block_dim=1).
    x1, info1 = jaxamg.solve(A, b, config=classical())
    assert int(info1["status"]) == 0 and relative_error(x1, ref) < 1e-7
    assert 2 * int(info["iterations"]) < int(info1["iterations"]), (info, info1)


def test_resetup_with_new_values_and_float32(elasticity, rng):
    A = elasticity
    b = rng.normal(size=A.shape[0])
    # Same pattern, new values (still SPD): the cached hierarchy is set up
    # again on them (the coarsening's rebuild).
    d = rng.uniform(0.5, 2.0, size=A.shape[0])
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    A2 = sp.csr_matrix((A.data * d[rows] * d[A.indices], A.indices, A.indptr), shape=A.shape)
    solve = jax.jit(
        lambda data, rhs: jaxamg.solve(
            jsparse.BCSR((data, A.indices, A.indptr), shape=A.shape),
            rhs,
            block_dim=3,
            config=classical(),
        )
    )
    for M in (A, A2):
        x, info = solve(M.data, b)
        assert int(info["status"]) == 0
        assert relative_error(x, spla.spsolve(M.tocsc(), b)) < 1e-7
    x32, info32 = jaxamg.solve(
        A.astype(np.float32), b.astype(np.float32), block_dim=3, config=classical(1e-5)
    )
    assert int(info32["status"]) == 0 and x32.dtype == np.float32
    assert relative_error(x32, spla.spsolve(A.tocsc(), b)) < 1e-3
