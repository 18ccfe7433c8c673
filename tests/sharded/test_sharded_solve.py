"""Sharded solves against independent references: the serial solution and
adjoint (SciPy spsolve), finite differences of the global loss, and the
eager call against the compiled one. Needs the native MPI module."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse.linalg as spla
from jax.experimental import sparse as jsparse
from mpi_testing import (
    assert_all,
    assert_all_raise,
    block_matrix,
    config,
    nonsymmetric_matrix,
    spd_matrix,
)
from sharded_problems import local_block, partition

import jaxamg
from jaxamg.matrices import poisson_operator
from jaxamg.mpi_utils import get_partition_info, partition_operator

pytestmark = pytest.mark.usefixtures("native_mpi")

RTOL = 1e-8  # the solves converge to a relative residual of 1e-12


def _close(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    return float(np.linalg.norm(got - ref)) <= RTOL * max(float(np.linalg.norm(ref)), 1e-300)


def _setup(comm, symmetric=True, unequal=False, n=60, block_dim=1, seed=0):
    rng = np.random.default_rng(seed)
    if block_dim > 1:
        M = block_matrix(n // block_dim, rng, symmetric)
    else:
        M = spd_matrix(n, rng) if symmetric else nonsymmetric_matrix(n, rng)
    starts = partition(n, comm.size, unequal, block_dim)
    rs, re = starts[comm.rank], starts[comm.rank + 1]
    b_global = rng.standard_normal(n)
    b = jaxamg.make_sharded_vector(b_global[rs:re], global_size=n)
    A = jaxamg.make_sharded_matrix(local_block(M, starts, comm.rank), b)
    solver = jaxamg.make_sharded_solver(
        A, b, config=config(symmetric), block_dim=block_dim, is_symmetric=symmetric
    )
    return M, b_global, (rs, re), A, b, solver


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("unequal", [False, True])
def test_solution_equals_serial_and_jit_equals_eager(comm, symmetric, unequal):
    M, b_global, (rs, re), A, b, solver = _setup(comm, symmetric, unequal)
    x_ref = spla.spsolve(M.tocsc(), b_global)
    x, info = solver(b)
    assert_all(comm, x.sharding == b.sharding and x.shape == b.shape, str(x.sharding))
    shard = np.asarray(x.addressable_shards[0].data)
    assert_all(comm, _close(shard[: re - rs], x_ref[rs:re]), "x differs from spsolve")
    assert_all(comm, not np.any(shard[re - rs :]), "padding of x is not zero")
    assert_all(comm, _close(solver.local_vector(x), x_ref[rs:re]), "local_vector")
    for key, dtype in (("iterations", jnp.int32), ("status", jnp.int32), ("residual", jnp.float64)):
        assert_all(
            comm,
            info[key].shape == (comm.size,) and info[key].dtype == dtype,
            f"{key}: {info[key].shape} {info[key].dtype}",
        )
    assert_all(comm, info["residual_history"].shape[0] == comm.size, "history rows")
    assert_all(
        comm,
        all(isinstance(v, jax.Array) for v in info.values()),
        f"info types {[type(v) for v in info.values()]}",
    )
    status = int(np.asarray(info["status"].addressable_shards[0].data)[0])
    assert_all(comm, status == int(jaxamg.AMGXStatus.SUCCESS), f"status {status}")
    with jax.set_mesh(A.mesh):
        x_jit, info_jit = jax.jit(lambda d, r: solver(r, A=d))(A.data, b)
    assert_all(comm, _close(solver.local_vector(x_jit), solver.local_vector(x)), "jit != eager")
    its = np.asarray(info_jit["iterations"].addressable_shards[0].data)
    its_eager = np.asarray(info["iterations"].addressable_shards[0].data)
    assert_all(comm, np.array_equal(its, its_eager), f"iterations {its} vs {its_eager}")


def test_matrix_gradient_under_jit_exchanges_by_all_to_all(comm):
    """Inside shard_map the matrix gradient's off-rank x_j travel by
    jax.lax.all_to_all (an XLA collective), not by the MPI gather target;
    the gradient equals the serial one (test_gradients_equal_serial)."""
    if comm.size == 1:
        pytest.skip("one process has no off-rank columns")
    M, b_global, (rs, re), A, b, solver = _setup(comm, False, True, seed=2)

    def loss(data, rhs):
        return jnp.sum(solver(rhs, A=data)[0] ** 2)

    with jax.set_mesh(A.mesh):
        text = jax.jit(jax.grad(loss)).lower(A.data, b).as_text()
    assert_all(comm, "all_to_all" in text, "no all_to_all in the jitted gradient")
    assert_all(comm, "jaxamg_mpi_gather_columns" not in text, "the MPI gather is still used")


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("unequal", [False, True])
def test_gradients_equal_serial(comm, symmetric, unequal):
    M, b_global, (rs, re), A, b, solver = _setup(comm, symmetric, unequal, seed=1)
    n = M.shape[0]
    w_global = np.random.default_rng(7).standard_normal(n)
    w = jaxamg.make_sharded_vector(w_global[rs:re], global_size=n)

    # Global arrays enter compiled functions as arguments (JAX does not let a
    # jitted function close over arrays of other processes).
    def loss(data, rhs, weights):
        x, _ = solver(rhs, A=data)
        return jnp.sum(x * weights) + 0.5 * jnp.sum(x**2)

    x_ref = spla.spsolve(M.tocsc(), b_global)
    lam = spla.spsolve(M.T.tocsc(), w_global + x_ref)
    block = local_block(M, partition(n, comm.size, unequal), comm.rank).tocoo()
    grad_data_ref = -lam[block.row + rs] * x_ref[block.col]
    with jax.set_mesh(A.mesh):
        eager = jax.grad(loss, argnums=(0, 1))(A.data, b, w)
        compiled = jax.jit(jax.grad(loss, argnums=(0, 1)))(A.data, b, w)
    for label, (g_data, g_b) in (("eager", eager), ("jit", compiled)):
        local = A.local_matrix(g_data)
        assert_all(comm, _close(local.data, grad_data_ref), f"{label} dL/dA.data")
        padding = np.asarray(g_data.addressable_shards[0].data)[A.local_nnz :]
        assert_all(comm, not np.any(padding), f"{label}: gradient of padded slots")
        assert_all(comm, _close(solver.local_vector(g_b), lam[rs:re]), f"{label} dL/db")


@pytest.mark.parametrize("symmetric", [True, False])
def test_block_system(comm, symmetric):
    M, b_global, (rs, re), A, b, solver = _setup(
        comm, symmetric, unequal=True, n=48, block_dim=2, seed=2
    )
    x, _ = solver(b)
    x_ref = spla.spsolve(M.tocsc(), b_global)
    assert_all(comm, _close(solver.local_vector(x), x_ref[rs:re]), "block x")

    def loss(rhs, data):
        x, _ = solver(rhs, A=data)
        return 0.5 * jnp.sum(x**2)

    with jax.set_mesh(A.mesh):
        g_b = jax.jit(jax.grad(loss))(b, A.data)
    lam = spla.spsolve(M.T.tocsc(), x_ref)
    assert_all(comm, _close(solver.local_vector(g_b), lam[rs:re]), "block dL/db")


def test_vmap_over_stacked_right_hand_sides(comm):
    M, b_global, (rs, re), A, b, solver = _setup(comm, True, unequal=True, seed=3)
    other = 2.0 * b_global + 1.0
    b2 = jaxamg.make_sharded_vector(other[rs:re], global_size=M.shape[0])
    with jax.set_mesh(A.mesh):
        xs, infos = jax.vmap(lambda rhs: solver(rhs, A=A.data))(jnp.stack((b, b2)))
    local = np.asarray(solver.local_vector(xs))
    ok = _close(local[0], spla.spsolve(M.tocsc(), b_global)[rs:re])
    ok = ok and _close(local[1], spla.spsolve(M.tocsc(), other)[rs:re])
    assert_all(comm, ok, "vmap lanes differ from spsolve")
    assert_all(comm, infos["iterations"].shape == (2, comm.size), str(infos["iterations"].shape))


def test_initial_guess(comm):
    M, b_global, (rs, re), A, b, _ = _setup(comm, True, seed=4)
    # An absolute criterion: a relative one would be relative to the (tiny)
    # initial residual of the warm start.
    cfg = config(True)
    cfg["solver"].update(convergence="ABSOLUTE", tolerance=1e-10)
    solver = jaxamg.make_sharded_solver(A, b, config=cfg, is_symmetric=True)
    x_ref = spla.spsolve(M.tocsc(), b_global)
    x0 = jaxamg.make_sharded_vector(x_ref[rs:re], global_size=M.shape[0])
    cold = solver(b)[1]["iterations"]
    x, warm = solver(b, x0)
    assert_all(comm, _close(solver.local_vector(x), x_ref[rs:re]), "x with x0")
    cold_its = int(np.asarray(cold.addressable_shards[0].data)[0])
    warm_its = int(np.asarray(warm["iterations"].addressable_shards[0].data)[0])
    assert_all(comm, warm_its < cold_its, f"warm {warm_its} vs cold {cold_its}")


def test_local_matrix_as_A(comm):
    M, b_global, (rs, re), A, b, solver = _setup(comm, False, unequal=True, seed=5)
    block = local_block(M, partition(M.shape[0], comm.size, True), comm.rank)
    scaled = jsparse.BCSR.from_scipy_sparse(2.0 * block)
    x, _ = solver(b, A=scaled)
    x_ref = spla.spsolve(M.tocsc(), b_global) / 2.0
    assert_all(comm, _close(solver.local_vector(x), x_ref[rs:re]), "x for A=2*A_local")
    dense = np.asarray(block.toarray())
    dense[dense == 0] = 0.5  # a different (denser) structure
    assert_all_raise(comm, ValueError, lambda: solver(b, A=dense), match="sparsity structure")
    assert_all_raise(comm, ValueError, lambda: solver(b, A=block[:-1]), match="local shape")

    def traced(d, rhs):
        M_t = jsparse.BCSR(
            (d, jnp.asarray(block.indices), jnp.asarray(block.indptr)), shape=block.shape
        )
        return solver(rhs, A=M_t)[0]

    with jax.set_mesh(A.mesh):
        assert_all_raise(
            comm,
            ValueError,
            lambda: jax.jit(traced)(jnp.asarray(block.data), b),
            match="traced values",
        )


def test_call_errors(comm):
    M, b_global, (rs, re), A, b, solver = _setup(comm, True, seed=6)
    with jax.set_mesh(A.mesh):
        assert_all_raise(
            comm,
            ValueError,
            lambda: jax.jit(lambda r: solver(r)[0])(b),
            match="A must be passed explicitly",
        )
        assert_all_raise(
            comm,
            ValueError,
            lambda: jax.grad(lambda r: jnp.sum(solver(r)[0]))(b),
            match="A must be passed explicitly",
        )
        assert_all_raise(
            comm,
            ValueError,
            lambda: jax.jit(lambda d, r: solver(r, A=d, save_stats_file="s.txt")[0])(A.data, b),
            match="direct solver call",
        )
    assert_all_raise(comm, ValueError, lambda: solver(b.astype(jnp.float32)), match="dtype")
    assert_all_raise(comm, ValueError, lambda: solver(jnp.stack((b, b))), match="jax.vmap")
    assert_all_raise(
        comm,
        ValueError,
        lambda: solver(b, A=jaxamg.make_sharded_vector(np.ones(3))),
        match="has shape",
    )
    assert_all_raise(comm, ValueError, lambda: solver(b, A=A.data, A_data=A.data), match="once")


def test_save_stats_file(comm, tmp_path_factory):
    M, b_global, (rs, re), A, b, _ = _setup(comm, True, seed=7)
    path = comm.bcast(str(tmp_path_factory.mktemp("stats") / "stats.txt"))
    solver = jaxamg.make_sharded_solver(A, b, config=config(True), save_stats=True)
    solver(b, save_stats_file=path)
    if comm.rank == 0:
        text = open(path).read()
        ok = "AMG GRID STATISTICS" in text and "SOLVER ITERATIONS" in text
    else:
        ok = True
    assert_all(comm, ok, "stats file")
    plain = jaxamg.make_sharded_solver(A, b, config=config(True))
    warned = False
    try:
        with pytest.warns(UserWarning, match="save_stats=True"):
            plain(b, save_stats_file=path)
        warned = True
    except BaseException:  # noqa: BLE001 - the verdict is shared below
        warned = False
    assert_all(comm, warned, "no warning without save_stats")


def _poisson_setup(comm, n):
    N = n * n
    rs, re, n_local = get_partition_info(N, comm.rank, comm.size)

    def local_operator(skew):
        return partition_operator(poisson_operator(skew), N, comm.rank, comm.size)[0]

    b = jaxamg.make_sharded_vector(
        np.random.default_rng(0).standard_normal(N)[rs:re], global_size=N
    )
    coloring = jaxamg.cache_coloring(local_operator(0.0), shape=(n_local, N))
    A = jaxamg.make_sharded_matrix(jaxamg.with_cache(local_operator(0.0), coloring=coloring), b)
    return N, (rs, re), local_operator, A, b


def test_operator_parameter_gradient_is_global(comm):
    """d loss / d skew through solver(rhs, A=local_operator(skew)): eager and
    jit agree, and both equal a central difference of the serial loss (the
    per-rank parameter cotangents are summed)."""
    n = 8
    N, (rs, re), local_operator, A, b = _poisson_setup(comm, n)
    solver = jaxamg.make_sharded_solver(A, b, config=config(False))
    b_global = np.concatenate(comm.allgather(np.asarray(solver.local_vector(b))))
    x_target_global = np.random.default_rng(9).standard_normal(N)
    x_target = jaxamg.make_sharded_vector(x_target_global[rs:re], global_size=N)

    def serial_loss(skew):
        cols = np.asarray(jax.vmap(poisson_operator(skew))(jnp.eye(N))).T
        x = np.linalg.solve(cols, b_global)
        return float(np.sum((x - x_target_global) ** 2) / N)

    def loss(skew, rhs, xt):
        x, _ = solver(rhs, A=local_operator(skew))
        return jnp.sum((x - xt) ** 2) / N

    skew, h = 1.5, 1e-5
    fd = (serial_loss(skew + h) - serial_loss(skew - h)) / (2 * h)
    with jax.set_mesh(A.mesh):
        value, grad = jax.value_and_grad(loss)(skew, b, x_target)
        value_jit, grad_jit = jax.jit(jax.value_and_grad(loss))(skew, b, x_target)
    ok = abs(float(value) - serial_loss(skew)) <= 1e-8 * abs(serial_loss(skew))
    assert_all(comm, ok, f"loss {float(value)} vs {serial_loss(skew)}")
    assert_all(comm, abs(float(grad) - fd) <= 1e-5 * abs(fd), f"eager grad {float(grad)} vs {fd}")
    assert_all(
        comm,
        abs(float(grad_jit) - float(grad)) <= 1e-10 * abs(fd),
        f"jit grad {float(grad_jit)} vs eager {float(grad)}",
    )
    assert_all(comm, abs(float(value_jit) - float(value)) <= 1e-12, "jit loss")


def test_sharded_closed_over_value_is_rejected_under_jit(comm):
    n = 6
    N, (rs, re), local_operator, A, b = _poisson_setup(comm, n)
    solver = jaxamg.make_sharded_solver(A, b, config=config(False))

    def loss(scale_vector, rhs):
        op = local_operator(0.0)

        def scaled(x):
            return op(x) * (1.0 + 0.0 * jnp.sum(scale_vector * scale_vector))

        jaxamg.with_cache(scaled, coloring=A._coloring_info)
        return jnp.sum(solver(rhs, A=scaled)[0])

    with jax.set_mesh(A.mesh):
        assert_all_raise(
            comm, ValueError, lambda: jax.jit(jax.grad(loss))(b, b), match="identical on every rank"
        )
