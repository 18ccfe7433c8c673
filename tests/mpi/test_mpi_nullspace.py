"""Singular systems in MPI mode: pure-Neumann Poisson problems with declared
null spaces, each rank holding its rows of the basis. The distributed
solution equals the serial `jaxamg.solve(..., nullspace=...)` and the dense
pseudo-inverse solution; the reported inconsistency equals the serial one;
gradients equal the serial ones and the pseudo-inverse formulas; a bad basis
on one rank raises on every rank. Also the global sum primitive itself."""

import functools

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from jax.experimental import sparse as jsparse  # noqa: E402
from mpi_testing import (  # noqa: E402
    assert_all,
    assert_all_raise,
    config,
    local_block,
    needs_native_mpi,
    split_rows,
)

import jaxamg  # noqa: E402

pytestmark = needs_native_mpi

RTOL = 1e-8  # solves converge to a relative residual of 1e-12


def neumann_1d(m):
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m)).tolil()
    T[0, 0] = T[m - 1, m - 1] = 1.0
    return T.tocsr()


def neumann_poisson(shape):
    """Pure-Neumann Laplacian on a grid (a Kronecker sum): null(A) = null(A^T)
    = the constants."""
    total = None
    for axis in range(len(shape)):
        factors = [sp.eye(m) for m in shape]
        factors[axis] = neumann_1d(shape[axis])
        term = functools.reduce(sp.kron, factors)
        total = term if total is None else total + term
    A = sp.csr_matrix(total)
    A.sort_indices()
    return A


def problem(name):
    """(global matrix, global (n, k) basis, spec passed per rank or None for
    'constant')."""
    if name == "2d":
        A = neumann_poisson((9, 7))
        return A, np.ones((A.shape[0], 1)), "constant"
    if name == "3d":
        A = neumann_poisson((5, 4, 4))
        return A, np.ones((A.shape[0], 1)), "constant"
    # Two disconnected Neumann grids: a two-column null space (indicators).
    A1, A2 = neumann_poisson((6, 5)), neumann_poisson((7, 4))
    A = sp.csr_matrix(sp.block_diag([A1, A2]))
    A.sort_indices()
    basis = np.zeros((A.shape[0], 2))
    basis[: A1.shape[0], 0] = 1.0
    basis[A1.shape[0] :, 1] = 1.0
    return A, basis, None


def gather(comm, local):
    return np.concatenate(comm.allgather(np.asarray(local)))


def relative(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


def setup(comm, rng, name, equal):
    rank, size = comm.Get_rank(), comm.Get_size()
    A_global, basis, spec = problem(name)
    n = A_global.shape[0]
    rs, re = split_rows(n, size, rng, equal)[rank]
    local_spec = basis[rs:re] if spec is None else spec
    return A_global, basis, local_spec, (rs, re), n


CFG = config(True, "amg")


# --------------------------------------------------------------------------
# The global sum


def test_allreduce_sum_eager_jit_and_gradient(comm):
    from jaxamg._dist.reduce import allreduce_sum

    rank, handle = comm.Get_rank(), comm.py2f()
    x = jnp.linspace(0.0, 1.0, 5) * (rank + 1) + rank
    expected = sum(comm.allgather(np.asarray(x)))
    eager = allreduce_sum(x, handle)
    jitted = jax.jit(lambda v: allreduce_sum(v, handle))(x)
    ok = np.array_equal(np.asarray(eager), expected)
    ok = ok and np.array_equal(np.asarray(jitted), expected)
    # Every rank gets the same bits.
    ok = ok and all(np.array_equal(v, np.asarray(eager)) for v in comm.allgather(np.asarray(eager)))
    assert_all(comm, ok, "allreduce_sum differs from the gathered sum")

    # d/dx_r of sum_r' c_r' . (sum_s x_s)^2 = 2 (sum_r' c_r') (sum_s x_s).
    c = float(rank + 1)
    loss = lambda v: jnp.sum(c * allreduce_sum(v, handle) ** 2)  # noqa: E731
    total_c = sum(comm.allgather(c))
    want = 2 * total_c * expected
    for g in (jax.grad(loss)(x), jax.jit(jax.grad(loss))(x)):
        assert_all(comm, np.allclose(np.asarray(g), want, rtol=1e-14), "gradient")


def test_allreduce_sum_shape_mismatch_raises_everywhere(comm):
    from jaxamg._dist.reduce import allreduce_sum

    if comm.Get_size() < 2:
        pytest.skip("a mismatch between ranks needs two ranks")
    size = 4 if comm.Get_rank() == comm.Get_size() - 1 else 3
    assert_all_raise(
        comm,
        Exception,
        lambda: jax.block_until_ready(allreduce_sum(jnp.ones(size), comm.py2f())),
        match="different sizes",
    )


# --------------------------------------------------------------------------
# Forward: serial, pseudo-inverse, orthogonality, inconsistency


@pytest.mark.parametrize("name", ["2d", "3d", "two-blocks"])
@pytest.mark.parametrize("equal", [True, False], ids=["equal", "unequal"])
def test_solution_equals_serial_and_pinv(comm, rng, name, equal):
    A_global, basis, spec, (rs, re), n = setup(comm, rng, name, equal)
    dense = A_global.toarray()
    pinv = np.linalg.pinv(dense, rtol=1e-10)
    # Inconsistent b: a random vector has a component in null(A^T).
    b_global = rng.standard_normal(n)
    A = local_block(A_global, rs, re)
    jaxamg.with_cache(A, is_symmetric=True)
    x, info = jaxamg.solve(
        A,
        jnp.asarray(b_global[rs:re]),
        comm=comm,
        nglobal=n,
        partition_info=(rs, re),
        config=CFG,
        nullspace=spec,
    )
    x_global = gather(comm, x)

    G = jsparse.BCSR.from_scipy_sparse(A_global)
    serial_spec = "constant" if isinstance(spec, str) else basis
    x_serial, info_serial = jaxamg.solve(
        G, jnp.asarray(b_global), config=CFG, nullspace=serial_spec, transpose_nullspace=serial_spec
    )

    ok = int(info["status"]) == 0
    assert_all(
        comm,
        relative(x_global, pinv @ b_global) <= RTOL,
        f"x vs pinv: {relative(x_global, pinv @ b_global):.2e}",
    )
    assert_all(
        comm,
        relative(x_global, x_serial) <= RTOL,
        f"x vs serial: {relative(x_global, x_serial):.2e}",
    )
    # Orthogonal to the null space, globally.
    coefficients = basis.T @ x_global
    assert_all(
        comm,
        np.max(np.abs(coefficients)) <= 1e-10 * np.linalg.norm(x_global),
        f"N^T x = {coefficients}",
    )
    # The removed fraction of b, the same on every rank and equal to serial.
    removed = basis @ np.linalg.lstsq(basis, b_global, rcond=None)[0]
    expected = np.linalg.norm(removed) / np.linalg.norm(b_global)
    values = comm.allgather(info["rhs_inconsistency"])
    assert_all(comm, len(set(values)) == 1, f"rhs_inconsistency per rank: {values}")
    assert_all(
        comm,
        abs(info["rhs_inconsistency"] - expected) <= 1e-12,
        f"{info['rhs_inconsistency']} vs {expected}",
    )
    assert_all(
        comm,
        abs(info["rhs_inconsistency"] - info_serial["rhs_inconsistency"]) <= 1e-12,
        f"{info['rhs_inconsistency']} vs serial {info_serial['rhs_inconsistency']}",
    )
    assert_all(comm, ok, f"status {info['status']}")


def test_consistent_rhs_has_zero_inconsistency(comm, rng):
    A_global, basis, spec, (rs, re), n = setup(comm, rng, "2d", equal=True)
    b_global = rng.standard_normal(n)
    b_global -= b_global.mean()
    A = local_block(A_global, rs, re)
    x, info = jaxamg.solve(
        A,
        jnp.asarray(b_global[rs:re]),
        comm=comm,
        nglobal=n,
        partition_info=(rs, re),
        config=CFG,
        nullspace=spec,
        transpose_nullspace=spec,
    )
    x_global = gather(comm, x)
    pinv = np.linalg.pinv(A_global.toarray(), rtol=1e-10)
    assert_all(comm, info["rhs_inconsistency"] <= 1e-14, f"{info['rhs_inconsistency']}")
    assert_all(comm, relative(A_global @ x_global, b_global) <= 1e-10, "residual")
    assert_all(comm, relative(x_global, pinv @ b_global) <= RTOL, "x vs pinv")


@pytest.mark.parametrize("equal", [True, False], ids=["equal", "unequal"])
def test_jit_equals_eager(comm, rng, equal):
    A_global, basis, spec, (rs, re), n = setup(comm, rng, "2d", equal)
    b = jnp.asarray(rng.standard_normal(n)[rs:re])
    A = local_block(A_global, rs, re)

    def run(values, rhs):
        M = jsparse.BCSR((values, A.indices, A.indptr), shape=A.shape)
        return jaxamg.solve(
            M,
            rhs,
            comm=comm,
            nglobal=n,
            partition_info=(rs, re),
            config=CFG,
            nullspace=spec,
            transpose_nullspace=spec,
        )

    x_eager, info_eager = run(A.data, b)
    x_jit, info_jit = jax.jit(run)(A.data, b)
    assert_all(comm, relative(gather(comm, x_jit), gather(comm, x_eager)) <= 1e-12, "x")
    assert_all(
        comm,
        abs(float(info_jit["rhs_inconsistency"]) - info_eager["rhs_inconsistency"]) <= 1e-14,
        "inconsistency",
    )


def test_vmap_over_right_hand_sides(comm, rng):
    A_global, basis, spec, (rs, re), n = setup(comm, rng, "two-blocks", equal=False)
    B_global = rng.standard_normal((3, n))
    A = local_block(A_global, rs, re)

    def run(rhs):
        return jaxamg.solve(
            A,
            rhs,
            comm=comm,
            nglobal=n,
            partition_info=(rs, re),
            config=CFG,
            nullspace=spec,
            transpose_nullspace=spec,
        )

    X, info = jax.vmap(run)(jnp.asarray(B_global[:, rs:re]))
    pinv = np.linalg.pinv(A_global.toarray(), rtol=1e-10)
    X_global = np.concatenate(comm.allgather(np.asarray(X)), axis=1)
    assert_all(comm, relative(X_global, B_global @ pinv.T) <= RTOL, "vmap x vs pinv")
    removed = basis @ np.linalg.lstsq(basis, B_global.T, rcond=None)[0]
    expected = np.linalg.norm(removed, axis=0) / np.linalg.norm(B_global, axis=1)
    got = np.asarray(info["rhs_inconsistency"])
    assert_all(
        comm,
        got.shape == (3,) and np.allclose(got, expected, rtol=0, atol=1e-12),
        f"{got} vs {expected}",
    )


def test_basis_attached_with_cache(comm, rng):
    """with_cache(A_local, nullspace=...) on every rank: the solve's default."""
    A_global, basis, spec, (rs, re), n = setup(comm, rng, "two-blocks", equal=False)
    b_global = rng.standard_normal(n)
    A = local_block(A_global, rs, re)
    jaxamg.with_cache(A, nullspace=spec, transpose_nullspace=spec)
    x, info = jaxamg.solve(
        A, jnp.asarray(b_global[rs:re]), comm=comm, nglobal=n, partition_info=(rs, re), config=CFG
    )
    pinv = np.linalg.pinv(A_global.toarray(), rtol=1e-10)
    assert_all(comm, relative(gather(comm, x), pinv @ b_global) <= RTOL, "x vs pinv")
    assert_all(comm, "rhs_inconsistency" in info, "no rhs_inconsistency")


def test_cached_metadata_with_singular_defaults(comm, rng):
    """cache_mpi_metadata(singular=True): the singular config defaults
    (block-Jacobi coarse sweeps) with the default AMG; then a solve needs
    only the basis."""
    from jaxamg.config import prepare_config

    A_global, basis, spec, (rs, re), n = setup(comm, rng, "3d", equal=False)
    b_global = rng.standard_normal(n)
    A = local_block(A_global, rs, re)
    meta = jaxamg.cache_mpi_metadata(
        {"tolerance": 1e-12, "max_iters": 200},
        comm,
        n,
        (rs, re),
        A,
        is_symmetric=True,
        singular=True,
    )
    expected = prepare_config({"tolerance": 1e-12, "max_iters": 200}, mpi=True, singular=True)
    assert_all(comm, meta["singular"] and meta["config_str"] == expected, "singular config")
    jaxamg.with_cache(A, mpi=meta)
    x, info = jaxamg.solve(A, jnp.asarray(b_global[rs:re]), nullspace=spec)
    pinv = np.linalg.pinv(A_global.toarray(), rtol=1e-10)
    assert_all(
        comm,
        relative(gather(comm, x), pinv @ b_global) <= RTOL,
        f"x vs pinv: {relative(gather(comm, x), pinv @ b_global):.2e}",
    )


# --------------------------------------------------------------------------
# Gradients


def null_preserving_directions(A_global, rng, count):
    """Random perturbations dA of the edge weights on A's pattern (as value
    arrays of the sorted CSR): dA_ij = dA_ji = -t, dA_ii = dA_jj = +t per
    edge, so dA 1 = 0 and 1^T dA = 0 (both null spaces are kept, which is
    what matrix gradients of a singular solve assume)."""
    A = sp.csr_matrix(A_global)
    A.sort_indices()
    n = A.shape[0]
    coo = sp.triu(A, k=1).tocoo()
    directions = []
    for _ in range(count):
        t = rng.standard_normal(coo.nnz)
        off = sp.coo_matrix((-t, (coo.row, coo.col)), shape=(n, n))
        dA = off + off.T - sp.diags(np.asarray((off + off.T).sum(axis=1)).ravel())
        # Values on A's pattern, in A's order (every entry of dA is nonzero).
        dA = sp.csr_matrix(sp.csr_matrix(dA) + 0 * A)
        dA.sort_indices()
        assert np.array_equal(dA.indices, A.indices)
        directions.append(dA.data.copy())
    return directions


@pytest.mark.parametrize("name", ["2d", "3d"])
@pytest.mark.parametrize("equal", [True, False], ids=["equal", "unequal"])
def test_gradients_equal_serial_and_pinv(comm, rng, name, equal):
    A_global, basis, spec, (rs, re), n = setup(comm, rng, name, equal)
    A_global = sp.csr_matrix(A_global)
    A_global.sort_indices()
    b_global = rng.standard_normal(n)
    w_global = rng.standard_normal(n)
    A = local_block(A_global, rs, re)
    w = jnp.asarray(w_global[rs:re])

    def local_loss(values, rhs):
        M = jsparse.BCSR((values, A.indices, A.indptr), shape=A.shape)
        x, _ = jaxamg.solve(
            M,
            rhs,
            comm=comm,
            nglobal=n,
            partition_info=(rs, re),
            config=CFG,
            nullspace=spec,
            transpose_nullspace=spec,
        )
        return jnp.sum(w * x)

    b = jnp.asarray(b_global[rs:re])
    g_data, g_b = jax.grad(local_loss, argnums=(0, 1))(A.data, b)
    g_data_jit, g_b_jit = jax.jit(jax.grad(local_loss, argnums=(0, 1)))(A.data, b)

    G = jsparse.BCSR.from_scipy_sparse(A_global)

    def serial_loss(values, rhs):
        M = jsparse.BCSR((values, G.indices, G.indptr), shape=G.shape)
        x, _ = jaxamg.solve(
            M, rhs, config=CFG, nullspace="constant", transpose_nullspace="constant"
        )
        return jnp.sum(jnp.asarray(w_global) * x)

    s_data, s_b = jax.grad(serial_loss, argnums=(0, 1))(G.data, jnp.asarray(b_global))

    # d/db of w^T A^+ b = (A^T)^+ w.
    pinv = np.linalg.pinv(A_global.toarray(), rtol=1e-10)
    lam = pinv.T @ w_global
    x_ref = pinv @ b_global
    for gb in (g_b, g_b_jit):
        gb_global = gather(comm, gb)
        assert_all(
            comm, relative(gb_global, s_b) <= RTOL, f"db vs serial: {relative(gb_global, s_b):.2e}"
        )
        assert_all(
            comm, relative(gb_global, lam) <= RTOL, f"db vs pinv: {relative(gb_global, lam):.2e}"
        )

    # Matrix values: directional derivatives along perturbations that keep
    # the null spaces, d/dt w^T (A + t dA)^+ b = -lam^T dA x, against serial.
    offset = int(A_global.indptr[rs])
    for direction in null_preserving_directions(A_global, rng, 3):
        local_dir = direction[offset : offset + int(A.nse)]
        expected = -lam @ (
            sp.csr_matrix((direction, A_global.indices, A_global.indptr), shape=A_global.shape)
            @ x_ref
        )
        serial = float(np.dot(np.asarray(s_data), direction))
        for gd in (g_data, g_data_jit):
            value = sum(comm.allgather(float(np.dot(np.asarray(gd), local_dir))))
            scale = max(abs(expected), 1e-300)
            assert_all(
                comm,
                abs(value - expected) <= RTOL * scale * 10,
                f"<dA, grad> {value} vs pinv {expected}",
            )
            assert_all(
                comm,
                abs(value - serial) <= RTOL * scale * 10,
                f"<dA, grad> {value} vs serial {serial}",
            )


# --------------------------------------------------------------------------
# Bad input: every rank raises the same error


_SAME = object()


def solve_with(comm, rng, nullspace, transpose_nullspace=_SAME):
    A_global, basis, spec, (rs, re), n = setup(comm, rng, "2d", equal=True)
    A = local_block(A_global, rs, re)
    b = jnp.ones(re - rs)
    t = nullspace if transpose_nullspace is _SAME else transpose_nullspace
    return lambda: jaxamg.solve(
        A,
        b,
        comm=comm,
        nglobal=n,
        partition_info=(rs, re),
        config=CFG,
        nullspace=nullspace,
        transpose_nullspace=t,
    )


def local_rows(comm, rng):
    A_global = problem("2d")[0]
    return split_rows(A_global.shape[0], comm.Get_size(), rng, True)[comm.Get_rank()]


def last(comm):
    return comm.Get_rank() == comm.Get_size() - 1


def test_wrong_shaped_basis_on_one_rank_raises_everywhere(comm, rng):
    rs, re = local_rows(comm, rng)
    rows = re - rs + (1 if last(comm) else 0)
    assert_all_raise(
        comm, ValueError, solve_with(comm, rng, np.ones((rows, 1))), match="`nullspace` must be"
    )


def test_column_counts_differ_across_ranks(comm, rng):
    if comm.Get_size() < 2:
        pytest.skip("a mismatch between ranks needs two ranks")
    rs, re = local_rows(comm, rng)
    k = 2 if last(comm) else 1
    basis = np.ones((re - rs, k))
    if k == 2:
        basis[:, 1] = np.arange(re - rs)
    assert_all_raise(comm, ValueError, solve_with(comm, rng, basis), match="disagree")


def test_non_finite_basis_on_one_rank_raises_everywhere(comm, rng):
    rs, re = local_rows(comm, rng)
    basis = np.ones((re - rs, 1))
    if last(comm):
        basis[0, 0] = np.nan
    assert_all_raise(comm, ValueError, solve_with(comm, rng, basis), match="finite")


def test_globally_dependent_columns_raise_everywhere(comm, rng):
    """Columns independent on no rank alone but dependent globally, and the
    reverse: the verdict is taken on the global Gram matrix."""
    rs, re = local_rows(comm, rng)
    basis = np.ones((re - rs, 2))
    basis[:, 1] = 3.0
    assert_all_raise(comm, ValueError, solve_with(comm, rng, basis), match="dependent")
    if comm.Get_size() > 1:
        # On one row per rank the columns are dependent locally, yet
        # independent globally: no error.
        rank = comm.Get_rank()
        basis = np.ones((re - rs, 2))
        basis[:, 1] = rank
        x, _ = solve_with(comm, rng, basis, transpose_nullspace=basis)()
        assert_all(comm, bool(np.all(np.isfinite(np.asarray(x)))), "finite x")


def test_bad_string_raises_everywhere(comm, rng):
    assert_all_raise(comm, ValueError, solve_with(comm, rng, "linear"), match="'constant'")
