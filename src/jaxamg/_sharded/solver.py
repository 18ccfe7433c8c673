"""`make_sharded_solver`: the MPI solve of :mod:`jaxamg._dist.solve` with global,
row-sharded JAX arrays in and out.

Every rank's piece of the work is the MPI interface's own differentiable
core (``_dist.solve.mpi_linear_solve``: one collective native solve, a
custom JVP whose tangent and adjoint solves are native solves on the forward
setup and whose ``dA x`` gathers the off-rank x_j: by the native halo
exchange in a direct call, by ``jax.lax.all_to_all`` inside ``shard_map``,
:mod:`jaxamg._sharded.exchange`).
This module only moves data between the padded global layout and each
rank's unpadded rows:

- a direct call (all operands concrete) reads this process's shards, runs
  the rank-local core and reassembles the global arrays; no ``shard_map``
  is executed (JAX's eager shard_map runs primitive by primitive);
- under any transformation (jit, grad, vmap) the core runs in a
  ``jax.shard_map`` over the 1-D mesh, where each process sees its own
  shard, slices off the padding, calls the native target and pads x again.
  JAX differentiates and batches through the shard_map: the gradient of the
  padded slots is zero, and vmap lanes go to the native target's batching.

Each rank's program carries its own CSR structure as constants (the native
target takes unpadded rank-local arrays), so the processes compile
different programs; that is why importing jaxamg turns XLA's cross-process
GPU autotuning off (:mod:`jaxamg._core.xla_setup`).
"""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np

from .._core.errors import to_runtime_error
from .._core.ffi import STATS_HEAD
from .._core.info import place_flags
from .._core.matrix import structure_fingerprint
from .._core.stats import check_writable, stats_lock, take_stats_text, write_stats_file
from .._core.structure import structure_arrays
from .._core.xla_setup import autotuning_state, shard_autotuning_disabled
from .._dist.comm import comm_handle, run_and_agree
from .._dist.nullspace import global_bases, singular_solve
from .._dist.solve import MpiStatic, agree, mpi_linear_solve
from ..config import outer_max_iters
from .exchange import AllToAllColumns
from .layout import as_local, assemble, local_context, local_shard, pad_last, row_sharding
from .matrix import ShardedMatrix
from .operator import Structure, check_structure, local_to_global, operator_values
from .runtime import check_runtime

WHERE_SOLVER = "jaxamg.make_sharded_solver"
WHERE_CALL = "ShardedSolve.__call__"


def _is_traced(*xs: Any) -> bool:
    import jax

    return any(isinstance(x, jax.core.Tracer) for x in xs)


def check_vector(matrix: ShardedMatrix, v: Any, name: str, where: str, batch: bool = False) -> None:
    """`v` must be a vector in the matrix's padded row layout and dtype (for
    a concrete array also its sharding); with `batch`, leading (stacked)
    axes are allowed."""
    import jax

    shape = tuple(getattr(v, "shape", ()))
    leading = shape[:-1] if batch else ()
    expected = leading + (len(matrix.row_counts) * matrix.max_local_size,)
    if not isinstance(v, jax.Array):
        raise TypeError(
            f"`{where}`: `{name}` must be a global jax.Array from jaxamg.make_sharded_vector, got "
            f"{type(v).__name__}."
        )
    if shape != expected:
        hint = "; use jax.vmap for several right-hand sides" if len(shape) > 1 else ""
        raise ValueError(
            f"`{where}`: `{name}` has shape {shape} but the matrix's row layout needs "
            f"{expected} (nranks * max_local_size){hint}; build it with "
            "jaxamg.make_sharded_vector from the same partition."
        )
    if np.dtype(v.dtype) != np.dtype(matrix.dtype):
        raise ValueError(
            f"`{where}`: `{name}` has dtype {np.dtype(v.dtype)} but the matrix values are "
            f"{np.dtype(matrix.dtype)}; use the same precision for both (rebuild the matrix "
            "with jaxamg.make_sharded_matrix from values of the vector's dtype, or the vector "
            "with jaxamg.make_sharded_vector)."
        )
    if not _is_traced(v):
        sharding = row_sharding(matrix.mesh, matrix.axis_name, len(leading))
        if not v.sharding.is_equivalent_to(sharding, len(shape)):
            raise ValueError(
                f"`{where}`: `{name}` is sharded as {v.sharding} but the solver needs {sharding}; "
                "build it with jaxamg.make_sharded_vector on the matrix's mesh."
            )


class ShardedSolve:
    """A solver for one sharded matrix structure: ``solver(b, x0=None, *,
    A=None, save_stats_file=None) -> (x, info)``. See
    :func:`make_sharded_solver`."""

    def __init__(
        self,
        matrix: ShardedMatrix,
        statics: dict,
        structure: tuple,
        save_stats: bool,
        bases: tuple = (None, None),
    ):
        self.matrix = matrix
        # This rank's rows of the declared null spaces (N, M), validated once.
        self._bases = bases
        self._statics = statics  # use_x0 -> MpiStatic (eager: the MPI exchange)
        # Under shard_map the matrix gradient's columns travel by all_to_all,
        # on a plan made here, once (collectively).
        plan = AllToAllColumns(matrix.comm, matrix.axis_name, matrix.indices, matrix.row_counts)
        self._traced_statics = {
            k: dataclasses.replace(v, exchange=plan) for k, v in statics.items()
        }
        self._structure = structure  # device (indptr, indices, rows)
        self._host_structure = (
            matrix.indptr,
            matrix.indices,
            np.repeat(np.arange(matrix.local_size, dtype=np.int32), np.diff(matrix.indptr)),
        )
        self._save_stats = save_stats

    @property
    def global_size(self) -> int:
        """Rows of the global system (without padding)."""
        return self.matrix.global_size

    @property
    def local_size(self) -> int:
        """Rows this rank owns (without padding)."""
        return self.matrix.local_size

    def local_vector(self, x: Any):
        """This rank's unpadded rows of a global vector `x` (eager only)."""
        if _is_traced(x):
            raise ValueError(
                "`ShardedSolve.local_vector`: works only on concrete arrays (eagerly), not inside "
                "jax.jit or another transform."
            )
        check_vector(self.matrix, x, "x", "ShardedSolve.local_vector", batch=True)
        with local_context(self.matrix.mesh):
            return local_shard(x)[..., : self.local_size]

    # ---- operands ---------------------------------------------------------
    def _values(self, A: Any):
        """(values, is_local): the packed global values, or this rank's
        unpadded concrete values."""
        import jax

        matrix = self.matrix
        if A is None:
            return matrix.data, False
        if isinstance(A, ShardedMatrix):
            if A is not matrix:
                structure = Structure(A.indptr, A.indices, A.local_shape)
                check_structure(matrix, structure, WHERE_CALL)
            return A.data, False
        if isinstance(A, jax.Array) and getattr(A, "ndim", 0) == 1:
            matrix.check_packed(A, "A", WHERE_CALL)
            return A, False
        return operator_values(matrix, A, WHERE_CALL)

    # ---- execution ----------------------------------------------------------
    def __call__(
        self,
        b: Any,
        x0: Any = None,
        *,
        A: Any = None,
        save_stats_file: Any = None,
        A_data: Any = None,
    ):
        if A_data is not None:
            if A is not None:
                raise ValueError(
                    f"`{WHERE_CALL}`: pass the matrix values once, as A= (A_data= is its older "
                    "spelling)."
                )
            A = A_data
        check_vector(self.matrix, b, "b", WHERE_CALL)
        if x0 is not None:
            check_vector(self.matrix, x0, "x0", WHERE_CALL)
        traced = _is_traced(b, x0, A if not isinstance(A, ShardedMatrix) else None)
        if A is None and traced:
            raise ValueError(
                f"`{WHERE_CALL}`: A must be passed explicitly under jax.jit, jax.grad, jax.vmap "
                "or any other transform (e.g. solver(b, A=A.data)), so that the matrix values "
                "stay a dynamic operand instead of a constant baked into the program."
            )
        if save_stats_file is not None:
            if traced:
                raise ValueError(
                    f"`{WHERE_CALL}`: `save_stats_file` works only in a direct solver call, not "
                    "under jax.jit or another transform."
                )
            if not self._save_stats:
                warnings.warn(
                    f"`{WHERE_CALL}`: `save_stats_file` is given but the solver was created with "
                    "save_stats=False, so the engine records no statistics; pass "
                    "save_stats=True to jaxamg.make_sharded_solver.",
                    UserWarning,
                    stacklevel=2,
                )
        values, is_local = self._values(A)
        if save_stats_file is not None and _is_traced(values):
            raise ValueError(
                f"`{WHERE_CALL}`: `save_stats_file` works only in a direct solver call, but the "
                "operator passed as A= depends on traced parameters (jax.grad or another "
                "transform)."
            )
        if traced or _is_traced(values):
            if is_local:
                values = local_to_global(self.matrix, values)
            x, stats, inconsistency = self._sharded(values, b, x0)
            info = _info(stats)
            if inconsistency is not None:
                info["rhs_inconsistency"] = inconsistency
            return x, info
        return self._direct(values, is_local, b, x0, save_stats_file)

    def _run_local(self, st, structure, data, b, x0):
        """The MPI interface's differentiable core on this rank's rows: the
        one place where the native MPI target is reached. Returns (x, stats,
        rhs_inconsistency or None); with declared null spaces the core is
        wrapped in the MPI projections."""
        import jax

        indptr, indices, rows = structure

        def core(rhs):
            return mpi_linear_solve(indptr, indices, rows, data, rhs, x0, st)

        try:
            if self._bases == (None, None):
                return (*core(b), None)
            return singular_solve(core, b, *self._bases, st.comm)
        except jax.errors.JaxRuntimeError as e:
            raise to_runtime_error(e) from None

    def _sharded(self, data, b, x0):
        import jax
        import jax.numpy as jnp
        from jax.sharding import PartitionSpec as P

        m = self.matrix
        st = self._traced_statics[x0 is not None]
        if x0 is None:
            x0 = jnp.zeros_like(b)
        n, nnz, max_local = m.local_size, m.local_nnz, m.max_local_size
        structure = self._host_structure

        singular = self._bases[1] is not None

        def body(d, rhs, guess):
            x, stats, inconsistency = self._run_local(
                st, structure, d[..., :nnz], rhs[..., :n], guess[..., :n]
            )
            out = (pad_last(x, max_local), stats[..., None, :])
            return out + ((inconsistency[..., None],) if singular else ())

        ax = m.axis_name
        out = jax.shard_map(
            body,
            mesh=m.mesh,
            in_specs=(P(ax), P(ax), P(ax)),
            out_specs=(P(ax), P(ax, None)) + ((P(ax),) if singular else ()),
            check_vma=False,
        )(data, b, x0)
        return out if singular else (*out, None)

    def _direct(self, values, is_local, b, x0, save_stats_file):
        import jax
        import jax.numpy as jnp

        m = self.matrix
        n = m.local_size
        st = self._statics[x0 is not None]

        def run():
            # The rank-local pipeline, on this process's device only.
            with local_context(m.mesh):
                data = as_local(values) if is_local else local_shard(values)[: m.local_nnz]
                rhs = local_shard(b)[:n]
                guess = jnp.zeros_like(rhs) if x0 is None else local_shard(x0)[:n]
                x, stats, inconsistency = self._run_local(st, self._structure, data, rhs, guess)
                x = pad_last(x, m.max_local_size)
            return jax.block_until_ready(x), np.asarray(stats), inconsistency

        if save_stats_file is None:
            x, stats, inconsistency = run()
        else:
            x, stats, inconsistency = self._run_with_stats(run, save_stats_file)
        ax = m.axis_name
        flags = place_flags(stats[None, 3].astype(np.int32))
        info = {
            "iterations": assemble(stats[None, 0].astype(np.int32), m.mesh, ax, axis=0),
            "residual": assemble(stats[None, 1], m.mesh, ax, axis=0),
            "status": assemble(stats[None, 2].astype(np.int32), m.mesh, ax, axis=0),
            "residual_history": assemble(stats[None, STATS_HEAD:], m.mesh, ax, axis=0),
            **{key: assemble(flag, m.mesh, ax, axis=0) for key, flag in flags.items()},
        }
        if inconsistency is not None:
            value = np.asarray(inconsistency)[None]
            info["rhs_inconsistency"] = assemble(value, m.mesh, ax, axis=0)
        return assemble(x, m.mesh, ax), info

    def _run_with_stats(self, run, path):
        comm = self.matrix.comm
        rank = comm.Get_rank()
        run_and_agree(comm, lambda: check_writable(path, WHERE_CALL) if rank == 0 else None)
        with stats_lock:
            take_stats_text(distributed=True)  # drop text left by earlier solves
            result = run()
            text = take_stats_text(distributed=True)
        if rank == 0:
            write_stats_file(text, path)
        return result


def _info(stats):
    """`info` of a traced call from the global (..., nranks, STATS_HEAD + H) stats."""
    import jax.numpy as jnp

    return {
        "iterations": stats[..., 0].astype(jnp.int32),
        "residual": stats[..., 1],
        "status": stats[..., 2].astype(jnp.int32),
        "residual_history": stats[..., STATS_HEAD:],
        **place_flags(stats[..., 3].astype(jnp.int32)),
    }


def make_sharded_solver(
    A: Any,
    b: Any,
    *,
    config: Any = None,
    is_symmetric: bool = False,
    block_dim: int = 1,
    reuse_setup: bool = False,
    save_stats: bool = False,
    comm: Any = None,
    mesh: Any = None,
) -> ShardedSolve:
    """A solver for the sharded matrix `A` and right-hand sides laid out like
    `b` (see the sharding guide). Validates the runtime, the layouts, the
    block size and the configuration on every rank, once. Collective.

    `comm` and `mesh` are taken from `A`; when given they must be the
    matrix's. `config` is an AMG/Krylov configuration as for
    :func:`jaxamg.solve` (MPI defaults when None); `is_symmetric=True` lets
    the adjoint solve of a gradient reuse the forward operator.
    """
    import jax

    if not isinstance(A, ShardedMatrix):
        raise TypeError(
            f"`{WHERE_SOLVER}`: `A` must be a ShardedMatrix from jaxamg.make_sharded_matrix, got "
            f"{type(A).__name__}; pack this rank's rows with "
            "jaxamg.make_sharded_matrix(A_local, b)."
        )
    if comm is not None and comm_handle(comm) != comm_handle(A.comm):
        raise ValueError(
            f"`{WHERE_SOLVER}`: `comm` is not the communicator of the matrix; drop it (the solver "
            "uses the matrix's) or rebuild the matrix with this communicator."
        )
    if mesh is not None and mesh != A.mesh:
        raise ValueError(
            f"`{WHERE_SOLVER}`: `mesh` is not the mesh of the matrix; drop it (the solver uses "
            "the matrix's) or rebuild the matrix and vectors on this mesh."
        )
    check_runtime(A.comm, WHERE_SOLVER)
    check_vector(A, b, "b", WHERE_SOLVER)
    if _is_traced(b):
        raise ValueError(f"`{WHERE_SOLVER}`: `b` must be concrete; create the solver outside jit.")
    if isinstance(block_dim, bool) or not isinstance(block_dim, (int, np.integer)) or block_dim < 1:
        raise ValueError(
            f"`{WHERE_SOLVER}`: `block_dim` must be an integer >= 1, got {block_dim!r}."
        )
    block_dim = int(block_dim)
    bad = [r for r, n in enumerate(A.row_counts) if n % block_dim]
    if bad or A.global_size % block_dim:
        raise ValueError(
            f"`{WHERE_SOLVER}`: with block_dim={block_dim} every rank's row count and the global "
            f"size must be divisible by {block_dim}, but the row counts are {list(A.row_counts)} "
            f"(global {A.global_size}); partition on block boundaries."
        )
    if jax.process_count() > 1 and not shard_autotuning_disabled():
        warnings.warn(
            f"`{WHERE_SOLVER}`: XLA's cross-process sharded autotuning is not disabled "
            f"({autotuning_state()}: import jaxamg before the first JAX device call, or set "
            "XLA_FLAGS=--xla_gpu_shard_autotuning=false yourself, or pass "
            "compiler_options={'xla_gpu_shard_autotuning': False} to the outer jax.jit); a "
            "multi-process GPU compile of a sharded solve can deadlock under it.",
            UserWarning,
            stacklevel=2,
        )
    local = A.local_matrix()
    if is_symmetric or getattr(A, "_is_symmetric", False):
        local._is_symmetric = True
    for name in ("_nullspace", "_transpose_nullspace"):  # this rank's rows of the bases
        if getattr(A, name, None) is not None:
            setattr(local, name, getattr(A, name))
    checked, _ = agree(
        A.comm,
        local,
        None,
        None,
        partition_info=A.partition_info,
        nglobal=A.global_size,
        block_dim=block_dim,
        reuse_setup=reuse_setup,
        save_stats_file=None,
        config=config,
        kwargs={},
        save_stats=bool(save_stats),
    )
    fingerprint = structure_fingerprint(checked.csr.indptr, checked.csr.indices)
    statics = {
        use_x0: MpiStatic(
            config=checked.config_text,
            structure=fingerprint,
            reuse_setup=bool(reuse_setup),
            block_dim=block_dim,
            history_len=outer_max_iters(checked.config_text) + 1,
            symmetric=bool(checked.symmetric),
            use_x0=use_x0,
            comm=comm_handle(A.comm),
            row_start=A.partition_info[0],
            nglobal=A.global_size,
        )
        for use_x0 in (False, True)
    }
    structure = structure_arrays(checked.csr, fingerprint)
    bases = (None, None)
    if checked.singular:
        # Validated here once, collectively; calls only use the arrays.
        bases = global_bases(
            A.comm,
            checked.null_specs,
            A.local_size,
            A.global_size,
            checked.dtype,
            bool(checked.symmetric),
            stacklevel=3,
        )
    return ShardedSolve(A, statics, structure, bool(save_stats), bases)
