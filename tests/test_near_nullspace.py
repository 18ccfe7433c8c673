"""near_nullspace: smoothed aggregation built from the rigid-body modes of 2D
linear elasticity (assembled with scikit-fem). The solution matches SciPy's
spsolve, the modes cut the PCG iterations against the translations alone,
with_cache attaches them, different vectors get different setups, jit / vmap
/ grad keep working (the vectors are constants), and bad input is rejected
naming the argument."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import skfem
from jax.experimental import sparse as jsparse
from skfem.models.elasticity import lame_parameters, linear_elasticity

import jaxamg

jax.config.update("jax_enable_x64", True)

SA_CONFIG = {
    "config_version": 2,
    "solver": {
        "scope": "main",
        "solver": "PCG",
        "max_iters": 300,
        "tolerance": 1e-10,
        "convergence": "RELATIVE_INI_CORE",
        "monitor_residual": 1,
        "preconditioner": {
            "scope": "amg",
            "solver": "AMG",
            "algorithm": "AGGREGATION",
            "selector": "x_STANDARD",
            "x_smoothed_aggregation": 2,
            "max_iters": 1,
            "presweeps": 2,
            "postsweeps": 2,
            "min_coarse_rows": 2,
            "dense_lu_num_rows": 60,
            "smoother": {"scope": "jacobi", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.6},
        },
    },
}


def elasticity_2d(cells):
    """Q1 plane elasticity on the unit square clamped at x = 0: (A, coordinates
    of the free nodes), unknowns node-interleaved (block_dim=2)."""
    grid = np.linspace(0.0, 1.0, cells + 1)
    mesh = skfem.MeshQuad.init_tensor(grid, grid)
    basis = skfem.Basis(mesh, skfem.ElementVector(skfem.ElementQuad1()))
    assert np.array_equal(basis.nodal_dofs[0], 2 * np.arange(mesh.nvertices))
    K = skfem.asm(linear_elasticity(*lame_parameters(1.0, 0.3)), basis)
    clamped = basis.get_dofs(lambda x: np.isclose(x[0], 0.0)).all()
    free = np.setdiff1d(np.arange(basis.N), clamped)
    A = sp.csr_matrix(K[free][:, free])
    return A, mesh.p[:, free[::2] // 2].T


@pytest.fixture(scope="module")
def problem():
    A, coords = elasticity_2d(24)
    return A, jaxamg.rigid_body_modes(coords)


def test_rigid_modes_match_spsolve_and_beat_translations(problem, rng):
    A, B = problem
    b = rng.normal(size=A.shape[0])
    x, with_modes = jaxamg.solve(A, b, config=SA_CONFIG, block_dim=2, near_nullspace=B)
    _, translations = jaxamg.solve(A, b, config=SA_CONFIG, block_dim=2)
    print(
        f"PCG + SA: {with_modes['iterations']} iterations with the rigid modes, "
        f"{translations['iterations']} with the translations only"
    )
    assert with_modes["status"] == jaxamg.AMGXStatus.SUCCESS
    assert translations["status"] == jaxamg.AMGXStatus.SUCCESS
    ref = spla.spsolve(A.tocsc(), b)
    assert np.linalg.norm(np.asarray(x) - ref) <= 1e-8 * np.linalg.norm(ref)
    assert with_modes["iterations"] < translations["iterations"]


def test_rigid_modes_span_the_kernel_of_the_free_operator(problem):
    # Independent check of the modes: the unclamped stiffness annihilates them.
    grid = np.linspace(0.0, 1.0, 5)
    mesh = skfem.MeshQuad.init_tensor(grid, grid)
    basis = skfem.Basis(mesh, skfem.ElementVector(skfem.ElementQuad1()))
    K = skfem.asm(linear_elasticity(*lame_parameters(1.0, 0.3)), basis)
    modes = jaxamg.rigid_body_modes(mesh.p.T)
    assert np.abs(K @ modes).max() <= 1e-12 * abs(K).max()
    assert np.linalg.matrix_rank(modes) == 3


def test_with_cache_attaches_the_vectors(problem, rng):
    A, B = problem
    b = rng.normal(size=A.shape[0])
    M = jaxamg.with_cache(jsparse.BCSR.from_scipy_sparse(A), near_nullspace=B)
    _, attached = jaxamg.solve(M, jnp.asarray(b), config=SA_CONFIG, block_dim=2)
    _, explicit = jaxamg.solve(A, b, config=SA_CONFIG, block_dim=2, near_nullspace=B)
    assert attached["iterations"] == explicit["iterations"]


def test_different_vectors_get_different_setups(problem, rng):
    A, B = problem
    b = rng.normal(size=A.shape[0])
    jaxamg.clear_solver_cache()
    # Each call waits for the last: JAX dispatches asynchronously.
    _, full = jax.block_until_ready(
        jaxamg.solve(A, b, config=SA_CONFIG, block_dim=2, near_nullspace=B)
    )
    # Only the two translations: the engine's default near null space.
    _, partial = jax.block_until_ready(
        jaxamg.solve(A, b, config=SA_CONFIG, block_dim=2, near_nullspace=B[:, :2])
    )
    _, default = jax.block_until_ready(jaxamg.solve(A, b, config=SA_CONFIG, block_dim=2))
    entries = jaxamg.get_solver_cache_info()["single_gpu"]["entries"]
    assert len(entries) == 3
    assert partial["iterations"] == default["iterations"]
    assert full["iterations"] < partial["iterations"]


def test_jit_vmap_and_gradients_treat_the_vectors_as_constants(problem, rng):
    A, B = problem
    n = A.shape[0]
    M = jsparse.BCSR.from_scipy_sparse(A)
    Bj = jnp.asarray(B)
    w = rng.normal(size=n)

    def loss(values, rhs):
        Ad = jsparse.BCSR((values, M.indices, M.indptr), shape=M.shape)
        x, _ = jaxamg.solve(Ad, rhs, config=SA_CONFIG, block_dim=2, near_nullspace=Bj)
        return jnp.dot(x, w)

    b = jnp.asarray(rng.normal(size=n))
    g_vals, g_b = jax.jit(jax.grad(loss, argnums=(0, 1)))(M.data, b)
    # Reference: lambda = A^-T w, d/db = lambda, d/dA_ij = -lambda_i x_j.
    lam = spla.spsolve(A.T.tocsc(), w)
    x = spla.spsolve(A.tocsc(), np.asarray(b))
    assert np.linalg.norm(np.asarray(g_b) - lam) <= 1e-7 * np.linalg.norm(lam)
    coo = A.tocoo()
    ref_vals = -lam[coo.row] * x[coo.col]
    got = sp.csr_matrix((np.asarray(g_vals), M.indices, M.indptr), shape=A.shape).tocoo()
    got_dense = dict(zip(zip(got.row, got.col), got.data))
    ref_dense = np.array([got_dense[(i, j)] for i, j in zip(coo.row, coo.col)])
    assert np.linalg.norm(ref_dense - ref_vals) <= 1e-7 * np.linalg.norm(ref_vals)

    rhs = jnp.asarray(rng.normal(size=(3, n)))
    xs, info = jax.vmap(
        lambda r: jaxamg.solve(M, r, config=SA_CONFIG, block_dim=2, near_nullspace=Bj)
    )(rhs)
    for k in range(3):
        ref = spla.spsolve(A.tocsc(), np.asarray(rhs[k]))
        assert np.linalg.norm(np.asarray(xs[k]) - ref) <= 1e-8 * np.linalg.norm(ref)
    assert np.all(np.asarray(info["status"]) == 0)


@pytest.mark.parametrize(
    "make, kind, words",
    [
        (lambda B: B[:-2], ValueError, ["near_nullspace", "rows", "one row per unknown"]),
        (lambda B: B[:, 0], ValueError, ["near_nullspace", "2-D", "reshape(-1, 1)"]),
        (lambda B: B[None], ValueError, ["near_nullspace", "2-D", "(1, "]),
        (
            lambda B: np.where(np.arange(B.shape[0])[:, None] == 5, np.nan, B),
            ValueError,
            ["near_nullspace", "nan", "finite"],
        ),
        (
            lambda B: np.column_stack([B, B[:, 0] + 2 * B[:, 2]]),
            ValueError,
            ["near_nullspace", "rank 3", "linearly independent"],
        ),
        (lambda B: B[:, :0], ValueError, ["near_nullspace", "0 columns"]),
        (lambda B: B.astype(complex), TypeError, ["near_nullspace", "complex"]),
    ],
)
def test_bad_vectors_are_rejected_naming_the_argument(problem, make, kind, words):
    A, B = problem
    b = np.ones(A.shape[0])
    with pytest.raises(kind) as e:
        jaxamg.solve(A, b, config=SA_CONFIG, block_dim=2, near_nullspace=make(B))
    for word in words:
        assert word in str(e.value), str(e.value)


def test_with_cache_validates_the_vectors(problem):
    A, B = problem
    with pytest.raises(ValueError, match="with_cache.*near_nullspace.*rows"):
        jaxamg.with_cache(jsparse.BCSR.from_scipy_sparse(A), near_nullspace=B[:10])


def test_a_config_that_ignores_the_vectors_is_rejected(problem):
    A, B = problem
    with pytest.raises(
        ValueError, match="near_nullspace.*does not use them.*x_smoothed_aggregation 2"
    ):
        jaxamg.solve(A, np.ones(A.shape[0]), block_dim=2, near_nullspace=B)
