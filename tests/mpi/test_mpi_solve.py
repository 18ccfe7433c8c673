"""The distributed solve against SciPy's direct solve of the global system:
1-4 ranks, equal and unequal partitions, scalar and 2x2 blocks, symmetric
and nonsymmetric; jit equals eager; cached metadata; callables; x0; info."""

import os

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402
from jax.experimental import sparse as jsparse  # noqa: E402
from mpi_testing import (  # noqa: E402
    assert_all,
    block_matrix,
    config,
    global_max,
    local_block,
    needs_native_mpi,
    nonsymmetric_matrix,
    relative,
    spd_matrix,
    split_rows,
)

import jaxamg  # noqa: E402
from jaxamg import matrices  # noqa: E402

pytestmark = needs_native_mpi


def distributed(comm, A_global, b_global, bounds, **kwargs):
    rank = comm.Get_rank()
    rs, re = bounds[rank]
    n = A_global.shape[0]
    A = local_block(A_global, rs, re)
    return jaxamg.solve(
        A, jnp.asarray(b_global[rs:re]), comm=comm, nglobal=n, partition_info=(rs, re), **kwargs
    ), (rs, re)


@pytest.mark.parametrize("preconditioner", ["jacobi", "amg"])
@pytest.mark.parametrize("equal", [True, False], ids=["equal", "unequal"])
@pytest.mark.parametrize("kind", ["symmetric", "nonsymmetric", "block-sym", "block-nonsym"])
def test_distributed_solve_equals_spsolve(comm, rng, kind, equal, preconditioner, monkeypatch):
    # With GPU arrays: the device's distributed solve (JAXAMG_GPU_DIST).
    monkeypatch.setenv("JAXAMG_GPU_DIST", "device")
    size = comm.Get_size()
    if kind.startswith("block"):
        m = 40
        A = block_matrix(m, rng, symmetric=kind == "block-sym")
        block_dim = 2
        bounds = [(2 * a, 2 * b) for a, b in split_rows(m, size, rng, equal)]
    else:
        n = 120
        A = spd_matrix(n, rng) if kind == "symmetric" else nonsymmetric_matrix(n, rng)
        block_dim = 1
        bounds = split_rows(n, size, rng, equal)
    b = rng.standard_normal(A.shape[0])
    reference = spla.spsolve(A.tocsc(), b)
    symmetric = kind in ("symmetric", "block-sym")
    (x, info), (rs, re) = distributed(
        comm, A, b, bounds, block_dim=block_dim, config=config(symmetric, preconditioner)
    )
    error = np.linalg.norm(np.asarray(x) - reference[rs:re]) ** 2
    error = np.sqrt(sum(comm.allgather(error))) / np.linalg.norm(reference)
    assert_all(comm, info["status"] == jaxamg.AMGXStatus.SUCCESS, f"status {info['status']}")
    assert_all(comm, error <= 1e-8, f"relative difference {error:.3e}")
    # The history is a JAX array (JAX-AMG's type) in a direct MPI call too.
    assert_all(
        comm,
        isinstance(info["residual_history"], jax.Array),
        f"history type {type(info['residual_history'])}",
    )
    # The same info on every rank.
    infos = comm.allgather((info["iterations"], info["residual"], len(info["residual_history"])))
    assert_all(comm, len(set(infos)) == 1, f"info differs across ranks: {infos}")
    # Where it ran: on a CPU the host engine; with arrays on a GPU the setup
    # on the host (said, with the reason) and the solve on the device.
    on_gpu = next(iter(x.devices())).platform == "gpu"
    where = (info["setup_on_device"], info["solve_on_device"], "host_reason" in info)
    assert_all(comm, where == (False, on_gpu, False), f"where: {where}, on a GPU: {on_gpu}")
    if on_gpu:
        assert_all(comm, "set up by the host" in info["setup_reason"], info["setup_reason"])


def test_jit_equals_eager_and_cached_metadata(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 90
    A_global = spd_matrix(n, rng)
    b_global = rng.standard_normal(n)
    bounds = split_rows(n, size, rng, equal=False)
    rs, re = bounds[rank]
    A = local_block(A_global, rs, re)
    b = jnp.asarray(b_global[rs:re])
    cfg = config(True)
    x_eager, _ = jaxamg.solve(A, b, comm=comm, nglobal=n, partition_info=(rs, re), config=cfg)

    @jax.jit
    def solve_jit(data, rhs):
        M = jsparse.BCSR((data, A.indices, A.indptr), shape=A.shape)
        return jaxamg.solve(M, rhs, comm=comm, nglobal=n, partition_info=(rs, re), config=cfg)

    x_jit, info_jit = solve_jit(A.data, b)
    meta = jaxamg.cache_mpi_metadata(cfg, comm, n, (rs, re), A)
    assert_all(comm, meta["recvcounts_tuple"] == tuple(e - s for s, e in bounds))

    @jax.jit
    def solve_cached(data, rhs):
        M = jsparse.BCSR((data, A.indices, A.indptr), shape=A.shape)
        return jaxamg.solve(jaxamg.with_cache(M, mpi=meta), rhs)

    x_cached, _ = solve_cached(A.data, b)
    diff = max(
        float(jnp.max(jnp.abs(x_jit - x_eager))), float(jnp.max(jnp.abs(x_cached - x_eager)))
    )
    assert_all(
        comm,
        global_max(comm, diff) <= 1e-12 * float(jnp.max(jnp.abs(x_eager))),
        f"jit/cached differ from eager by {diff}",
    )
    assert_all(comm, info_jit["residual_history"].shape == (1001,))  # max_iters + 1


def test_gpu_cached_call_copies_no_matrix_and_new_values_set_up_again(comm, rng, monkeypatch):
    """With GPU arrays: a jitted call whose setup is cached solves on the
    device without staging the matrix on the host; new values are staged
    and set up again; each answer equals SciPy's."""
    if jax.default_backend() != "gpu":
        pytest.skip("needs JAX on a GPU")
    from jaxamg import _mpi_cuda  # type: ignore[attr-defined]

    monkeypatch.setenv("JAXAMG_GPU_DIST", "device")

    rank, size = comm.Get_rank(), comm.Get_size()
    n = 120
    A_global = spd_matrix(n, rng)
    b_global = rng.standard_normal(n)
    rs, re = split_rows(n, size, rng, equal=False)[rank]
    A = local_block(A_global, rs, re)
    cfg = config(True, "amg")

    @jax.jit
    def solve(data, rhs):
        M = jsparse.BCSR((data, A.indices, A.indptr), shape=A.shape)
        return jaxamg.solve(M, rhs, comm=comm, nglobal=n, partition_info=(rs, re), config=cfg)

    places = []
    for scale in (1.0, 1.0, 2.0, 2.0):
        x, info = solve(A.data * scale, jnp.asarray(b_global[rs:re]))
        x = np.asarray(x)
        record = _mpi_cuda.last_device_solve()
        places.append((record["on_device"], record["staged"]))
        reference = spla.spsolve((scale * A_global).tocsc(), b_global)[rs:re]
        error = relative(comm, x - reference, reference)
        assert_all(comm, error <= 1e-8, f"scale {scale}: relative difference {error:.3e}")
        assert_all(comm, bool(info["solve_on_device"]), str(info))
    expected = [(True, True), (True, False), (True, True), (True, False)]
    assert_all(comm, places == expected, f"(on device, staged) per call: {places}")


def test_x0_cuts_iterations_and_keeps_the_solution(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 100
    A_global = spd_matrix(n, rng)
    b_global = rng.standard_normal(n)
    reference = spla.spsolve(A_global.tocsc(), b_global)
    rs, re = split_rows(n, size, rng, equal=True)[rank]
    A = local_block(A_global, rs, re)
    # An absolute tolerance: relative to a warm start's small residual it would
    # ask for more digits than float64 has.
    options = dict(config=config(True), convergence="ABSOLUTE", tolerance=1e-9)
    cold, info_cold = jaxamg.solve(
        A, jnp.asarray(b_global[rs:re]), comm=comm, nglobal=n, partition_info=(rs, re), **options
    )
    guess = jnp.asarray(reference[rs:re] + 1e-6 * rng.standard_normal(re - rs))
    warm, info_warm = jaxamg.solve(
        A,
        jnp.asarray(b_global[rs:re]),
        x0=guess,
        comm=comm,
        nglobal=n,
        partition_info=(rs, re),
        **options,
    )
    assert_all(
        comm,
        info_warm["iterations"] < info_cold["iterations"],
        f"{info_warm['iterations']} vs {info_cold['iterations']}",
    )
    diff = global_max(comm, float(np.max(np.abs(np.asarray(warm) - reference[rs:re]))))
    assert_all(comm, diff < 1e-7, f"warm start error {diff}")


def test_callable_operator_equals_its_matrix(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 8
    op, rs, re = matrices.poisson_operator_distributed(n, rank, size, skew=0.0, dtype=jnp.float64)
    A, _, _ = matrices.poisson_matrix_distributed(n, n, rank, size, dtype=jnp.float64)
    b = jnp.asarray(rng.standard_normal(n * n)[rs:re])
    cfg = config(True)
    x_op, _ = jaxamg.solve(op, b, comm=comm, nglobal=n * n, partition_info=(rs, re), config=cfg)
    x_mat, _ = jaxamg.solve(A, b, comm=comm, nglobal=n * n, partition_info=(rs, re), config=cfg)
    coloring = op._coloring_info
    assert_all(comm, tuple(coloring[4]) == (re - rs, n * n), f"coloring shape {coloring[4]}")
    diff = global_max(comm, float(jnp.max(jnp.abs(x_op - x_mat))))
    assert_all(comm, diff <= 1e-10, f"operator vs matrix {diff}")


def _grid_rows(text):
    """The level rows of a grid table: (level, rows, nnz, parts)."""
    out = []
    for line in text.split("SOLVER ITERATIONS")[0].splitlines():
        words = line.split()
        if words and words[0].endswith("(D)"):
            out.append((int(words[0][:-3]), int(words[1]), int(words[2]), int(words[3])))
    return out


def test_save_stats_file_on_rank_0(comm, rng, tmp_path_factory):
    rank, size = comm.Get_rank(), comm.Get_size()
    folder = comm.bcast(str(tmp_path_factory.mktemp("stats")) if rank == 0 else None)
    A, rs, re = matrices.poisson_matrix_distributed(10, 10, rank, size, dtype=jnp.float64)
    nnz = comm.allreduce(int(A.nse))
    texts = []
    # The second call reuses the first one's hierarchy: its file has the
    # same grid table.
    for call in range(2):
        path = os.path.join(folder, f"stats{call}.txt")
        _, info = jaxamg.solve(
            A,
            jnp.ones(re - rs) * (call + 1),
            comm=comm,
            nglobal=100,
            partition_info=(rs, re),
            config=config(True, "amg"),
            save_stats_file=path,
        )
        comm.Barrier()
        if rank == 0:
            with open(path, encoding="utf-8") as f:
                texts.append(f.read())
    if rank == 0:
        text = texts[0]
        grid = _grid_rows(text)
        # Both sections, filled by the distributed engine's statistics; the
        # grid table lists the global hierarchy, every level on all ranks.
        ok = (
            "AMG GRID STATISTICS" in text
            and "SOLVER ITERATIONS" in text
            and "(no iteration statistics)" not in text
            and len(grid) >= 2
            and grid[0][1:] == (100, int(nnz), size)
            and all(g[3] == size for g in grid)
            and f"Number of Levels: {len(grid)}" in text
            and _grid_rows(texts[1]) == grid
        )
    else:
        ok = True
    assert_all(comm, ok, "stats file on rank 0")


def test_subcommunicator_leaves_other_ranks_free(comm, rng):
    """Ranks split in two groups solve two different systems at once."""
    rank, size = comm.Get_rank(), comm.Get_size()
    color = rank % 2 if size > 1 else 0
    sub = comm.Split(color, rank)
    try:
        n = 60 + 10 * color
        A_global = spd_matrix(n, np.random.default_rng(7 + color))
        b_global = np.random.default_rng(9 + color).standard_normal(n)
        reference = spla.spsolve(A_global.tocsc(), b_global)
        srank, ssize = sub.Get_rank(), sub.Get_size()
        bounds = split_rows(n, ssize, rng, equal=True)
        rs, re = bounds[srank]
        x, info = jaxamg.solve(
            local_block(A_global, rs, re),
            jnp.asarray(b_global[rs:re]),
            comm=sub,
            nglobal=n,
            partition_info=(rs, re),
            config=config(True),
        )
        error = float(np.max(np.abs(np.asarray(x) - reference[rs:re])) / np.max(np.abs(reference)))
    finally:
        sub.Free()
    assert_all(comm, error <= 1e-8, f"subcommunicator solve error {error}")


def test_vmap_over_right_hand_sides(comm, rng):
    """A batch of right-hand sides (jax.vmap) equals one solve per column."""
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 70
    A_global = nonsymmetric_matrix(n, rng)
    B = rng.standard_normal((3, n))
    rs, re = split_rows(n, size, rng, equal=False)[rank]
    A = local_block(A_global, rs, re)
    cfg = config(False)

    def one(b):
        return jaxamg.solve(A, b, comm=comm, nglobal=n, partition_info=(rs, re), config=cfg)[0]

    batch = jax.vmap(one)(jnp.asarray(B[:, rs:re]))
    reference = np.stack([spla.spsolve(A_global.tocsc(), B[k]) for k in range(3)])
    error = float(
        np.max(np.abs(np.asarray(batch) - reference[:, rs:re])) / np.max(np.abs(reference))
    )
    assert_all(comm, error <= 1e-8, f"vmap error {error}")


def test_cache_info_lists_the_distributed_solver_and_clear_frees_it(comm, rng):
    n = 96
    A_global = spd_matrix(n, rng)
    b_global = rng.standard_normal(n)
    bounds = split_rows(n, comm.Get_size(), rng, False)
    jaxamg.clear_solver_cache()
    assert_all(comm, jaxamg.get_solver_cache_info()["mpi"]["size"] == 0, "not empty after clear")
    (x, info), (rs, re) = distributed(comm, A_global, b_global, bounds, config=config(True, "amg"))
    jax.block_until_ready(x)  # JAX dispatches asynchronously
    section = jaxamg.get_solver_cache_info()["mpi"]
    mine = [e for e in section["entries"] if e["n_rows_global"] == n]
    assert_all(comm, len(mine) == 1, f"entries {section['entries']}")
    entry = mine[0]
    assert_all(comm, (entry["n_rows"], entry["row_start"]) == (re - rs, rs), f"entry {entry}")
    assert_all(
        comm, entry["comm_size"] == comm.Get_size() and entry["device"] == "mpi", f"entry {entry}"
    )
    assert_all(comm, isinstance(entry["config"], dict), f"config {entry['config']!r}")
    # JAX-AMG's keys with its types beside ours.
    upstream = (
        entry["n_local"],
        entry["n_global"],
        type(entry["lrank"]),
        type(entry["transpose_solve"]),
        entry["mode"],
        entry["block_dim"],
    )
    assert_all(comm, upstream == (re - rs, n, int, bool, str(x.dtype), 1), f"entry {entry}")
    assert_all(comm, 0 <= entry["lrank"] < jax.local_device_count(), f"entry {entry}")
    # Clearing on one rank only: the next solve still agrees and is right.
    if comm.Get_rank() == 0:
        jaxamg.clear_solver_cache()
    (x2, _), _ = distributed(comm, A_global, b_global, bounds, config=config(True, "amg"))
    diff = float(np.max(np.abs(np.asarray(x2) - np.asarray(x))))
    assert_all(comm, diff <= 1e-10 * (1 + float(np.max(np.abs(np.asarray(x))))), f"diff {diff}")
    jaxamg.clear_solver_cache()
    assert_all(comm, jaxamg.get_solver_cache_info()["mpi"]["size"] == 0, "not empty after clear")
