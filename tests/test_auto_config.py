"""`config="auto"`: the choice follows the matrix and the call (symmetric or
not, scalar or block, a declared null space), is reported in `info`, and the
solves it makes are right: solutions against SciPy or the pseudo-inverse,
gradients against central differences, eager and under jit."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from helpers import assert_grads_match_central_differences, relative_error, weighted_poisson2d
from jax.experimental.sparse import BCSR

import jaxamg
from jaxamg.config import auto_config, uses_dense_lu_coarse_solver


@pytest.fixture(autouse=True)
def x64():
    with jax.enable_x64(True):
        yield


def _bcsr(A):
    return BCSR.from_scipy_sparse(sp.csr_matrix(A))


@pytest.mark.parametrize(
    ("symmetric", "solver", "base"),
    [(True, "PCG", "PCG_CLASSICAL_AGG1_CHEBY2"), (False, "FGMRES", "FGMRES_CLASSICAL_MCGS")],
)
def test_a_scalar_system_gets_classical_amg_and_the_krylov_method_its_symmetry_allows(
    symmetric, solver, base
):
    rng = np.random.default_rng(21 + symmetric)
    A = weighted_poisson2d(36, symmetric, rng).tocsr()
    b = rng.standard_normal(A.shape[0])
    x, info = jaxamg.solve(_bcsr(A), jnp.asarray(b), config="auto", tolerance=1e-10)
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
    assert relative_error(np.asarray(x), spla.spsolve(A.tocsc(), b)) < 1e-8
    check = "symmetric (checked)" if symmetric else "nonsymmetric (checked)"
    assert info["config_choice"].startswith(f"{solver} + AMG from {base}: {check}")
    config, description = auto_config(_bcsr(A))
    assert description == info["config_choice"] and config["solver"]["solver"] == solver


def test_a_matrix_equal_to_its_transpose_only_to_rounding_counts_as_symmetric():
    rng = np.random.default_rng(5)
    A = weighted_poisson2d(12, True, rng).tocsr()
    noisy = A.copy()
    noisy.data = noisy.data * (1 + 1e-15 * rng.standard_normal(noisy.nnz))
    assert "symmetric (checked)" in auto_config(_bcsr(noisy))[1]
    skewed = A.copy()
    skewed.data[3] *= 1 + 1e-6
    assert "nonsymmetric (checked)" in auto_config(_bcsr(skewed))[1]


def test_under_jit_the_values_are_not_checked_and_fgmres_solves_and_differentiates():
    rng = np.random.default_rng(8)
    A = weighted_poisson2d(20, True, rng).tocsr()
    indices, indptr = jnp.asarray(A.indices), jnp.asarray(A.indptr)
    w = jnp.asarray(rng.standard_normal(A.shape[0]))

    def solve(data, b):
        M = BCSR((data, indices, indptr), shape=A.shape)
        return jaxamg.solve(M, b, config="auto", tolerance=1e-12, max_iters=200)

    data, b = jnp.asarray(A.data), jnp.asarray(rng.standard_normal(A.shape[0]))
    x, info = jax.jit(solve)(data, b)
    assert "config_choice" not in info  # info holds arrays only under jit
    assert int(info["status"]) == int(jaxamg.AMGXStatus.SUCCESS)
    assert relative_error(np.asarray(x), spla.spsolve(A.tocsc(), np.asarray(b))) < 1e-9
    traced = jax.jit(lambda d: auto_config(BCSR((d, indices, indptr), shape=A.shape))[1])
    with pytest.raises(TypeError):  # a string cannot leave jit: ask outside it
        traced(data)

    def loss(data, b):
        return jnp.dot(w, solve(data, b)[0])

    g_data, g_b = jax.jit(jax.grad(loss, argnums=(0, 1)))(data, b)
    assert_grads_match_central_differences(jax.jit(loss), data, b, g_data, g_b, rng)


def test_a_declared_symmetric_matrix_gets_pcg_without_a_check():
    rng = np.random.default_rng(9)
    A = weighted_poisson2d(10, True, rng).tocsr()
    M = jaxamg.with_cache(_bcsr(A), is_symmetric=True)
    config, description = auto_config(M)
    assert description.startswith("PCG + AMG from PCG_CLASSICAL_AGG1_CHEBY2: symmetric (declared)")
    assert config["solver"]["solver"] == "PCG"


@pytest.mark.parametrize("given_modes", [False, True])
def test_a_block_system_gets_smoothed_aggregation(given_modes):
    rng = np.random.default_rng(31 + given_modes)
    P = weighted_poisson2d(16, True, rng).tocsr()
    coupling = np.array([[2.0, 0.7], [0.7, 1.5]])
    A = sp.kron(P, coupling).tocsr()
    n = A.shape[0]
    b = rng.standard_normal(n)
    modes = np.kron(np.ones((n // 2, 1)), np.eye(2)) if given_modes else None
    x, info = jaxamg.solve(
        _bcsr(A), jnp.asarray(b), config="auto", block_dim=2, near_nullspace=modes, tolerance=1e-10
    )
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
    assert relative_error(np.asarray(x), spla.spsolve(A.tocsc(), b)) < 1e-8
    modes_text = "the given near null space" if given_modes else "constant modes"
    assert info["config_choice"] == (
        "PCG + AMG from PCG_SA_NEAR_NULLSPACE: symmetric (checked); "
        f"block_dim=2: smoothed aggregation with {modes_text}"
    )


def test_a_declared_null_space_gets_a_coarse_solver_that_handles_it():
    # Pure Neumann: the constant is the null space of A and of A^T.
    rng = np.random.default_rng(41)
    A = weighted_poisson2d(24, True, rng).tolil()
    A.setdiag(0.0)
    A = A.tocsr()
    A = (A - sp.diags(np.asarray(A.sum(axis=1)).ravel())).tocsr()  # zero row sums
    A = -A  # positive semidefinite
    n = A.shape[0]
    b = rng.standard_normal(n)
    x, info = jaxamg.solve(
        jaxamg.with_cache(_bcsr(A), is_symmetric=True),
        jnp.asarray(b),
        config="auto",
        nullspace="constant",
        tolerance=1e-10,
    )
    reference = np.linalg.lstsq(A.toarray(), b - b.mean(), rcond=None)[0]
    reference -= reference.mean()  # the pseudo-inverse solution
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
    assert relative_error(np.asarray(x), reference) < 1e-7
    assert info["config_choice"].startswith("PCG + AMG from PCG_CLASSICAL_AGG1_CHEBY2: symmetric")
    assert info["config_choice"].endswith(
        "declared null space: block-Jacobi sweeps on the coarsest level"
    )
    config, _ = auto_config(_bcsr(A), singular=True)
    assert not uses_dense_lu_coarse_solver(jaxamg.config.to_json(config))


def test_auto_is_refused_where_no_matrix_chooses_it():
    rng = np.random.default_rng(3)
    A = _bcsr(weighted_poisson2d(6, True, rng))
    with pytest.raises(jaxamg.ConfigError) as raised:
        jaxamg.config.prepare_config("auto", mpi=True)
    assert str(raised.value) == (
        "`config='auto'` is chosen per matrix by `jaxamg.solve` on one process; here (an MPI "
        "or sharded solve, or a preconditioner) pass a config dict or a shipped config's name, "
        "e.g. the one `jaxamg.config.auto_config(A)` picks."
    )
    assert "symmetric (checked)" in auto_config(A)[1]
