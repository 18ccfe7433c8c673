"""The exchange plans of `jaxamg.mpi_utils` under mpirun: a HaloPlan applied
by one Alltoall gives every stored entry the global solution value of its
column; a TransposePlan gives SciPy's rows of A^T, structure and values;
local_transpose_nnz counts SciPy's entries; bad input raises on every rank."""

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import scipy.sparse as sp  # noqa: E402
from mpi_testing import (  # noqa: E402
    assert_all,
    assert_all_raise,
    needs_native_mpi,
    nonsymmetric_matrix,
    split_rows,
)

import jaxamg  # noqa: E402
from jaxamg import mpi_utils  # noqa: E402

pytestmark = needs_native_mpi


def _shuffled_rows(M, comm):
    """M's CSR with the entries of every row in random order (what a user
    may pass: the plans must not rely on sorted rows). A generator of its
    own per rank: the shared one must stay alike on every rank."""
    rng = np.random.default_rng(1000 + comm.Get_rank())
    M = sp.csr_matrix(M)
    order = np.concatenate(
        [rng.permutation(np.arange(M.indptr[i], M.indptr[i + 1])) for i in range(M.shape[0])]
        or [np.zeros(0, np.int64)]
    ).astype(np.int64)
    return M.indptr.copy(), M.indices[order].copy(), M.data[order].copy()


def _problem(comm, rng, n_min=20):
    size = comm.Get_size()
    n = int(rng.integers(max(n_min, 3 * size), 120))
    A = nonsymmetric_matrix(n, rng)
    # Long-range couplings, so ranks that are not neighbours exchange too.
    far = sp.random(n, n, density=1.5 / n, random_state=int(rng.integers(1 << 30)))
    A = sp.csr_matrix(A + far)
    A.sort_indices()
    bounds = split_rows(n, size, rng, equal=False)
    return n, A, bounds


def test_halo_plan_delivers_every_column_value(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    for _ in range(3):
        n, A, bounds = _problem(comm, rng)
        rs, re = bounds[rank]
        _, cols, _ = _shuffled_rows(A[rs:re], comm)
        counts = tuple(e - s for s, e in bounds)
        plan = mpi_utils.build_halo_plan(cols, counts, (rs, re), comm)

        x = rng.standard_normal(n)  # the same on every rank (seeded alike)
        sent = np.ascontiguousarray(x[rs:re][plan.send_ids_2d])
        received = np.empty_like(sent)
        comm.Alltoall(sent, received)
        ghost = np.zeros(plan.n_ghost + 1)
        ghost[plan.recv_ghost_slot_2d.ravel()] = received.ravel()
        combined = np.concatenate([x[rs:re], ghost[: plan.n_ghost]])

        remote = np.unique(cols[(cols < rs) | (cols >= re)])
        assert_all(
            comm,
            plan.n_local == re - rs
            and plan.n_ghost == remote.size
            and np.array_equal(plan.ghost_ids, remote)
            and plan.max_n_ghost == max(comm.allgather(remote.size))
            and plan.send_ids_2d.shape == (size, plan.max_per_rank)
            and np.array_equal(combined[plan.col_to_combined], x[cols]),
            "halo exchange by the plan",
        )


def test_transpose_plan_gives_scipys_rows_of_the_transpose(comm, rng):
    rank = comm.Get_rank()
    for dtype in (np.float64, np.float32):
        n, A, bounds = _problem(comm, rng)
        A = sp.csr_matrix(A, dtype=dtype)
        A.data[:] = rng.standard_normal(A.nnz)
        rs, re = bounds[rank]
        indptr, indices, data = _shuffled_rows(A[rs:re], comm)
        counts = tuple(e - s for s, e in bounds)
        plan = mpi_utils.build_transpose_plan(indices, indptr, counts, (rs, re), comm)
        values = mpi_utils.transpose_values(data, plan, comm)

        At = sp.csr_matrix(A.T)[rs:re]
        At.sort_indices()
        assert_all(
            comm,
            np.array_equal(plan.indptr, At.indptr)
            and np.array_equal(plan.indices, At.indices)
            and values.dtype == dtype
            and np.array_equal(values, At.data)
            and plan.max_nnz == max(comm.allgather(At.nnz))
            and mpi_utils.local_transpose_nnz(indices, counts, comm) == At.nnz,
            f"transpose plan, {np.dtype(dtype).name}",
        )


def test_local_transpose_nnz_counts_duplicates(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 10 * size
    cols = rng.integers(0, n, size=int(rng.integers(0, 30)))
    counts = tuple(mpi_utils.get_partition_info(n, r, size)[2] for r in range(size))
    everyone = np.concatenate(comm.allgather(cols))
    rs, re, _ = mpi_utils.get_partition_info(n, rank, size)
    expected = int(np.count_nonzero((everyone >= rs) & (everyone < re)))
    assert_all(comm, mpi_utils.local_transpose_nnz(cols, counts, comm) == expected)


def test_cache_mpi_metadata_returns_the_plans(comm, rng):
    rank = comm.Get_rank()
    n, A, bounds = _problem(comm, rng)
    rs, re = bounds[rank]
    from mpi_testing import local_block

    A_local = local_block(A, rs, re)
    counts = tuple(e - s for s, e in bounds)
    meta = jaxamg.cache_mpi_metadata({"solver": "GMRES"}, comm, n, (rs, re), A_local)
    halo = mpi_utils.build_halo_plan(np.asarray(A_local.indices), counts, (rs, re), comm)
    A_rows = A[rs:re]
    At = sp.csr_matrix(A.T)[rs:re]
    At.sort_indices()
    assert_all(
        comm,
        isinstance(meta["halo_plan"], mpi_utils.HaloPlan)
        and np.array_equal(meta["halo_plan"].col_to_combined, halo.col_to_combined)
        and np.array_equal(meta["halo_plan"].send_ids_2d, halo.send_ids_2d)
        and isinstance(meta["transpose_plan"], mpi_utils.TransposePlan)
        and np.array_equal(meta["transpose_plan"].indices, At.indices)
        and np.array_equal(meta["transpose_plan"].indptr, At.indptr)
        and meta["nnz_out"] == At.nnz
        and A_rows.nnz == A_local.nse
        and mpi_utils.resolve_comm(meta["comm_ptr"]) is comm,
        "cache_mpi_metadata's plans",
    )


def test_register_and_resolve_comm(comm):
    sub = comm.Split(comm.Get_rank() % 2, comm.Get_rank())
    try:
        key = mpi_utils.register_comm(sub)
        assert_all(comm, mpi_utils.resolve_comm(key) is sub)
    finally:
        sub.Free()
    with pytest.raises(ValueError, match="register_comm"):
        mpi_utils.resolve_comm(-12345)


def test_bad_input_raises_on_every_rank(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    n, A, bounds = _problem(comm, rng)
    rs, re = bounds[rank]
    M = A[rs:re]
    counts = tuple(e - s for s, e in bounds)
    build_t = mpi_utils.build_transpose_plan

    # A repeated (row, column) on the last rank only.
    indices = M.indices.copy()
    if rank == size - 1 and M.indptr[1] - M.indptr[0] >= 2:
        indices[1] = indices[0]
    has_repeat = any(comm.allgather(rank == size - 1 and M.indptr[1] - M.indptr[0] >= 2))
    if has_repeat:
        assert_all_raise(
            comm,
            ValueError,
            lambda: build_t(indices, M.indptr, counts, (rs, re), comm),
            "sum duplicate",
        )
    # A column outside the matrix on rank 0 only.
    bad = M.indices.copy()
    if rank == 0:
        bad[0] = n
    assert_all_raise(
        comm,
        ValueError,
        lambda: mpi_utils.build_halo_plan(bad, counts, (rs, re), comm),
        f"outside [0, {n})",
    )
    # A partition that does not match the counts.
    wrong = (rs, re + 1) if rank == 0 else (rs, re)
    assert_all_raise(
        comm,
        ValueError,
        lambda: build_t(M.indices, M.indptr, counts, wrong, comm),
        "does not match",
    )
    # An indptr one entry short on the last rank only: every rank raises its error.
    short = M.indptr[:-1] if rank == size - 1 else M.indptr
    last_start, last_end = bounds[-1]
    assert_all_raise(
        comm,
        ValueError,
        lambda: build_t(M.indices, short, counts, (rs, re), comm),
        f"`indptr` must be a 1-D integer array of n_local + 1 = {last_end - last_start + 1} "
        f"entries, got shape ({last_end - last_start},)",
    )
    # Values of the wrong length for the plan.
    plan = build_t(M.indices, M.indptr, counts, (rs, re), comm)
    data = M.data[:-1] if rank == 0 else M.data
    assert_all_raise(
        comm, ValueError, lambda: mpi_utils.transpose_values(data, plan, comm), "stored entries"
    )
