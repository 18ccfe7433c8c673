"""Singular systems: null-space bases, projections and NullSpaceWarning, and
jaxamg.solve with `nullspace`/`transpose_nullspace` against independent
references: the dense pseudo-inverse (numpy.linalg.pinv), least squares
(numpy.linalg.lstsq) and central finite differences of pinv-based losses."""

import functools
import importlib.util
import pathlib
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg import NullSpaceWarning, matrices
from jaxamg.config import prepare_config, uses_dense_lu_coarse_solver
from jaxamg.nullspace import as_nullspace_basis, project_out, relative_norm, validate_basis

jax.config.update("jax_enable_x64", True)

TIGHT = {"tolerance": 1e-12, "max_iters": 300}
DEMO = pathlib.Path(__file__).resolve().parents[1] / "demo" / "singular_poisson_stretched_grid.py"


# --------------------------------------------------------------------------
# Problems


def neumann_1d(m: int) -> sp.csr_matrix:
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m)).tolil()
    T[0, 0] = T[m - 1, m - 1] = 1.0
    return T.tocsr()


def neumann_poisson(shape) -> sp.csr_matrix:
    """The pure-Neumann Laplacian on a grid (a Kronecker sum); null space and
    transpose null space: the constants."""
    total = None
    for axis, m in enumerate(shape):
        factors = [sp.eye(k) for k in shape]
        factors[axis] = neumann_1d(m)
        term = functools.reduce(sp.kron, factors)
        total = term if total is None else total + term
    A = sp.csr_matrix(total)
    A.sort_indices()
    return A


def weighted_laplacian(m: int, weights: np.ndarray) -> sp.csr_matrix:
    """Graph Laplacian of the m x m grid with the given edge weights."""
    idx = np.arange(m * m).reshape(m, m)
    p = np.concatenate([idx[:, :-1].ravel(), idx[:-1, :].ravel()])
    q = np.concatenate([idx[:, 1:].ravel(), idx[1:, :].ravel()])
    W = sp.csr_matrix((weights, (p, q)), shape=(m * m, m * m))
    W = W + W.T
    return sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W)


def bcsr(A: sp.csr_matrix) -> jsparse.BCSR:
    A = sp.csr_matrix(A)
    A.sort_indices()
    return jsparse.BCSR.from_scipy_sparse(A)


def dense(A: jsparse.BCSR) -> np.ndarray:
    return np.asarray(A.todense(), dtype=np.float64)


def stretched(nx, ny, stretch, normalize=True):
    A, V = matrices.poisson_matrix_stretched(
        nx, ny, stretch, normalize=normalize, dtype=jnp.float64
    )
    return A, np.asarray(V)


def build(name: str):
    """(A as BCSR, N, M, solve kwargs) for a named singular problem."""
    if name == "neumann2d":
        A = bcsr(neumann_poisson((12, 12)))
        ones = np.ones((A.shape[0], 1))
        return A, ones, ones, {"nullspace": "constant", "transpose_nullspace": "constant"}
    if name == "neumann3d":
        A = bcsr(neumann_poisson((6, 6, 5)))
        ones = np.ones((A.shape[0], 1))
        return A, ones, ones, {"nullspace": "constant", "transpose_nullspace": "constant"}
    if name == "stretched":
        A, V = stretched(16, 12, 1.08)
        return (
            A,
            np.ones((A.shape[0], 1)),
            V[:, None],
            {"nullspace": "constant", "transpose_nullspace": V},
        )
    if name == "stretched_flux":
        A, _ = stretched(16, 12, 1.08, normalize=False)
        ones = np.ones((A.shape[0], 1))
        return A, ones, ones, {"nullspace": "constant", "transpose_nullspace": "constant"}
    if name == "random_weights":
        # D^-1 L_w with random edge weights and a random positive D:
        # null(A) = span(1), null(A^T) = span(diag(D)).
        gen = np.random.default_rng(20260829)
        m = 11
        L = weighted_laplacian(m, gen.uniform(0.2, 3.0, size=2 * m * (m - 1)))
        d = gen.uniform(0.5, 2.0, size=m * m)
        A = bcsr(sp.diags(1 / d) @ L)
        return (
            A,
            np.ones((m * m, 1)),
            d[:, None],
            {"nullspace": "constant", "transpose_nullspace": d},
        )
    raise KeyError(name)


def pinv(D: np.ndarray) -> np.ndarray:
    """The pseudo-inverse with an explicit cut-off: the null-space singular
    values of these matrices are ~1e-15 relative, on either side of NumPy's
    default cut-off depending on the LAPACK build, and must be dropped."""
    return np.linalg.pinv(D, rtol=1e-10)


@functools.cache
def pinv_of(name: str) -> np.ndarray:
    return pinv(dense(build(name)[0]))


PROBLEMS = ["neumann2d", "neumann3d", "stretched", "stretched_flux", "random_weights"]


def without_range_component(b: np.ndarray, M: np.ndarray) -> np.ndarray:
    """b minus its least-squares fit by the columns of M (numpy.linalg.lstsq)."""
    return b - M @ np.linalg.lstsq(M, b, rcond=None)[0]


# --------------------------------------------------------------------------
# Bases, projections, norms (no solves)


def test_basis_normalisation():
    n = 7
    ones = as_nullspace_basis("constant", n, jnp.float64)
    assert ones.shape == (n, 1) and ones.dtype == jnp.float64
    np.testing.assert_array_equal(np.asarray(ones), np.ones((n, 1)))
    np.testing.assert_array_equal(
        np.asarray(as_nullspace_basis("Constant", n, jnp.float32)), np.ones((n, 1), np.float32)
    )
    assert as_nullspace_basis(None, n, jnp.float64) is None
    v = np.arange(1.0, n + 1)
    np.testing.assert_array_equal(np.asarray(as_nullspace_basis(v, n, jnp.float64)), v[:, None])
    B = np.arange(3 * n).reshape(n, 3)  # integers are cast
    out = as_nullspace_basis(B, n, jnp.float32)
    assert out.shape == (n, 3) and out.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(out), B.astype(np.float32))
    out = as_nullspace_basis(jnp.asarray(B, jnp.float32), n, jnp.float64)
    assert out.dtype == jnp.float64


@pytest.mark.parametrize(
    "spec, match",
    [
        ("ones", "string 'ones'"),
        (np.ones(6), r"shape \(6,\)"),
        (np.ones((7, 0)), r"shape \(7, 0\)"),
        (np.ones((7, 8)), r"shape \(7, 8\)"),
        (np.ones((7, 2, 1)), r"shape \(7, 2, 1\)"),
        (np.ones(7, dtype=np.complex128), "complex128"),
        (np.array(["a"] * 7), "dtype"),
    ],
)
@pytest.mark.parametrize("name", ["nullspace", "transpose_nullspace"])
def test_basis_rejected_naming_the_argument(spec, match, name):
    with pytest.raises(ValueError, match=match) as excinfo:
        as_nullspace_basis(spec, 7, jnp.float64, name)
    assert f"`{name}`" in str(excinfo.value)


def test_validate_basis(rng):
    B = rng.normal(size=(30, 3))
    validate_basis(jnp.asarray(B), "nullspace")  # independent: no error
    for bad in (np.nan, np.inf, -np.inf):
        C = B.copy()
        C[4, 1] = bad
        with pytest.raises(ValueError, match="finite") as excinfo:
            validate_basis(C, "transpose_nullspace")
        assert "`transpose_nullspace`" in str(excinfo.value)
    dependent = np.column_stack([B[:, 0], B[:, 1], B[:, 0] - 2.5 * B[:, 1]])
    nearly = np.column_stack([B[:, 0], B[:, 0] * (1 + 1e-12 * rng.normal(size=30))])
    zero = np.column_stack([B[:, 0], np.zeros(30)])
    for C in (dependent, nearly, zero):
        with pytest.raises(ValueError, match="dependent"):
            validate_basis(C, "nullspace")


def test_solve_rejects_invalid_bases():
    A = bcsr(neumann_poisson((4, 4)))
    b = jnp.ones(16)
    with pytest.raises(ValueError, match="finite"):
        jaxamg.solve(A, b, nullspace=np.full(16, np.nan))
    with pytest.raises(ValueError, match="dependent") as excinfo:
        jaxamg.solve(
            A,
            b,
            nullspace="constant",
            transpose_nullspace=np.column_stack([np.ones(16), 2 * np.ones(16)]),
        )
    assert "`transpose_nullspace`" in str(excinfo.value)
    with pytest.raises(ValueError, match="`nullspace`"):
        jaxamg.solve(A, b, nullspace="zero")


@pytest.mark.parametrize("k", [1, 3])
def test_project_out_matches_lstsq(rng, k):
    n = 40
    B = rng.normal(size=(n, k))
    v = rng.normal(size=n)
    out = np.asarray(project_out(jnp.asarray(v), jnp.asarray(B)))
    np.testing.assert_allclose(out, without_range_component(v, B), rtol=1e-12, atol=1e-12)
    assert np.abs(B.T @ out).max() < 1e-12 * np.linalg.norm(v) * np.linalg.norm(B)
    batch = rng.normal(size=(5, n))
    out = np.asarray(project_out(jnp.asarray(batch), jnp.asarray(B)))
    for row, v in zip(out, batch):
        np.testing.assert_allclose(row, without_range_component(v, B), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype, rtol", [(jnp.float64, 1e-12), (jnp.float32, 1e-5)])
@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_extreme_basis_scales_project_like_ordinary_ones(rng, scale, dtype, rtol):
    n = 20
    B = rng.normal(size=(n, 2))
    v = rng.normal(size=n)
    basis = as_nullspace_basis(B * scale, n, dtype)  # a float64 basis, cast to `dtype`
    assert basis.dtype == dtype
    validate_basis(basis)
    out = project_out(jnp.asarray(v, dtype), basis)
    np.testing.assert_allclose(np.asarray(out), without_range_component(v, B), rtol=rtol, atol=rtol)


def test_relative_norm(rng):
    d, v = rng.normal(size=9), rng.normal(size=9)
    assert float(relative_norm(jnp.asarray(d), jnp.asarray(v))) == pytest.approx(
        np.linalg.norm(d) / np.linalg.norm(v), rel=1e-14
    )
    assert float(relative_norm(jnp.asarray(d), jnp.zeros(9))) == 0.0
    D, V = rng.normal(size=(3, 9)), rng.normal(size=(3, 9))
    np.testing.assert_allclose(
        np.asarray(relative_norm(jnp.asarray(D), jnp.asarray(V))),
        np.linalg.norm(D, axis=1) / np.linalg.norm(V, axis=1),
        rtol=1e-14,
    )


def test_singular_config_defaults():
    import json

    amg = json.loads(prepare_config(singular=True))["solver"]["preconditioner"]
    assert amg["solver"] == "AMG"
    assert isinstance(amg["coarse_solver"], dict)
    assert amg["coarse_solver"]["solver"] == "BLOCK_JACOBI"
    assert amg["min_coarse_rows"] == 8
    assert "dense_lu_num_rows" not in amg
    assert not uses_dense_lu_coarse_solver(prepare_config(singular=True))
    assert uses_dense_lu_coarse_solver(prepare_config(singular=False))
    explicit = prepare_config(
        {"preconditioner": {"solver": "AMG", "coarse_solver": "DENSE_LU_SOLVER"}}, singular=True
    )
    assert uses_dense_lu_coarse_solver(explicit)
    # The engine is told, at the top level, that the system is singular.
    assert json.loads(explicit)["x_singular_system"] == 1
    assert "x_singular_system" not in json.loads(prepare_config(singular=False))


# --------------------------------------------------------------------------
# The stretched grid


@pytest.mark.parametrize("stretch", [1.0, 1.07])
def test_stretched_grid_null_vectors(stretch):
    nx, ny = 7, 5
    n = nx * ny
    A, V = stretched(nx, ny, stretch)
    L, V_flux = stretched(nx, ny, stretch, normalize=False)
    Ad, Ld = dense(A), dense(L)
    np.testing.assert_array_equal(V, V_flux)
    assert V.shape == (n,) and np.all(V > 0) and V.sum() == pytest.approx(1.0, rel=1e-14)
    scale = np.abs(Ad).max()
    assert np.abs(Ad @ np.ones(n)).max() < 1e-13 * scale
    assert np.abs(Ad.T @ V).max() < 1e-13 * scale * V.max()
    np.testing.assert_allclose(Ad, Ld / V[:, None], rtol=1e-14)
    np.testing.assert_array_equal(Ld, Ld.T)
    assert np.abs(Ld @ np.ones(n)).max() < 1e-13 * np.abs(Ld).max()
    assert np.linalg.matrix_rank(Ad) == n - 1 and np.linalg.matrix_rank(Ld) == n - 1
    if stretch == 1.0:
        np.testing.assert_allclose(V, np.full(n, 1 / n), rtol=1e-14)
        np.testing.assert_allclose(Ad, Ad.T, rtol=1e-14)
    else:
        assert np.abs(Ad - Ad.T).max() > 1e-3 * scale
    # Heights grow by `stretch` row by row; unknown j*nx + i is cell (i, j).
    heights = V.reshape(ny, nx)[:, 0] * nx
    np.testing.assert_allclose(heights[1:] / heights[:-1], stretch, rtol=1e-13)
    # Two-point fluxes are exact for a field linear in y: the flux through
    # every horizontal face is dx, so L y vanishes inside and is -dx / +dx
    # on the bottom / top rows; a field constant in y is in the null space.
    centres = np.cumsum(heights) - heights / 2
    y = np.repeat(centres, nx)
    expected = np.zeros((ny, nx))
    expected[0], expected[-1] = -1 / nx, 1 / nx
    np.testing.assert_allclose((Ld @ y).reshape(ny, nx), expected, atol=1e-13)
    # Periodic in x: neighbours i-1 and i+1 wrap around.
    assert Ld[0, nx - 1] < 0 and Ld[0, 1] < 0 and Ld[0, 2] == 0


def test_stretched_grid_stretch_is_traceable():
    f = jax.jit(lambda s: matrices.poisson_matrix_stretched(8, 6, s, dtype=jnp.float64)[0].data)
    np.testing.assert_allclose(
        np.asarray(f(1.05)), np.asarray(stretched(8, 6, 1.05)[0].data), rtol=1e-14
    )
    with pytest.raises(ValueError, match="nx"):
        matrices.poisson_matrix_stretched(2, 4, 1.0)
    with pytest.raises(ValueError, match="stretch"):
        matrices.poisson_matrix_stretched(4, 4, -1.0)


# --------------------------------------------------------------------------
# Solves against the pseudo-inverse


@pytest.mark.parametrize("consistent", [True, False], ids=["consistent", "inconsistent"])
@pytest.mark.parametrize("name", PROBLEMS)
def test_forward_is_the_pseudo_inverse_solution(rng, name, consistent):
    A, N, M, kwargs = build(name)
    n = A.shape[0]
    b = without_range_component(rng.normal(size=n), M)
    if not consistent:  # add a component in null(A^T) of 30% of |b|
        part = M @ rng.normal(size=M.shape[1])
        b = b + 0.3 * np.linalg.norm(b) * part / np.linalg.norm(part)
    removed = np.linalg.norm(b - without_range_component(b, M)) / np.linalg.norm(b)
    x, info = jaxamg.solve(A, jnp.asarray(b), **kwargs, **TIGHT)
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
    x = np.asarray(x)
    reference = pinv_of(name) @ b
    assert np.linalg.norm(x - reference) <= 1e-8 * np.linalg.norm(reference)
    assert np.abs(N.T @ x).max() <= 1e-12 * np.linalg.norm(N) * np.linalg.norm(x)
    assert isinstance(info["rhs_inconsistency"], float)
    assert info["rhs_inconsistency"] == pytest.approx(removed, rel=1e-9, abs=1e-15)
    if consistent:
        assert info["rhs_inconsistency"] < 1e-14
    else:
        assert info["rhs_inconsistency"] > 0.2


@pytest.mark.parametrize("name", ["neumann2d", "stretched", "random_weights"])
def test_gradient_wrt_b_is_the_transposed_pseudo_inverse(rng, name):
    A, _, _, kwargs = build(name)
    n = A.shape[0]
    b, w, c = rng.normal(size=n), rng.normal(size=n) + 0.5, rng.uniform(0.5, 2.0, size=n)

    def loss(rhs):
        x, _ = jaxamg.solve(A, rhs, **kwargs, **TIGHT)
        return jnp.dot(jnp.asarray(w), x) + 0.5 * jnp.sum(jnp.asarray(c) * x**2)

    g = np.asarray(jax.grad(loss)(jnp.asarray(b)))
    P = pinv_of(name)
    reference = P.T @ (w + c * (P @ b))
    assert np.linalg.norm(g - reference) <= 1e-8 * np.linalg.norm(reference)


def flux_perturbation(A: jsparse.BCSR, weights_of, rng) -> np.ndarray:
    """A direction in A's stored values that keeps both null spaces: for
    A = diag(s) L, the values of diag(s) dL with dL a random weighted graph
    Laplacian on A's off-diagonal pattern (dL 1 = 0, dL symmetric)."""
    n = A.shape[0]
    indptr, indices = np.asarray(A.indptr), np.asarray(A.indices)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    upper = rows < indices
    W = sp.csr_matrix(
        (rng.uniform(0.5, 1.5, size=upper.sum()), (rows[upper], indices[upper])), shape=(n, n)
    )
    W = W + W.T
    dL = (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W).toarray()
    dA = dL * weights_of[:, None]
    return dA[rows, indices]


@pytest.mark.parametrize("direction", ["scaling", "flux"])
@pytest.mark.parametrize("problem", ["stretched", "random_weights"])
def test_gradient_wrt_matrix_values_matches_finite_differences(rng, problem, direction):
    if problem == "stretched":
        A, V = stretched(10, 8, 1.1)
        row_scale, kwargs = 1 / V, {"nullspace": "constant", "transpose_nullspace": V}
    else:
        gen = np.random.default_rng(7)
        m = 8
        L = weighted_laplacian(m, gen.uniform(0.2, 3.0, size=2 * m * (m - 1)))
        d = gen.uniform(0.5, 2.0, size=m * m)
        A = bcsr(sp.diags(1 / d) @ L)
        row_scale, kwargs = 1 / d, {"nullspace": "constant", "transpose_nullspace": d}
    n = A.shape[0]
    data0 = np.asarray(A.data)
    if direction == "scaling":
        dv = data0.copy()
    else:
        dv = flux_perturbation(A, row_scale, rng)
        dv *= np.abs(data0).max() / np.abs(dv).max()
    b, w = rng.normal(size=n), rng.normal(size=n)
    rows = np.repeat(np.arange(n), np.diff(np.asarray(A.indptr)))

    def loss(values):
        M = jsparse.BCSR((values, A.indices, A.indptr), shape=A.shape)
        x, _ = jaxamg.solve(M, jnp.asarray(b), **kwargs, **TIGHT)
        return jnp.dot(jnp.asarray(w), jnp.sin(x))

    def loss_reference(values):
        D = np.zeros((n, n))
        np.add.at(D, (rows, np.asarray(A.indices)), values)
        return float(w @ np.sin(pinv(D) @ b))

    g = np.asarray(jax.grad(loss)(jnp.asarray(data0)))
    h = 1e-6
    fd = (loss_reference(data0 + h * dv) - loss_reference(data0 - h * dv)) / (2 * h)
    assert float(g @ dv) == pytest.approx(fd, rel=1e-6, abs=1e-9 * np.abs(g).sum())


def test_two_dimensional_null_space(rng):
    blocks = [neumann_poisson((6, 6)), neumann_poisson((5, 7))]
    A = bcsr(sp.block_diag(blocks, format="csr"))
    n = A.shape[0]
    N = np.zeros((n, 2))
    N[:36, 0] = 1.0
    N[36:, 1] = 1.0
    jaxamg.with_cache(A, is_symmetric=True)
    b, w = rng.normal(size=n), rng.normal(size=n)
    x, info = jaxamg.solve(A, jnp.asarray(b), nullspace=N, **TIGHT)
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
    P = pinv(dense(A))
    np.testing.assert_allclose(np.asarray(x), P @ b, rtol=0, atol=1e-8 * np.linalg.norm(P @ b))
    assert np.abs(N.T @ np.asarray(x)).max() < 1e-11 * np.linalg.norm(x)
    assert info["rhs_inconsistency"] == pytest.approx(
        np.linalg.norm(b - without_range_component(b, N)) / np.linalg.norm(b), rel=1e-9
    )
    g = jax.grad(lambda r: jnp.dot(jnp.asarray(w), jaxamg.solve(A, r, nullspace=N, **TIGHT)[0]))(
        jnp.asarray(b)
    )
    np.testing.assert_allclose(np.asarray(g), P.T @ w, rtol=0, atol=1e-8 * np.linalg.norm(P.T @ w))


def test_jit_equals_eager_also_with_a_traced_basis(rng):
    A, V = stretched(16, 12, 1.08)
    b = jnp.asarray(rng.normal(size=A.shape[0]))
    x_eager, info_eager = jaxamg.solve(A, b, nullspace="constant", transpose_nullspace=V, **TIGHT)

    @jax.jit
    def f(rhs, volumes):
        return jaxamg.solve(A, rhs, nullspace="constant", transpose_nullspace=volumes, **TIGHT)

    x_jit, info_jit = f(b, jnp.asarray(V))
    np.testing.assert_allclose(np.asarray(x_jit), np.asarray(x_eager), rtol=1e-13, atol=1e-15)
    assert float(info_jit["rhs_inconsistency"]) == pytest.approx(
        info_eager["rhs_inconsistency"], rel=1e-13
    )
    assert int(info_jit["iterations"]) == info_eager["iterations"]
    np.testing.assert_allclose(
        np.asarray(x_eager),
        pinv_of("stretched") @ np.asarray(b),
        rtol=0,
        atol=1e-8 * np.linalg.norm(x_eager),
    )


def test_vmap_over_b(rng):
    A, _, _, kwargs = build("stretched")
    B = rng.normal(size=(3, A.shape[0]))
    X, info = jax.vmap(lambda r: jaxamg.solve(A, r, **kwargs, **TIGHT))(jnp.asarray(B))
    reference = B @ pinv_of("stretched").T
    np.testing.assert_allclose(
        np.asarray(X), reference, rtol=0, atol=1e-8 * np.abs(reference).max()
    )
    assert info["rhs_inconsistency"].shape == (3,)


# --------------------------------------------------------------------------
# Warnings


def null_space_warnings(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, NullSpaceWarning)]


def test_missing_basis_warnings(rng):
    A, V = stretched(16, 12, 1.08)
    b = jnp.asarray(without_range_component(rng.normal(size=A.shape[0]), V[:, None]))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        jaxamg.solve(A, b, nullspace="constant", **TIGHT)
    (message,) = null_space_warnings(record)
    assert "`nullspace` is declared without `transpose_nullspace`" in message
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        jaxamg.solve(A, b, transpose_nullspace=V, max_iters=20)
    messages = null_space_warnings(record)
    assert any("`transpose_nullspace` is declared without `nullspace`" in m for m in messages)
    # Both declared, or a symmetric matrix with one: silent.
    L, _ = stretched(16, 12, 1.08, normalize=False)
    jaxamg.with_cache(L, is_symmetric=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NullSpaceWarning)
        jaxamg.solve(A, b, nullspace="constant", transpose_nullspace=V, **TIGHT)
        jaxamg.solve(L, b, nullspace="constant", **TIGHT)


def test_symmetric_matrix_fills_in_the_missing_basis(rng):
    L, _ = stretched(12, 10, 1.06, normalize=False)
    jaxamg.with_cache(L, is_symmetric=True)
    n = L.shape[0]
    P = pinv(dense(L))
    for given in ("nullspace", "transpose_nullspace"):
        b = rng.normal(size=n)  # inconsistent: only a filled-in M removes its mean
        with warnings.catch_warnings():
            warnings.simplefilter("error", NullSpaceWarning)
            x, info = jaxamg.solve(L, jnp.asarray(b), **{given: "constant"}, **TIGHT)
        assert info["status"] == jaxamg.AMGXStatus.SUCCESS
        reference = P @ b
        np.testing.assert_allclose(
            np.asarray(x), reference, rtol=0, atol=1e-8 * np.linalg.norm(reference)
        )
        assert abs(np.asarray(x).sum()) < 1e-12 * np.sqrt(n) * np.linalg.norm(x)
        assert info["rhs_inconsistency"] == pytest.approx(
            abs(b.mean()) * np.sqrt(n) / np.linalg.norm(b), rel=1e-9
        )


def test_singular_matrix_warning_eager_is_memoised(rng):
    S = neumann_poisson((8, 8))
    A = bcsr(S)
    b = jnp.asarray(without_range_component(rng.normal(size=64), np.ones((64, 1))))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        jaxamg.solve(A, b, max_iters=30)
        jaxamg.solve(A, b, max_iters=30)
    (message,) = null_space_warnings(record)
    assert "A·1 = 0" in message and "nullspace='constant'" in message
    # Another buffer with the same values is checked (and reported) again,
    # and so is a SciPy matrix.
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        jaxamg.solve(bcsr(S), b, max_iters=30)
        jaxamg.solve(S, b, max_iters=30)
        jaxamg.solve(S, b, max_iters=30)
    assert len(null_space_warnings(record)) == 2
    # Declared null space, or a nonsingular matrix: no warning.
    D = S + sp.eye(64) * 1e-3
    with warnings.catch_warnings():
        warnings.simplefilter("error", NullSpaceWarning)
        jaxamg.solve(bcsr(S), b, nullspace="constant", transpose_nullspace="constant", **TIGHT)
        jaxamg.solve(bcsr(D), b, **TIGHT)


def test_singular_matrix_warning_under_jit_fires_at_trace_time_once(rng):
    A = bcsr(neumann_poisson((8, 8)))
    b = jnp.asarray(without_range_component(rng.normal(size=64), np.ones((64, 1))))
    f = jax.jit(lambda r: jaxamg.solve(A, r, max_iters=30)[0])
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        f.lower(b)  # tracing only
    assert len(null_space_warnings(record)) == 1
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        f(b)
        f(b)
        jax.jit(lambda r: jaxamg.solve(A, r, max_iters=30)[0])(b)  # a new trace, same matrix
    assert null_space_warnings(record) == []


def test_basis_verification_warnings():
    A, V = stretched(16, 12, 1.08)
    b = jnp.asarray(np.zeros(A.shape[0]))
    # The bases swapped: neither spans its null space.
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _, info = jaxamg.solve(A, b, nullspace=V, transpose_nullspace="constant", max_iters=5)
    messages = null_space_warnings(record)
    assert any("`nullspace` does not span a null space of A:" in m for m in messages)
    assert any("`transpose_nullspace` does not span a null space of A^T" in m for m in messages)
    assert info["rhs_inconsistency"] == 0.0  # b = 0
    # Correct bases in float32 (coarser round-off), and in float64: silent.
    A32, V32 = matrices.poisson_matrix_stretched(16, 12, 1.08, dtype=jnp.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error", NullSpaceWarning)
        x, _ = jaxamg.solve(
            A32,
            jnp.ones(A.shape[0], jnp.float32),
            nullspace="constant",
            transpose_nullspace=V32,
            max_iters=5,
        )
        assert x.dtype == jnp.float32
        jaxamg.solve(A, b, nullspace=np.ones(A.shape[0]), transpose_nullspace=V, max_iters=5)


def test_dense_lu_coarse_solver_works_with_a_declared_null_space(rng):
    # A declared null space makes the dense LU pin its zero pivots: the tuned
    # config by name, a dense-LU coarse solve, and DENSE_LU_SOLVER as the whole
    # solver reach the pseudo-inverse solution, with no warning. Undeclared,
    # the singular matrix still raises, naming the pivot.
    An = neumann_poisson((24, 18))
    n = An.shape[0]
    A = bcsr(An)
    b = rng.normal(size=n)
    b -= b.mean()  # in the range (the transpose null space is the constants)
    ref = np.linalg.pinv(An.toarray()) @ b
    bases = {"nullspace": "constant", "transpose_nullspace": "constant"}
    dense_lu = {"preconditioner": {"solver": "AMG", "coarse_solver": "DENSE_LU_SOLVER"}}
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        for config in ("PCG_CLASSICAL_AGG1_CHEBY2", dense_lu):
            x, info = jaxamg.solve(A, jnp.asarray(b), config=config, **bases, **TIGHT)
            assert info["status"] == jaxamg.AMGXStatus.SUCCESS, (config, info)
            assert np.linalg.norm(np.asarray(x) - ref) < 1e-8 * np.linalg.norm(ref), config
        lu = {"config_version": 2, "solver": {"scope": "main", "solver": "DENSE_LU_SOLVER"}}
        x, info = jaxamg.solve(A, jnp.asarray(b), config=lu, **bases)
        assert np.linalg.norm(np.asarray(x) - ref) < 1e-9 * np.linalg.norm(ref)
    assert null_space_warnings(record) == []
    with pytest.raises(RuntimeError, match="DENSE_LU_SOLVER: the .* matrix is singular"):
        jaxamg.solve(A, jnp.asarray(b), config=lu)


def test_solve_uses_the_singular_defaults(rng):
    A = bcsr(neumann_poisson((9, 7)))
    jax.block_until_ready(
        jaxamg.solve(
            A,
            jnp.asarray(rng.normal(size=63)),
            nullspace="constant",
            transpose_nullspace="constant",
            **TIGHT,
        )
    )
    entries = [
        e for e in jaxamg.get_solver_cache_info()["single_gpu"]["entries"] if e["n_rows"] == 63
    ]
    assert entries
    amg = entries[-1]["config"]["solver"]["preconditioner"]
    assert amg["coarse_solver"]["solver"] == "BLOCK_JACOBI" and amg["min_coarse_rows"] == 8


def test_with_cache_attaches_the_bases(rng):
    A, V = stretched(16, 12, 1.08)
    assert jaxamg.with_cache(A, nullspace="constant", transpose_nullspace=V) is A
    assert A._nullspace == "constant" and A._transpose_nullspace is V
    b = rng.normal(size=A.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", NullSpaceWarning)
        x, info = jaxamg.solve(A, jnp.asarray(b), **TIGHT)
    assert "rhs_inconsistency" in info
    reference = pinv_of("stretched") @ b
    np.testing.assert_allclose(
        np.asarray(x), reference, rtol=0, atol=1e-8 * np.linalg.norm(reference)
    )
    # Explicit arguments win over attached ones.
    B, _ = stretched(16, 12, 1.08)
    jaxamg.with_cache(B, nullspace=V, transpose_nullspace="constant")  # wrong on purpose
    with warnings.catch_warnings():
        warnings.simplefilter("error", NullSpaceWarning)
        y, _ = jaxamg.solve(B, jnp.asarray(b), nullspace="constant", transpose_nullspace=V, **TIGHT)
    np.testing.assert_allclose(
        np.asarray(y), reference, rtol=0, atol=1e-8 * np.linalg.norm(reference)
    )


# --------------------------------------------------------------------------
# The engine target and the demo


def test_neumann_3d_24_cubed_converges_and_differentiates(rng):
    """Pure-Neumann 3-D Poisson, 24^3 unknowns, nullspace='constant' on a
    matrix marked symmetric, with the default solver (PBICGSTAB + classical
    AMG, singular coarse defaults)."""
    S = neumann_poisson((24, 24, 24))
    n = S.shape[0]
    A = jaxamg.with_cache(bcsr(S), is_symmetric=True)
    b = rng.normal(size=n)
    x, info = jaxamg.solve(A, jnp.asarray(b), nullspace="constant", tolerance=1e-8)
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
    x = np.asarray(x)
    b_range = b - b.mean()
    assert np.linalg.norm(S @ x - b_range) <= 1e-8 * np.linalg.norm(b_range)
    assert abs(x.sum()) <= 1e-12 * np.sqrt(n) * np.linalg.norm(x)
    # Gradients: with respect to b along a random direction (with a nonzero
    # mean, so an unprojected adjoint would show), and with respect to the
    # matrix along a scaling of one axis's couplings (keeps A 1 = 0 and the
    # symmetry), each against central differences of the solve.
    w = rng.normal(size=n) + 0.5
    indptr, indices = np.asarray(A.indptr), np.asarray(A.indices)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    along_z = np.abs(rows - indices) == 1
    dv = np.zeros_like(np.asarray(A.data))
    dv[along_z] = np.asarray(A.data)[along_z]
    diagonal = rows == indices
    dv[diagonal] = -np.bincount(rows[along_z], weights=dv[along_z], minlength=n)
    assert np.abs(sp.csr_matrix((dv, indices, indptr), shape=(n, n)) @ np.ones(n)).max() < 1e-12

    def loss(values, rhs):
        M = jaxamg.with_cache(
            jsparse.BCSR((values, A.indices, A.indptr), shape=A.shape), is_symmetric=True
        )
        y, _ = jaxamg.solve(M, rhs, nullspace="constant", tolerance=1e-12)
        return jnp.dot(jnp.asarray(w), jnp.sin(y))

    data0, b0 = A.data, jnp.asarray(b)
    g_values, g_b = jax.grad(loss, argnums=(0, 1))(data0, b0)
    db = rng.normal(size=n) + 0.3
    h = 1e-5
    fd_b = (loss(data0, b0 + h * db) - loss(data0, b0 - h * db)) / (2 * h)
    assert float(np.asarray(g_b) @ db) == pytest.approx(float(fd_b), rel=1e-6)
    fd_v = (loss(data0 + h * dv, b0) - loss(data0 - h * dv, b0)) / (2 * h)
    assert float(np.asarray(g_values) @ dv) == pytest.approx(float(fd_v), rel=1e-6)


def test_demo_runs_at_small_size():
    spec = importlib.util.spec_from_file_location("singular_demo", DEMO)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    results = demo.main(12, 9, stretches=(1.1,))
    for stretch, rows in results.items():
        for part in ("forward", "adjoint"):
            iterations, status, error = rows["null space"][part]
            assert status == jaxamg.AMGXStatus.SUCCESS, (stretch, part)
            assert error < 1e-8, (stretch, part, error)


def test_row_sum_check_on_the_device_equals_the_host_check():
    """The singularity check of GPU matrices runs where the values live; its
    two numbers equal the host computation (random values, an empty row),
    also while a jitted function closing over the matrix is traced."""
    import scipy.sparse as sp

    from jaxamg import nullspace as ns

    rng = np.random.default_rng(3)
    A = sp.random(400, 400, density=0.03, random_state=5, format="lil") + sp.eye(400)
    A[7, :] = 0
    A = sp.csr_matrix(A)
    A.data = rng.standard_normal(A.nnz)
    indptr, data = jnp.asarray(A.indptr.astype(np.int32)), jnp.asarray(A.data)
    residual, largest = ns._row_sum_extremes_on_device(indptr, data, 400)
    np.testing.assert_allclose(residual, np.abs(A.sum(axis=1)).max(), rtol=1e-12)
    np.testing.assert_allclose(largest, abs(A).sum(axis=1).max(), rtol=1e-12)

    @jax.jit
    def traced(b):
        inner = ns._row_sum_extremes_on_device(indptr, data, 400)
        np.testing.assert_allclose(inner, (residual, largest), rtol=0)
        return b

    traced(jnp.ones(3))
    # New values of the same shapes reuse the compiled check.
    from jaxamg._core import matrix as _matrix

    hits = _matrix._compiled.cache_info().hits
    ns._row_sum_extremes_on_device(indptr, 2.0 * data, 400)
    assert _matrix._compiled.cache_info().hits == hits + 1
