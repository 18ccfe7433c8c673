"""The engine's exchange plans of a distributed matrix, in the layout of
JAX-AMG's `mpi_utils`: a :class:`HaloPlan` (the ghost values this rank's rows
read, and which of its values the others read) and a :class:`TransposePlan`
(where each stored entry of ``A`` lands in ``A^T``).

The native MPI module builds both with the solver's own code (the halo plan's
neighbour discovery, the distributed transpose); here they are only laid out
as padded ``(nranks, max_per_rank)`` tables, which one ``Alltoall`` applies.
Everything here is host-side and collective over `comm`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .._core.ffi import mpi_native
from .comm import check_comm, comm_handle, require_mpi4py, run_and_agree

# Communicators by the integer key `register_comm` hands out (mpi4py
# communicators are not hashable, and a jitted function's static arguments
# must be).
_COMMS: dict[int, Any] = {}


def register_comm(comm: Any) -> int:
    """Records `comm` and returns its integer key (its Fortran handle, the
    ``comm_ptr`` of :func:`jaxamg.cache_mpi_metadata`)."""
    check_comm(comm, "jaxamg.mpi_utils.register_comm")
    key = comm_handle(comm)
    _COMMS[key] = comm
    return key


def resolve_comm(comm_ptr: int) -> Any:
    """The communicator registered under `comm_ptr`. An unknown key raises
    (it is never replaced by ``MPI.COMM_WORLD``)."""
    try:
        return _COMMS[int(comm_ptr)]
    except (KeyError, TypeError, ValueError):
        raise ValueError(
            f"`jaxamg.mpi_utils.resolve_comm`: `comm_ptr` {comm_ptr!r} names no registered "
            "communicator; register it first with `jaxamg.mpi_utils.register_comm(comm)` "
            "(`jaxamg.cache_mpi_metadata` registers its `comm`)."
        ) from None


class HaloPlan(NamedTuple):
    """Which solution values this rank's rows read from other ranks.

    ``x_combined = [x_local | x_ghost]`` holds this rank's values and then
    its ghosts (the distinct remote columns, ascending); ``col_to_combined``
    maps every stored entry to its slot there. One ``Alltoall`` of
    ``x_local[send_ids_2d]`` delivers row ``p`` of the result into the ghost
    slots ``recv_ghost_slot_2d[p]``; padding sends ``x_local[0]`` and lands
    in slot ``n_ghost``, to be dropped.
    """

    n_local: int
    n_ghost: int
    max_n_ghost: int  # over all ranks: equal shard shapes for global arrays
    max_per_rank: int  # over all ranks and pairs: the Alltoall's block size
    col_to_combined: np.ndarray  # int32, one per stored entry
    send_ids_2d: np.ndarray  # int32 (nranks, max_per_rank): local rows to send
    recv_ghost_slot_2d: np.ndarray  # int32 (nranks, max_per_rank)
    ghost_ids: np.ndarray  # int64 (n_ghost,): the ghosts' global column ids


class TransposePlan(NamedTuple):
    """This rank's rows of ``A^T`` (CSR, global column ids, sorted within
    rows) and the routing of ``A``'s values into them.

    ``values_T[local_target_ids] = data[local_source_ids]`` places the
    entries whose column this rank owns. The others travel by one
    ``Alltoall`` of ``data[send_ids_2d]`` (row ``p`` to rank ``p``) and land
    at ``recv_target_ids_2d``. Padding is one past the end on both sides
    (``nnz(A)`` in the send table, ``nnz(A^T)`` in the receive table).
    """

    indices: np.ndarray  # int64
    indptr: np.ndarray  # int32
    local_source_ids: np.ndarray  # int32
    local_target_ids: np.ndarray  # int32
    send_ids_2d: np.ndarray  # int32 (nranks, max_per_rank)
    recv_target_ids_2d: np.ndarray  # int32 (nranks, max_per_rank)
    max_nnz: int  # nnz(A^T) over all ranks
    source_nnz: int  # this rank's stored entries of A the plan routes

    @property
    def nnz(self) -> int:
        """This rank's number of stored entries of ``A^T``."""
        return len(self.indices)


def _partition(where: str, recvcounts: Any, partition_info: Any, comm: Any) -> tuple:
    """``(row_start, n_local, nglobal)``, agreed valid on every rank."""
    check_comm(comm, f"jaxamg.mpi_utils.{where}")

    def check():
        counts = [int(c) for c in recvcounts]
        start, end = (int(v) for v in partition_info)
        rank = comm.Get_rank()
        if len(counts) != comm.Get_size():
            raise ValueError(
                f"`jaxamg.mpi_utils.{where}`: `recvcounts` has {len(counts)} entries but the "
                f"communicator has {comm.Get_size()} ranks; pass the rows of every rank."
            )
        if start != sum(counts[:rank]) or end - start != counts[rank]:
            raise ValueError(
                f"`jaxamg.mpi_utils.{where}`: `partition_info` ({start}, {end}) does not match "
                f"`recvcounts` {tuple(counts)} on rank {rank}, which give rows "
                f"({sum(counts[:rank])}, {sum(counts[: rank + 1])}); pass "
                "`mpi_utils.get_partition_info`'s blocks or agree on one split."
            )
        return start, end - start, sum(counts)

    value, _ = run_and_agree(comm, check)
    return value


def _columns(where: str, name: str, values: Any, nglobal: int) -> np.ndarray:
    cols = np.asarray(values)
    if cols.ndim != 1 or (cols.size and cols.dtype.kind not in "iu"):
        raise ValueError(
            f"`jaxamg.mpi_utils.{where}`: `{name}` must be a 1-D integer array, got shape "
            f"{cols.shape} and dtype {cols.dtype}."
        )
    cols = cols.astype(np.int64, copy=False)
    if cols.size and (cols.min() < 0 or cols.max() >= nglobal):
        bad = cols[(cols < 0) | (cols >= nglobal)][0]
        raise ValueError(
            f"`jaxamg.mpi_utils.{where}`: `{name}` holds column {bad}, outside [0, {nglobal}); "
            "pass global 0-based column indices."
        )
    return cols


def _padded(nranks: int, ranks, offsets, values, width: int, fill: int) -> np.ndarray:
    """A (nranks, width) table: row ranks[q] holds values[offsets[q]:offsets[q+1]]."""
    table = np.full((nranks, width), fill, dtype=np.int32)
    for q, peer in enumerate(ranks):
        segment = values[offsets[q] : offsets[q + 1]]
        table[peer, : len(segment)] = segment
    return table


def _widths(comm: Any, tables: dict, size: int) -> tuple[int, int]:
    """``(max_per_rank, max_size)`` over all ranks: the padded tables' width
    (the longest send or receive segment, at least 1) and the largest
    `size` (the ghosts', or A^T's entries). One Allreduce."""
    MPI = require_mpi4py("jaxamg.mpi_utils")
    segments = np.concatenate([np.diff(tables["send_offsets"]), np.diff(tables["recv_offsets"])])
    local = np.asarray([segments.max(initial=0), size], dtype=np.int64)
    out = np.empty_like(local)
    comm.Allreduce(local, out, op=MPI.MAX)
    return max(int(out[0]), 1), int(out[1])


def build_halo_plan(
    local_col_indices: Any, recvcounts_tuple: Any, partition_info: Any, comm: Any
) -> HaloPlan:
    """The halo plan of this rank's rows (see :class:`HaloPlan`) from their
    global column indices. Collective."""
    where = "build_halo_plan"
    row_start, n_local, nglobal = _partition(where, recvcounts_tuple, partition_info, comm)
    cols, _ = run_and_agree(
        comm, lambda: _columns(where, "local_col_indices", local_col_indices, nglobal)
    )
    row_end = row_start + n_local
    unique = np.unique(cols)
    ghosts = unique[(unique < row_start) | (unique >= row_end)]
    t = mpi_native().halo_tables(comm_handle(comm), row_start, n_local, nglobal, ghosts)
    n_ghost = int(t["ghosts"].size)
    max_per_rank, max_n_ghost = _widths(comm, t, n_ghost)
    nranks = comm.Get_size()
    owned = (cols >= row_start) & (cols < row_end)
    col_to_combined = np.where(
        owned, cols - row_start, n_local + np.searchsorted(t["ghosts"], cols)
    ).astype(np.int32)
    return HaloPlan(
        n_local=n_local,
        n_ghost=n_ghost,
        max_n_ghost=max_n_ghost,
        max_per_rank=max_per_rank,
        col_to_combined=col_to_combined,
        send_ids_2d=_padded(
            nranks, t["send_ranks"], t["send_offsets"], t["send_index"], max_per_rank, 0
        ),
        recv_ghost_slot_2d=_padded(
            nranks,
            t["recv_ranks"],
            t["recv_offsets"],
            np.arange(n_ghost, dtype=np.int32),
            max_per_rank,
            n_ghost,
        ),
        ghost_ids=t["ghosts"],
    )


def build_transpose_plan(
    indices: Any, indptr: Any, recvcounts: Any, partition_info: Any, comm: Any
) -> TransposePlan:
    """The transpose plan of this rank's rows (see :class:`TransposePlan`)
    from their CSR structure with global column indices. Duplicate entries
    are refused. Collective."""
    where = "build_transpose_plan"
    row_start, n_local, nglobal = _partition(where, recvcounts, partition_info, comm)

    def structure():
        cols = _columns(where, "indices", indices, nglobal).astype(np.int32)
        ptr = np.asarray(indptr)
        if ptr.ndim != 1 or ptr.size != n_local + 1 or ptr.dtype.kind not in "iu":
            raise ValueError(
                f"`jaxamg.mpi_utils.{where}`: `indptr` must be a 1-D integer array of "
                f"n_local + 1 = {n_local + 1} entries, got shape {ptr.shape} and dtype "
                f"{ptr.dtype}."
            )
        return np.ascontiguousarray(ptr, dtype=np.int32), cols

    (ptr, cols), _ = run_and_agree(comm, structure)
    t = mpi_native().transpose_tables(comm_handle(comm), row_start, n_local, nglobal, ptr, cols)
    nnz_t = int(t["indices"].size)
    max_per_rank, max_nnz = _widths(comm, t, nnz_t)
    nranks = comm.Get_size()
    return TransposePlan(
        indices=t["indices"],
        indptr=t["indptr"],
        local_source_ids=t["local_entry"],
        local_target_ids=t["local_slot"],
        send_ids_2d=_padded(
            nranks, t["send_ranks"], t["send_offsets"], t["send_entry"], max_per_rank, cols.size
        ),
        recv_target_ids_2d=_padded(
            nranks, t["recv_ranks"], t["recv_offsets"], t["recv_slot"], max_per_rank, nnz_t
        ),
        max_nnz=max_nnz,
        source_nnz=int(cols.size),
    )


def local_transpose_nnz(col_indices: Any, recvcounts_tuple: Any, comm: Any) -> int:
    """This rank's number of stored entries of ``A^T``: the entries of all
    ranks whose column this rank owns (duplicates counted). Collective."""
    where = "local_transpose_nnz"
    check_comm(comm, f"jaxamg.mpi_utils.{where}")
    counts = np.asarray([int(c) for c in recvcounts_tuple], dtype=np.int64)

    def per_owner():
        if counts.size != comm.Get_size():
            raise ValueError(
                f"`jaxamg.mpi_utils.{where}`: `recvcounts_tuple` has {counts.size} entries but "
                f"the communicator has {comm.Get_size()} ranks."
            )
        cols = _columns(where, "col_indices", col_indices, int(counts.sum()))
        owners = np.searchsorted(np.cumsum(counts), cols, side="right")
        return np.bincount(owners, minlength=counts.size).astype(np.int64)

    mine, _ = run_and_agree(comm, per_owner)
    received = np.empty_like(mine)
    comm.Alltoall(mine, received)
    return int(received.sum())


def transpose_values(data: Any, plan: TransposePlan, comm: Any) -> np.ndarray:
    """The values of this rank's rows of ``A^T`` (in ``plan``'s order) from
    the values of its rows of ``A`` (in the order the plan was built from).
    Collective: one ``Alltoall``. Host-side (NumPy); not traceable."""
    where = "jaxamg.mpi_utils.transpose_values"
    check_comm(comm, where)
    values = np.asarray(data)

    def check():
        if values.shape != (plan.source_nnz,):
            raise ValueError(
                f"`{where}`: `data` has shape {values.shape}, but the plan was built from "
                f"{plan.source_nnz} stored entries on this rank; pass A's values in the order "
                "of the `indices` given to `build_transpose_plan`."
            )

    run_and_agree(comm, check)
    padded = np.append(values, np.zeros(1, values.dtype))
    out = np.zeros(plan.nnz + 1, dtype=values.dtype)
    out[plan.local_target_ids] = padded[plan.local_source_ids]
    sent = np.ascontiguousarray(padded[plan.send_ids_2d])
    received = np.empty_like(sent)
    comm.Alltoall(sent, received)
    out[plan.recv_target_ids_2d.ravel()] = received.ravel()
    return out[:-1]
