"""`make_sharded_matrix` and `ShardedMatrix`: a distributed matrix whose
values are one global JAX array while its CSR structure stays on its rank.

Rank r keeps the structure of its block of rows (``n_r x n_global``, global
column indices) on the host. The values of all ranks form the global array
``A.data`` in the padded layout of :mod:`jaxamg._sharded.layout`: rank r's
``nnz_r`` values at the start of its shard of length ``max_r nnz_r``, zeros
after them. The global matrix is never gathered anywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._core.checks import check_dtype, preferred_dtype
from .._core.matrix import as_csr, is_concrete
from .._dist.comm import run_and_agree
from ..sparsity import materialize_operator
from .layout import assemble, is_global_sharded, local_context, local_shard, pad_last, row_sharding
from .runtime import setup

WHERE_MATRIX = "jaxamg.make_sharded_matrix"


class ShardedMatrix:
    """This rank's CSR structure plus the packed, globally sharded values.

    Attributes: ``data`` (the packed global values), ``mesh``, ``axis_name``,
    ``partition_info`` (this rank's ``(row_start, row_end)``), ``row_counts``
    (rows of every rank), ``max_local_size``, ``global_size``,
    ``local_size``, ``local_nnz``, ``max_local_nnz``, ``shape`` (global) and
    ``local_shape``. Null-space bases and an operator's coloring attached
    with ``jaxamg.with_cache`` are kept (``_nullspace``,
    ``_transpose_nullspace``, ``_coloring_info``).
    """

    def __init__(
        self, *, data, mesh, axis_name, comm, indptr, indices, row_counts, nnz_counts, source
    ):
        self.data = data
        self.mesh = mesh
        self.axis_name = axis_name
        self.comm = comm
        self.row_counts = tuple(int(n) for n in row_counts)
        self.nnz_counts = tuple(int(n) for n in nnz_counts)
        rank = comm.Get_rank()
        start = int(sum(self.row_counts[:rank]))
        self.partition_info = (start, start + self.row_counts[rank])
        self.global_size = int(sum(self.row_counts))
        self.local_size = self.row_counts[rank]
        self.max_local_size = max(self.row_counts)
        self.local_nnz = self.nnz_counts[rank]
        self.max_local_nnz = max(self.nnz_counts)
        self.shape = (self.global_size, self.global_size)
        self.local_shape = (self.local_size, self.global_size)
        self.indptr = indptr  # NumPy int32, host only
        self.indices = indices  # NumPy int32 global columns, host only
        for name in ("_nullspace", "_transpose_nullspace", "_coloring_info", "_is_symmetric"):
            value = getattr(source, name, None)
            if value is not None:
                setattr(self, name, value)

    @property
    def dtype(self):
        """The dtype of the packed values (`data`)."""
        return self.data.dtype

    def __repr__(self) -> str:
        return (
            f"ShardedMatrix(shape={self.shape}, local_shape={self.local_shape}, "
            f"local_nnz={self.local_nnz}, dtype={self.dtype}, axis_name={self.axis_name!r})"
        )

    def check_packed(self, data: Any, name: str, where: str) -> None:
        """`data` must have the packed layout of ``self.data`` (shape and
        dtype; for a concrete array also the sharding)."""
        import jax

        shape = tuple(getattr(data, "shape", ()))
        if shape != tuple(self.data.shape):
            raise ValueError(
                f"`{where}`: `{name}` has shape {shape} but the packed values of this matrix "
                f"have shape {tuple(self.data.shape)} (nranks * max_local_nnz); pass A.data or "
                "an array of the same layout (e.g. its gradient)."
            )
        if np.dtype(data.dtype) != np.dtype(self.data.dtype):
            raise ValueError(
                f"`{where}`: `{name}` has dtype {np.dtype(data.dtype)} but the matrix values "
                f"are {np.dtype(self.data.dtype)}; pass values of the matrix's dtype or rebuild "
                "the matrix with jaxamg.make_sharded_matrix."
            )
        if isinstance(data, jax.Array) and not isinstance(data, jax.core.Tracer):
            if not data.sharding.is_equivalent_to(self.data.sharding, data.ndim):
                raise ValueError(
                    f"`{where}`: `{name}` is sharded as {data.sharding} but the matrix values "
                    f"are sharded as {self.data.sharding}; pass an array of the A.data layout."
                )

    def local_values(self, data: Any = None):
        """This rank's unpadded values of `data` (default ``self.data``):
        eager only, no communication."""
        import jax

        where = "ShardedMatrix.local_matrix"
        if data is None:
            data = self.data
        if isinstance(data, jax.core.Tracer):
            raise ValueError(
                f"`{where}`: works only on concrete arrays (eagerly), not inside jax.jit or "
                "another transform; call it on the result of the transformed function."
            )
        self.check_packed(data, "data", where)
        with local_context(self.mesh):
            return local_shard(data)[: self.local_nnz]

    def local_matrix(self, data: Any = None):
        """This rank's ``(local_size, global_size)`` BCSR block (global
        columns) for the cached values or for a packed array of the same
        layout, e.g. a gradient with respect to ``A.data``. Eager only."""
        import jax.numpy as jnp
        from jax.experimental import sparse as jsparse

        values = self.local_values(data)
        with local_context(self.mesh):
            return jsparse.BCSR(
                (values, jnp.asarray(self.indices), jnp.asarray(self.indptr)),
                shape=self.local_shape,
            )


def _as_local_csr(A_local: Any):
    """This rank's block as a concrete CsrInput (a callable is materialized
    once with its cached coloring)."""
    source = A_local
    if callable(A_local) and not hasattr(A_local, "shape"):
        coloring = getattr(A_local, "_coloring_info", None)
        if coloring is None:
            raise ValueError(
                f"`{WHERE_MATRIX}`: the operator {getattr(A_local, '__name__', 'A_local')!r} has "
                "no cached coloring; color it first with jaxamg.with_cache(op, "
                "coloring=jaxamg.cache_coloring(op, shape=(n_local, n_global)))."
            )

        shape = tuple(coloring[4])
        A_local = materialize_operator(A_local, shape[0], coloring, where=WHERE_MATRIX)
    csr = as_csr(A_local, WHERE_MATRIX)
    if not is_concrete(csr.indptr, csr.indices, csr.data):
        raise ValueError(
            f"`{WHERE_MATRIX}`: `A_local` is traced (inside jax.jit or another transform); build "
            "the sharded matrix outside transforms and pass traced values to the solver as A=."
        )
    if len(csr.shape) != 2:
        raise ValueError(f"`{WHERE_MATRIX}`: `A_local` must be 2-D, got shape {csr.shape}.")
    check_dtype("A_local", csr.data.dtype)
    n_local, n_global = csr.shape
    if csr.nnz and (int(np.min(csr.indices)) < 0 or int(np.max(csr.indices)) >= n_global):
        raise ValueError(
            f"`{WHERE_MATRIX}`: `A_local` has column indices outside [0, {n_global}); pass this "
            "rank's rows with global column indices."
        )
    return csr, source


def make_sharded_matrix(
    A_local: Any, b: Any, *, comm: Any = None, mesh: Any = None, axis_name: str = "rank"
) -> ShardedMatrix:
    """Packs this rank's row block of a distributed matrix into a
    :class:`ShardedMatrix` laid out like the sharded vector `b`.

    `A_local` is this rank's ``(n_local, n_global)`` rows with global column
    indices: a BCSR/BCOO, SciPy sparse or dense matrix, or a callable
    operator carrying a cached coloring (``jaxamg.with_cache(op,
    coloring=...)``). `b` is a global vector from
    :func:`jaxamg.make_sharded_vector`; the mesh is taken from it unless
    `mesh` is given. Collective.
    """
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding

    if not isinstance(b, jax.Array) or isinstance(b, jax.core.Tracer):
        raise TypeError(
            f"`{WHERE_MATRIX}`: `b` must be a concrete global jax.Array (from "
            f"jaxamg.make_sharded_vector), got {type(b).__name__}."
        )
    if mesh is None:
        if not isinstance(b.sharding, NamedSharding):
            raise ValueError(
                f"`{WHERE_MATRIX}`: `b` has no NamedSharding ({b.sharding}) to take the mesh "
                "from; build it with jaxamg.make_sharded_vector or pass mesh=."
            )
        mesh = b.sharding.mesh
    comm, mesh = setup(comm, mesh, axis_name, WHERE_MATRIX)
    expected = row_sharding(mesh, axis_name)
    if b.ndim != 1 or not b.sharding.is_equivalent_to(expected, 1):
        raise ValueError(
            f"`{WHERE_MATRIX}`: `b` must be a 1-D vector sharded as {expected}, got shape "
            f"{tuple(b.shape)} sharded as {b.sharding}; build it with jaxamg.make_sharded_vector "
            "on the same mesh."
        )

    def local():
        csr, source = _as_local_csr(A_local)
        return csr, source

    (csr, source), gathered = run_and_agree(
        comm,
        local,
        extra=lambda v: (v[0].shape[0], v[0].shape[1], v[0].nnz, np.dtype(v[0].data.dtype).name),
    )
    row_counts = [g[0] for g in gathered]
    n_globals = {g[1] for g in gathered}
    if len(n_globals) > 1:
        raise ValueError(
            f"`{WHERE_MATRIX}`: the ranks' blocks have different column counts "
            f"{[g[1] for g in gathered]}; every rank's block is (n_local, n_global) with the "
            "same n_global."
        )
    n_global = n_globals.pop()
    empty = [r for r, n in enumerate(row_counts) if n == 0]
    if empty:
        raise ValueError(
            f"`{WHERE_MATRIX}`: every rank must own at least one row, but rank(s) {empty} own "
            f"none (row counts {row_counts})."
        )
    if sum(row_counts) != n_global:
        raise ValueError(
            f"`{WHERE_MATRIX}`: the ranks' row counts {row_counts} sum to {sum(row_counts)} but "
            f"the matrix has {n_global} columns; every rank passes its block of rows of the "
            "square global matrix."
        )
    if b.shape[0] != len(row_counts) * max(row_counts):
        raise ValueError(
            f"`{WHERE_MATRIX}`: the vector layout of `b` ({b.shape[0]} entries) does not match "
            f"the matrix's row counts {row_counts} (padded length "
            f"{len(row_counts) * max(row_counts)}); build b with jaxamg.make_sharded_vector from "
            "the same partition."
        )
    dtypes = {g[3] for g in gathered}
    if len(dtypes) > 1:
        raise ValueError(
            f"`{WHERE_MATRIX}`: the ranks' values have different dtypes "
            f"{[g[3] for g in gathered]}; pass the same precision on every rank."
        )
    nnz_counts = [g[2] for g in gathered]
    dtype = preferred_dtype(csr.data, csr.data)
    with local_context(mesh):
        values = pad_last(jnp.asarray(csr.data, dtype=dtype), max(nnz_counts))
    return ShardedMatrix(
        data=assemble(values, mesh, axis_name),
        mesh=mesh,
        axis_name=axis_name,
        comm=comm,
        indptr=np.ascontiguousarray(csr.indptr, dtype=np.int32),
        indices=np.ascontiguousarray(csr.indices, dtype=np.int32),
        row_counts=row_counts,
        nnz_counts=nnz_counts,
        source=source,
    )


__all__ = ["ShardedMatrix", "make_sharded_matrix", "is_global_sharded"]
