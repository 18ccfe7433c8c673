"""Row partitions for the MPI interface of :func:`jaxamg.solve`.

A distributed system is split into contiguous blocks of rows, one per rank:
rank ``r`` owns rows ``row_start:row_end`` of ``A`` (with *global* column
indices) and the same slice of ``b``. :func:`get_partition_info` gives the
default split (the first ``n_global % nranks`` ranks get one extra row); the
``partition_*`` helpers cut a global object into this rank's block, and
:func:`gather_vector` / :func:`make_allgather_vector` bring local pieces back
together.

The exchange plans of a distributed matrix (:class:`HaloPlan`,
:class:`TransposePlan`) are the engine's own, built by the native MPI module
and laid out as JAX-AMG's padded tables.

Importing this module needs neither mpi4py nor JAX; the functions that
communicate import mpi4py when called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._core.matrix import as_csr
from ._dist.allgather import build_allgather
from ._dist.comm import check_comm, require_mpi4py, run_and_agree
from ._dist.plans import (
    HaloPlan,
    TransposePlan,
    build_halo_plan,
    build_transpose_plan,
    local_transpose_nnz,
    register_comm,
    resolve_comm,
    transpose_values,
)

__all__ = [
    "get_partition_info",
    "partition_vector",
    "partition_csr_matrix",
    "partition_operator",
    "validate_partition",
    "gather_vector",
    "make_allgather_vector",
    "register_comm",
    "resolve_comm",
    "local_transpose_nnz",
    "HaloPlan",
    "build_halo_plan",
    "TransposePlan",
    "build_transpose_plan",
    "transpose_values",
]


def _int(name: str, value: Any, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(
            f"`jaxamg.mpi_utils.{where}`: `{name}` must be an integer >= {minimum}, got {value!r}."
        )
    return int(value)


def get_partition_info(n_global: int, rank: int, nranks: int) -> tuple[int, int, int]:
    """``(row_start, row_end, n_local)`` of `rank` in the default split of
    `n_global` rows over `nranks` contiguous blocks."""
    where = "get_partition_info"
    n_global = _int("n_global", n_global, where, 0)
    nranks = _int("nranks", nranks, where, 1)
    rank = _int("rank", rank, where, 0)
    if rank >= nranks:
        raise ValueError(
            f"`jaxamg.mpi_utils.{where}`: `rank` must be below nranks={nranks}, got {rank}."
        )
    base, extra = divmod(n_global, nranks)
    row_start = rank * base + min(rank, extra)
    n_local = base + (1 if rank < extra else 0)
    return row_start, row_start + n_local, n_local


def partition_vector(b_global: Any, rank: int, nranks: int):
    """``(b_local, row_start, row_end)``: this rank's slice of a global vector
    (same array type and dtype)."""
    n = int(np.shape(b_global)[-1]) if np.ndim(b_global) else -1
    if np.ndim(b_global) != 1:
        raise ValueError(
            "`jaxamg.mpi_utils.partition_vector`: `b_global` must be a 1-D vector, got shape "
            f"{tuple(np.shape(b_global))}."
        )
    rs, re, _ = get_partition_info(n, rank, nranks)
    return b_global[rs:re], rs, re


def partition_csr_matrix(A_global: Any, rank: int, nranks: int):
    """``(A_local, row_start, row_end)``: this rank's block of rows of a SciPy
    sparse or JAX BCSR/BCOO matrix, as a BCSR matrix of shape
    ``(n_local, n_global)`` with global column indices, int32 indices and
    the input's dtype."""
    import jax.numpy as jnp
    from jax.experimental import sparse as jsparse

    where = "jaxamg.mpi_utils.partition_csr_matrix"
    csr = as_csr(A_global, where)
    n_rows, n_cols = csr.shape
    if n_rows != n_cols:
        raise ValueError(f"`{where}`: `A_global` must be square, got shape {csr.shape}.")
    rs, re, n_local = get_partition_info(n_rows, rank, nranks)
    indptr = np.asarray(csr.indptr, dtype=np.int64)
    lo, hi = int(indptr[rs]), int(indptr[re])
    local_indptr = (indptr[rs : re + 1] - lo).astype(np.int32)
    local_indices = np.asarray(csr.indices[lo:hi], dtype=np.int32)
    data = csr.data[lo:hi]
    A_local = jsparse.BCSR(
        (jnp.asarray(data), jnp.asarray(local_indices), jnp.asarray(local_indptr)),
        shape=(n_local, n_cols),
    )
    return A_local, rs, re


def partition_operator(operator: Callable, nglobal: int, rank: int, nranks: int):
    """``(local_op, row_start, row_end)``: `local_op(x_global)` is
    ``operator(x_global)[row_start:row_end]``, the rows of a global linear
    operator that this rank owns (shape ``(n_local, nglobal)``, as
    :func:`jaxamg.cache_coloring` and the MPI solve expect)."""
    if not callable(operator):
        raise TypeError(
            "`jaxamg.mpi_utils.partition_operator`: `operator` must be callable, got "
            f"{type(operator).__name__}."
        )
    rs, re, _ = get_partition_info(nglobal, rank, nranks)

    def local_op(x):
        return operator(x)[..., rs:re]

    local_op.__name__ = f"{getattr(operator, '__name__', 'operator')}_rows_{rs}_{re}"
    return local_op, rs, re


def validate_partition(A_local: Any, nglobal: int, row_start: int, row_end: int) -> bool:
    """Checks one rank's block: shape ``(row_end - row_start, nglobal)``,
    monotone row pointers that end at nnz, and column indices in
    ``[0, nglobal)``. Raises ValueError naming what is wrong; prints a
    confirmation line and returns True otherwise."""
    where = "jaxamg.mpi_utils.validate_partition"
    nglobal = _int("nglobal", nglobal, "validate_partition", 1)
    row_start = _int("row_start", row_start, "validate_partition", 0)
    row_end = _int("row_end", row_end, "validate_partition", 0)
    if not row_start < row_end <= nglobal:
        raise ValueError(
            f"`{where}`: need row_start < row_end <= nglobal, got row_start={row_start}, "
            f"row_end={row_end}, nglobal={nglobal}."
        )
    csr = as_csr(A_local, where)
    expected = (row_end - row_start, nglobal)
    if tuple(csr.shape) != expected:
        raise ValueError(
            f"`{where}`: `A_local` has shape {tuple(csr.shape)} but rows "
            f"{row_start}:{row_end} of a {nglobal}-row system need shape {expected}."
        )
    indptr = np.asarray(csr.indptr, dtype=np.int64)
    indices = np.asarray(csr.indices, dtype=np.int64)
    if indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[-1] != indices.size:
        raise ValueError(
            f"`{where}`: the row pointers of `A_local` must start at 0, never decrease and end "
            f"at nnz={indices.size}."
        )
    if indices.size and (indices.min() < 0 or indices.max() >= nglobal):
        raise ValueError(
            f"`{where}`: column indices must be global, in [0, {nglobal}), got the range "
            f"[{indices.min()}, {indices.max()}]."
        )
    print(
        f"\u2713 partition rows {row_start}:{row_end} of {nglobal}: "
        f"{expected[0]} rows, {indices.size} nonzeros, global columns"
    )
    return True


def _host_vector(x_local: Any, where: str) -> np.ndarray:
    import jax

    if isinstance(x_local, jax.core.Tracer):
        raise ValueError(
            f"`{where}` works on concrete arrays only (it is not differentiable and cannot run "
            "under jax.jit); use jaxamg.mpi_utils.make_allgather_vector inside transformations."
        )
    x = np.asarray(x_local)
    if x.ndim != 1:
        raise ValueError(f"`{where}`: `x_local` must be a 1-D vector, got shape {x.shape}.")
    if x.dtype not in (np.float32, np.float64):
        x = x.astype(np.float64)
    return np.ascontiguousarray(x)


def gather_vector(x_local: Any, comm: Any, root: int = 0):
    """Gathers every rank's local piece (in rank order) on `root`, which
    receives the global vector as a JAX array; the other ranks get None.
    float32/float64 are kept, other dtypes become float64. Collective; not
    differentiable."""
    import jax.numpy as jnp

    where = "jaxamg.mpi_utils.gather_vector"
    MPI = require_mpi4py(where)
    check_comm(comm, where)

    def local():
        size = comm.Get_size()
        if (
            isinstance(root, bool)
            or not isinstance(root, (int, np.integer))
            or not (0 <= root < size)
        ):
            raise ValueError(f"`{where}`: `root` must be a rank in [0, {size}), got {root!r}.")
        return _host_vector(x_local, where)

    x, _ = run_and_agree(comm, local)
    counts = comm.allgather((x.size, x.dtype.str))
    dtypes = {d for _, d in counts}
    dtype = np.dtype(np.float64) if len(dtypes) > 1 else x.dtype
    x = x.astype(dtype, copy=False)
    sizes = np.array([c for c, _ in counts], dtype=np.int64)
    mpi_type = MPI.DOUBLE if dtype == np.float64 else MPI.FLOAT
    if comm.Get_rank() == root:
        out = np.empty(int(sizes.sum()), dtype=dtype)
        displs = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        comm.Gatherv([x, mpi_type], [out, (sizes, displs), mpi_type], root=root)
        return jnp.asarray(out)
    comm.Gatherv([x, mpi_type], None, root=root)
    return None


def make_allgather_vector(
    comm: Any, partition_info: Any, nglobal: int, *, backend: str = "auto"
) -> Callable:
    """A differentiable ``allgather(x_local) -> x_global``: every rank gets
    the full vector (pieces in rank order).

    Its VJP is this rank's slice of the global cotangent: it does not sum
    over ranks, so each rank's gradient is the contribution of its own loss;
    allreduce the gradients of parameters replicated on every rank.

    - `partition_info`: this rank's ``(row_start, row_end)``.
    - `backend`: ``"host"`` (a ``jax.pure_callback`` around mpi4py's
      Allgatherv; works eagerly and under ``jax.jit``), ``"mpi4jax"``
      (mpi4jax's allgather on padded pieces; needs the mpi4jax package) or
      ``"auto"`` (host: the one that needs no extra package).

    Creating it is collective (the local sizes are checked to sum to
    `nglobal`); so is every call.
    """
    where = "jaxamg.mpi_utils.make_allgather_vector"
    check_comm(comm, where)

    def local():
        if backend not in ("auto", "host", "mpi4jax"):
            raise ValueError(
                f"`{where}`: unknown backend {backend!r}; pass 'auto', 'host' or 'mpi4jax'."
            )
        try:
            rs, re = (int(v) for v in partition_info)
        except (TypeError, ValueError):
            raise ValueError(
                f"`{where}`: `partition_info` must be (row_start, row_end), got {partition_info!r}."
            ) from None
        if not 0 <= rs <= re:
            raise ValueError(
                f"`{where}`: `partition_info` must satisfy 0 <= row_start <= row_end, got "
                f"({rs}, {re})."
            )
        if backend == "mpi4jax":
            try:
                import mpi4jax  # noqa: F401
            except ImportError:
                raise ImportError(
                    f"`{where}`: backend='mpi4jax' needs the mpi4jax package; install it "
                    "with `pip install mpi4jax`, or pass backend='host'."
                ) from None
            return rs, re, "mpi4jax"
        return rs, re, "host"

    (rs, re, chosen), parts = run_and_agree(comm, local, extra=_partition_pair(partition_info))
    starts = [p[0] for p in parts]
    sizes = [p[1] - p[0] for p in parts]
    if sum(sizes) != nglobal:
        raise ValueError(
            f"`{where}`: the local sizes {sizes} sum to {sum(sizes)}, not nglobal={nglobal}; "
            "pass each rank's (row_start, row_end) of one partition of nglobal rows."
        )
    expected = 0
    for rank, (start, size) in enumerate(zip(starts, sizes)):
        if start != expected:
            raise ValueError(
                f"`{where}`: rank {rank} starts at row {start} but the rows before it end at "
                f"{expected}; the blocks must be contiguous and in rank order."
            )
        expected += size

    return build_allgather(comm, tuple(sizes), comm.Get_rank(), chosen)


def _partition_pair(partition_info: Any):
    """``(row_start, row_end)`` as ints if it looks like one, else None (for
    validation metadata that must never fail to serialise)."""
    try:
        rs, re = (int(v) for v in partition_info)
        return rs, re
    except (TypeError, ValueError):
        return None
