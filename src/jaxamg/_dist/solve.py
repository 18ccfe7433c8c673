"""`jaxamg.solve` across MPI ranks: each rank passes its block of rows (global
column indices) and its slice of b; one collective native solve returns this
rank's slice of x.

Differentiation mirrors the single-process solve
(``_core.linear_solve.linear_solve``): the core is a ``jax.custom_jvp`` whose
rule gives ``dx = A^-1 (db - dA x)``, the tangent solve being the same
``custom_linear_solve`` over native calls
(``_core.linear_solve.native_linear_solve``). ``dA x`` needs x at every column of
the local pattern; the x_j of columns owned by other ranks arrive by the
halo exchange (``jaxamg_mpi_gather_columns``; in the sharded interface under
jit ``jax.lax.all_to_all``, ``_sharded.exchange``): only boundary values
travel, never the global vector, and only when the values have a tangent.
JAX derives the rest: forward mode (jvp, jacfwd, linearize) runs the tangent
solve on the forward setup; reverse mode transposes it into the adjoint
solve ``A^T lambda = g`` on the forward setup (the same operator when the
matrix is marked symmetric, the engine's transpose otherwise), with
``dL/db = lambda`` and ``dL/dA_ij = -lambda_i x_j`` on the local pattern.
The gradient is that of the sum of all ranks' losses with respect to this
rank's values and b (each rank gets its own slice). Second derivatives work
in b; those in the values would need the exchange's transpose and raise
(``SECOND_ORDER``).

Collectives on one communicator must be issued in the same order by every
rank, so one solve's collectives form one chain of real operand
dependences (:mod:`jaxamg._core.operand_order` says why nothing weaker orders
them): the exchange reads the solve's x, x is released recomputed from the
exchanged values, and the tangent or adjoint solve takes a vector computed
from them (from x when there is no exchange) as its unread guess operand.
The chain is: solve, exchange, tangent or adjoint solve.

Singular systems (``nullspace``, ``transpose_nullspace``, rows distributed
like b) wrap this core in the projections of ``_dist.nullspace``.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from typing import Any

import numpy as np

from .._core import ffi
from .._core.errors import to_runtime_error
from .._core.info import add_distributed_host_reason, add_inconsistency, make_info
from .._core.linear_solve import Static, jax_jit_lazy, native_linear_solve, pattern_product
from .._core.matrix import is_concrete, structure_fingerprint
from .._core.metadata import with_cache
from .._core.operand_order import after
from .._core.stats import stats_lock, take_stats_text, write_stats_file
from .._core.structure import structure_arrays
from ..config import outer_max_iters
from .comm import check_comm, comm_handle, run_and_agree
from .nullspace import global_bases, singular_solve
from .plans import build_halo_plan, build_transpose_plan, local_transpose_nnz, register_comm
from .validate import WHERE, check_global, prepare_local, summary


@dataclasses.dataclass(frozen=True)
class MpiStatic(Static):
    """The single-process static arguments and the distribution's."""

    comm: int  # Fortran handle
    row_start: int
    nglobal: int
    # The gradient's column exchange when not the MPI one: the sharded
    # interface's all_to_all plan (_sharded.exchange.AllToAllColumns), used
    # inside shard_map.
    exchange: Any = None


def _native_solve(st: MpiStatic, indptr, indices, data, rhs, guess, transpose, use_x0):
    return ffi.solve_mpi_call(
        indptr,
        indices,
        data,
        rhs,
        guess,
        config=st.config,
        structure=st.structure,
        transpose=transpose,
        use_x0=use_x0,
        reuse_setup=st.reuse_setup,
        block_dim=st.block_dim,
        history_len=st.history_len,
        comm=st.comm,
        row_start=st.row_start,
        nglobal=st.nglobal,
    )


def _exchange(st: MpiStatic, indptr, indices, x):
    """x at the column of every stored entry of this rank's rows (pattern
    order): the owned columns read locally, the others by the halo exchange
    (the cached native plan; the sharded interface's all_to_all plan inside
    shard_map). Only boundary values travel. Collective."""
    if st.exchange is not None:
        return st.exchange(x)
    return ffi.gather_columns_call(
        indptr,
        indices,
        x,
        structure=st.structure,
        comm=st.comm,
        row_start=st.row_start,
        nglobal=st.nglobal,
    )


SECOND_ORDER = (
    "`jaxamg.solve`: in MPI mode, derivatives with respect to the matrix values are of first "
    "order only (jax.grad, jax.jvp, jax.jacfwd, jax.linearize); a second derivative that "
    "involves them (e.g. jax.hessian with respect to the values, or differentiating a "
    "value-gradient again) needs the transposed halo exchange, which is not available. "
    "Second derivatives with respect to b work; for the others solve on one process."
)


@functools.cache
def _first_order_only():
    """The identity, whose derivative raises SECOND_ORDER: marks the values
    that only a second derivative with respect to the matrix would
    differentiate (the exchanged x_j, the values inside the tangent solve's
    matvec)."""
    import jax

    @jax.custom_jvp
    def fixed(v):
        return v

    @fixed.defjvp
    def _no_derivative(primals, tangents):
        raise NotImplementedError(SECOND_ORDER)

    return fixed


@functools.cache
def _core():
    """The custom-JVP solve, built on first use (importing JAX lazily)."""
    import jax
    import jax.numpy as jnp
    from jax.custom_derivatives import SymbolicZero

    fixed = _first_order_only()

    @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
    def core(st, indptr, indices, rows, data, b, x0):
        return _native_solve(st, indptr, indices, data, b, x0, False, st.use_x0)

    def core_jvp(st, primals, tangents):
        indptr, indices, rows, data, b, x0 = primals
        d_data, db = tangents[3], tangents[4]
        n = b.shape[-1]
        x, stats = core(st, *primals)
        rhs = jnp.zeros_like(b) if isinstance(db, SymbolicZero) else db
        # Every rank must issue one solve's collectives in one order: the
        # tangent (or adjoint) solve takes `order` as an operand, so it runs
        # after the forward solve, and after the exchange when there is one.
        order = x
        if not isinstance(d_data, SymbolicZero):
            # dA x: x at the pattern's columns, the off-rank ones by the halo
            # exchange, which reads x (so it follows the solve); x leaves
            # only after the exchange.
            x_columns = _exchange(st, indptr, indices, fixed(x))
            rhs = rhs - pattern_product(d_data, x_columns, rows, n)
            order = jax.ops.segment_sum(x_columns, rows, num_segments=n)
            x = after(x, order, per_row=True)
        values = fixed(data)

        def matvec(v):
            return pattern_product(values, _exchange(st, indptr, indices, v), rows, n)

        call = functools.partial(_native_solve, st, indptr, indices, jax.lax.stop_gradient(data))
        # dx = A^-1 (db - dA x). Reverse mode transposes this: the adjoint
        # solve A^T lambda = g on the forward setup, dL/db = lambda and
        # dL/dA_ij = -lambda_i x_j from the exchanged x_j. The matvec is
        # differentiated only for second derivatives in the values, which
        # `fixed` refuses, so JAX need not transpose the exchange.
        dx, _ = native_linear_solve(
            matvec, call, rhs, None, False, st.symmetric, order=order, symmetric_matvec=True
        )
        return (x, stats), (dx, jnp.zeros_like(stats))

    core.defjvp(core_jvp, symbolic_zeros=True)
    return core


@functools.partial(jax_jit_lazy, static_argnames=("st",))
def mpi_linear_solve(indptr, indices, rows, data, b, x0, st: MpiStatic):
    """The differentiable distributed core: returns (x_local, stats)."""
    import jax

    return _core()(st, indptr, indices, rows, data, b, jax.lax.stop_gradient(x0))


def agree(comm, A, b, x0, precheck=None, **options):
    """Local checks on every rank, one allgather, then the global checks."""
    rank = comm.Get_rank()
    reuse_setup = options.get("reuse_setup", False)

    def local():
        if precheck is not None:
            precheck()
        return prepare_local(A, b, x0, rank=rank, **options)

    local, summaries = run_and_agree(comm, local, extra=lambda v: summary(v, reuse_setup))
    check_global(summaries)
    ffi.mpi_native()  # a build without MPI fails here, on every rank alike
    return local, summaries


def solve_mpi(
    A: Any,
    b: Any,
    *,
    x0: Any = None,
    config: Any = None,
    block_dim: int = 1,
    comm: Any = None,
    nglobal: Any = None,
    partition_info: Any = None,
    save_stats_file: Any = None,
    reuse_setup: bool = False,
    nullspace: Any = None,
    transpose_nullspace: Any = None,
    **kwargs: Any,
):
    """The MPI path of :func:`jaxamg.solve` (chosen when `comm`, `nglobal` or
    `partition_info` is given, or `A` carries ``with_cache(mpi=...)``)."""
    import jax

    meta = getattr(A, "_mpi_cache", None)
    precheck = None
    options = dict(
        block_dim=block_dim,
        reuse_setup=reuse_setup,
        save_stats_file=save_stats_file,
        nullspace=nullspace,
        transpose_nullspace=transpose_nullspace,
    )
    if meta is not None:
        given = (comm, nglobal, partition_info)
        precheck = functools.partial(_check_cached, meta, *given)
        comm = meta["comm"]
        if config is not None or kwargs or block_dim != 1:
            warnings.warn(
                "`jaxamg.solve`: `A` carries cached MPI metadata, so `config`, keyword "
                "options and `block_dim` given to solve are ignored; pass them to "
                "jaxamg.cache_mpi_metadata instead.",
                UserWarning,
                stacklevel=3,
            )
        if save_stats_file is not None and not meta.get("save_stats", False):
            warnings.warn(
                "`jaxamg.solve`: `save_stats_file` is given but the cached MPI metadata was made "
                "with save_stats=False, so the engine records no statistics; pass "
                "save_stats=True to jaxamg.cache_mpi_metadata.",
                UserWarning,
                stacklevel=3,
            )
        options.update(
            nglobal=meta["nglobal"],
            partition_info=(meta["row_start"], meta["row_end"]),
            block_dim=meta["block_dim"],
            config_text=meta["config_str"],
        )
    else:
        if comm is None:
            raise ValueError(
                f"`{WHERE}`: `nglobal`/`partition_info` were given without `comm`; pass the "
                "mpi4py communicator whose ranks share the matrix (comm=MPI.COMM_WORLD), or "
                "attach metadata with jaxamg.with_cache(A, mpi=jaxamg.cache_mpi_metadata(...))."
            )
        check_comm(comm, WHERE)
        options.update(nglobal=nglobal, partition_info=partition_info, config=config, kwargs=kwargs)
    local, _ = agree(comm, A, b, x0, precheck=precheck, **options)
    symmetric = local.symmetric or bool(meta and meta.get("is_symmetric", False))
    fingerprint = structure_fingerprint(local.csr.indptr, local.csr.indices)
    indptr, indices, rows = structure_arrays(local.csr, fingerprint)
    st = MpiStatic(
        config=local.config_text,
        structure=fingerprint,
        reuse_setup=bool(reuse_setup),
        block_dim=local.block_dim,
        history_len=outer_max_iters(local.config_text) + 1,
        symmetric=symmetric,
        use_x0=local.use_x0,
        comm=comm_handle(comm),
        row_start=local.row_start,
        nglobal=local.nglobal,
    )

    null_basis = transpose_basis = None
    if local.singular:
        null_basis, transpose_basis = global_bases(
            comm,
            local.null_specs,
            local.row_end - local.row_start,
            local.nglobal,
            local.dtype,
            symmetric,
        )

    def core(rhs):
        return mpi_linear_solve(indptr, indices, rows, local.data, rhs, local.x0, st)

    def run():
        inconsistency = None
        try:
            if local.singular:
                x, stats, inconsistency = singular_solve(
                    core, local.b, null_basis, transpose_basis, st.comm
                )
            else:
                x, stats = core(local.b)
            if is_concrete(x):
                x = jax.block_until_ready(x)
            else:
                _wait_if_eager((x, stats))
        except jax.errors.JaxRuntimeError as e:
            raise to_runtime_error(e) from None
        info = make_info(stats, st.history_len)
        if is_concrete(x):
            cuda = ffi.mpi_cuda_native()
            add_distributed_host_reason(
                info, x, cuda.last_device_solve()["reason"] if cuda is not None else None
            )
        if inconsistency is not None:
            add_inconsistency(info, inconsistency)
        return x, info

    if save_stats_file is None:
        return run()
    with stats_lock:
        take_stats_text(distributed=True)  # drop text left by earlier solves
        x, info = run()
        text = take_stats_text(distributed=True)
    if comm.Get_rank() == 0:
        write_stats_file(text, save_stats_file)
    return x, info


def _wait_if_eager(values) -> None:
    """Waits for the arrays inside the tracers of a transformation applied
    outside jit (jax.jvp, jax.jacfwd, the forward pass of jax.grad): as after
    a direct call, the native collectives have ended when solve returns, so
    the host-side checks of the next MPI call cannot interleave with them.
    Under jit there are no arrays inside, and nothing waits."""
    import jax

    pending, ready = list(jax.tree_util.tree_leaves(values)), []
    while pending:
        value = pending.pop()
        if isinstance(value, jax.core.Tracer):
            # JVP tracers hold primal and tangent, batching tracers val.
            pending.extend(getattr(value, name, None) for name in ("primal", "tangent", "val"))
        elif isinstance(value, jax.Array):
            ready.append(value)
    jax.block_until_ready(ready)


def _check_cached(meta: dict, comm: Any, nglobal: Any, partition_info: Any) -> None:
    """Arguments given beside cached MPI metadata must agree with it."""
    if comm is not None and comm_handle(comm) != meta["comm_ptr"]:
        raise ValueError(
            f"`{WHERE}`: `comm` differs from the communicator in the cached MPI metadata; "
            "drop `comm` or rebuild the metadata with this communicator."
        )
    if nglobal is not None and int(nglobal) != meta["nglobal"]:
        raise ValueError(
            f"`{WHERE}`: nglobal={nglobal} differs from the cached MPI metadata's "
            f"{meta['nglobal']}; drop it or rebuild the metadata."
        )
    if partition_info is not None and tuple(partition_info) != (meta["row_start"], meta["row_end"]):
        raise ValueError(
            f"`{WHERE}`: partition_info={tuple(partition_info)} differs from the cached MPI "
            f"metadata's {(meta['row_start'], meta['row_end'])}; drop it or rebuild the "
            "metadata."
        )


def cache_mpi_metadata(
    config: Any,
    comm: Any,
    nglobal: int,
    partition_info: Any,
    A: Any,
    is_symmetric: bool = False,
    save_stats: bool = False,
    block_dim: int = 1,
    singular: bool = False,
) -> dict:
    """Does the host-side collective work of an MPI solve once: validates the
    partition and the configuration on every rank, colors a callable `A`
    with shape ``(n_local, nglobal)``, and prepares the engine's config.
    Attach the result with ``jaxamg.with_cache(A, mpi=meta)``; solves of
    that `A` then need no `comm`, `nglobal` or `partition_info`, and their
    config, kwargs and block_dim come from here. Collective. ``singular=True``
    (implied when `A` carries null-space bases from ``with_cache``) prepares
    the configuration defaults of singular systems; the bases themselves are
    passed to (or attached for) each solve.

    Returned keys (JAX-AMG's, plus ours): ``recvcounts_tuple`` (rows per
    rank), ``comm_ptr`` (the communicator's Fortran handle), ``lrank``,
    ``nglobal``, ``config_str``, ``max_nnz``, ``nnz_out`` (this rank's
    stored entries of ``A^T``; None for a symmetric `A`), ``halo_plan`` and ``transpose_plan`` (the engine's
    plans as :class:`jaxamg.mpi_utils.HaloPlan` and ``TransposePlan``; the
    solves build and cache their own. ``transpose_plan`` is None for a
    symmetric `A`, for one with repeated entries (``nnz_out`` still counts
    them) and, with ``halo_plan``, when `A`'s pattern is traced),
    ``row_indices``, ``block_dim``, ``singular``, ``comm``, ``row_start``,
    ``row_end``, ``is_symmetric``, ``save_stats``.
    """
    import jax

    check_comm(comm, "jaxamg.cache_mpi_metadata")
    if is_symmetric:
        with_cache(A, is_symmetric=True)
    local, summaries = agree(
        comm,
        A,
        None,
        None,
        partition_info=partition_info,
        nglobal=nglobal,
        block_dim=block_dim,
        reuse_setup=False,
        save_stats_file=None,
        config=config,
        save_stats=bool(save_stats),
        singular=bool(singular),
    )
    indptr = np.asarray(local.csr.indptr) if is_concrete(local.csr.indptr) else None
    counts = tuple(s["row_end"] - s["row_start"] for s in summaries)
    rows = (local.row_start, local.row_end)
    symmetric = bool(local.symmetric or is_symmetric)
    halo_plan = transpose_plan = nnz_out = None
    if all(comm.allgather(indptr is not None)):
        indices = np.asarray(local.csr.indices)
        halo_plan = build_halo_plan(indices, counts, rows, comm)
        if not symmetric:
            nnz_out = local_transpose_nnz(indices, counts, comm)
            if not any(comm.allgather(_has_repeats(indptr, indices))):
                transpose_plan = build_transpose_plan(indices, indptr, counts, rows, comm)
    register_comm(comm)
    return {
        "recvcounts_tuple": counts,
        "comm_ptr": comm_handle(comm),
        "lrank": comm.Get_rank() % max(jax.local_device_count(), 1),
        "nglobal": local.nglobal,
        "config_str": local.config_text,
        "max_nnz": max(s["nnz"] for s in summaries),
        "nnz_out": nnz_out,
        "halo_plan": halo_plan,
        "transpose_plan": transpose_plan,
        "row_indices": None
        if indptr is None
        else np.repeat(np.arange(indptr.size - 1, dtype=np.int32), np.diff(indptr)),
        "block_dim": local.block_dim,
        "singular": bool(singular or local.singular),
        "comm": comm,
        "row_start": local.row_start,
        "row_end": local.row_end,
        "is_symmetric": symmetric,
        "save_stats": bool(save_stats),
    }


def _has_repeats(indptr: np.ndarray, indices: np.ndarray) -> bool:
    """True when some row stores a column twice."""
    rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    keys = rows.astype(np.int64) * (int(indices.max(initial=0)) + 1) + indices
    return np.unique(keys).size != keys.size
