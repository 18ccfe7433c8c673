"""`A=` as this rank's matrix or operator in a sharded solve: its values,
checked against the solver's fixed structure, as packed global values.

Two linear maps with explicit transposes connect the rank-local values to
the global arrays the sharded solve works on:

- :func:`local_to_global` turns this rank's padded values (computed from
  parameters that are the same on every rank, so JAX sees them as
  replicated) into the rank's shard of the global packed array. Its
  transpose hands each rank its own shard of the cotangent back, with no
  sum across ranks.
- :func:`sum_over_ranks` is the identity on the operator's closed-over
  parameters; its transpose sums their cotangents over the ranks, so the
  gradient of a replicated parameter is the gradient of the global loss.

Inside a compiled program both are ``jax.shard_map`` regions; on concrete
values (an eager gradient) they read or write this process's shard and use
an MPI all-reduce.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._core.matrix import as_csr, is_concrete
from .._dist.comm import comm_handle, run_and_agree
from .._operators.materialize import host_csr_layout
from ..sparsity import materialize_operator
from .layout import assemble, is_global_sharded, local_shard, pad_last


def _is_traced(x: Any) -> bool:
    import jax

    return isinstance(x, jax.core.Tracer)


@functools.cache
def _maps(mesh: Any, axis_name: str, comm_handle: int):
    """The two custom-VJP maps for one mesh (built once per mesh)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    def replicated_to_rows(v):
        # Each process's "replicated" copy holds its own rank's values.
        return jax.shard_map(
            lambda s: s, mesh=mesh, in_specs=P(), out_specs=P(axis_name), check_vma=False
        )(v)

    def rows_to_replicated(g):
        return jax.shard_map(
            lambda s: s, mesh=mesh, in_specs=P(axis_name), out_specs=P(), check_vma=False
        )(g)

    def to_rows(v):
        return assemble(v, mesh, axis_name) if not _is_traced(v) else replicated_to_rows(v)

    local_to_global = jax.custom_vjp(to_rows)

    def l2g_fwd(v):
        # An empty slice of v remembers how v was placed (a process-local
        # array, or a "replicated" global one when made under jax.set_mesh).
        return to_rows(v), v[:0]

    def l2g_bwd(placement, g):
        if _is_traced(g):
            return (rows_to_replicated(g),)
        mine = local_shard(g)
        if _is_traced(placement) or placement.is_fully_addressable:
            return (mine,)
        return (jax.make_array_from_single_device_arrays(mine.shape, placement.sharding, [mine]),)

    local_to_global.defvjp(l2g_fwd, l2g_bwd)

    def psum_replicated(c):
        return jax.shard_map(
            lambda s: jax.lax.psum(s, axis_name),
            mesh=mesh,
            in_specs=P(),
            out_specs=P(),
            check_vma=False,
        )(c)

    @jax.custom_vjp
    def sum_over_ranks(consts):
        return consts

    def sum_fwd(consts):
        return consts, None

    def sum_bwd(_, cotangents):
        from mpi4py import MPI

        comm = MPI.Comm.f2py(comm_handle)
        out = []
        for c in cotangents:
            if _is_traced(c):
                out.append(psum_replicated(c))
            else:
                total = comm.allreduce(np.asarray(c), op=MPI.SUM)
                out.append(jnp.asarray(total, dtype=c.dtype))
        return (tuple(out),)

    sum_over_ranks.defvjp(sum_fwd, sum_bwd)
    return local_to_global, sum_over_ranks


def local_to_global(matrix: Any, values: Any):
    """This rank's `values` (length ``local_nnz``) as the packed global array."""
    to_global, _ = _maps(matrix.mesh, matrix.axis_name, comm_handle(matrix.comm))
    return to_global(pad_last(values, matrix.max_local_nnz))


def _reject_sharded_consts(consts, where: str) -> None:
    """Closed-over values must be identical on every rank: a value sharded
    over the ranks is rank-local data and belongs in ``A.data``."""
    import jax

    for c in consts:
        spec = None
        if _is_traced(c):
            sharding = getattr(jax.typeof(c), "sharding", None)
            spec = getattr(sharding, "spec", None)
        sharded = is_global_sharded(c) and not c.sharding.is_fully_replicated
        if sharded or (spec is not None and any(s is not None for s in spec)):
            raise ValueError(
                f"`{where}`: the operator closes over a value of shape {tuple(c.shape)} that is "
                "sharded across the ranks; parameters the operator closes over must be "
                "identical on every rank. Pass rank-local matrix values as A=A_data (the packed "
                "A.data layout) instead."
            )


def check_structure(matrix: Any, csr: Any, where: str) -> None:
    """The matrix given as `A=` must have the creation-time structure; all
    ranks agree on the verdict before anyone communicates further."""

    def local():
        if not is_concrete(csr.indptr, csr.indices):
            raise ValueError(
                f"`{where}`: the indices and row pointers of `A` must be concrete (the sparsity "
                "structure is fixed when the solver is created); pass traced values in the "
                "packed A.data layout instead."
            )
        if tuple(csr.shape) != tuple(matrix.local_shape):
            raise ValueError(
                f"`{where}`: `A` has local shape {tuple(csr.shape)} but this rank's block of the "
                f"solver's matrix has local shape {matrix.local_shape}; pass this rank's rows "
                "with global columns."
            )
        same = np.array_equal(np.asarray(csr.indptr), matrix.indptr) and np.array_equal(
            np.asarray(csr.indices), matrix.indices
        )
        if not same:
            raise ValueError(
                f"`{where}`: `A` does not have the sparsity structure fixed when the solver was "
                "created (same row pointers and column indices, in order); create a new solver "
                "for a new structure."
            )

    run_and_agree(matrix.comm, local)


class Structure:
    """A CSR structure in the form :func:`check_structure` reads."""

    def __init__(self, indptr, indices, shape):
        self.indptr, self.indices, self.shape = indptr, indices, tuple(shape)


def operator_values(matrix: Any, A: Any, where: str):
    """The packed global values of `A`, this rank's matrix or operator.

    A concrete matrix or operator gives concrete values; traced values (an
    operator of traced parameters) go through :func:`local_to_global` and
    their parameters through :func:`sum_over_ranks`. Collective.
    """
    import jax
    import jax.numpy as jnp

    if callable(A) and not hasattr(A, "shape"):
        coloring = getattr(A, "_coloring_info", None) or getattr(matrix, "_coloring_info", None)
        if coloring is None:
            raise ValueError(
                f"`{where}`: the operator passed as A= has no cached coloring and the solver's "
                "matrix was not built from a colored operator; attach one with "
                "jaxamg.with_cache(op, coloring=jaxamg.cache_coloring(op, shape=(n_local, "
                "n_global)))."
            )
        n_local = matrix.local_size

        def values(_):
            M = materialize_operator(A, n_local, coloring, where=where)
            return as_csr(M, where)

        # The structure follows from the coloring alone (concrete even when
        # the values are traced).
        rows, cols, colors, _, shape = coloring
        indptr, indices, _ = host_csr_layout(rows, cols, colors, tuple(shape), where)
        check_structure(matrix, Structure(indptr, indices, tuple(shape)), where)
        csr = values(None)
        if is_concrete(csr.data):
            return jnp.asarray(csr.data, matrix.dtype), True
        # Parameters closed over by the operator: their cotangents are
        # summed over the ranks (each rank differentiates its own rows).
        converted, consts = jax.closure_convert(lambda z: values(z).data, 0.0)
        _reject_sharded_consts(consts, where)
        _, summed = _maps(matrix.mesh, matrix.axis_name, comm_handle(matrix.comm))
        consts = summed(tuple(consts)) if consts else ()
        data = converted(0.0, *consts).astype(matrix.dtype)
        return local_to_global(matrix, data), False
    csr = as_csr(A, where)
    check_structure(matrix, csr, where)
    if not is_concrete(csr.data):
        raise ValueError(
            f"`{where}`: the matrix passed as A= has traced values; pass a callable operator "
            "(whose parameters are then differentiated and summed across ranks), or the packed "
            "values as A=A_data to differentiate matrix entries."
        )
    return jnp.asarray(csr.data, matrix.dtype), True
