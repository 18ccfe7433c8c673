"""Sums of small arrays over the ranks of a communicator: the reductions
behind the null-space projections of distributed solves (``N^T v`` and the
Gram matrix ``N^T N``, k and k^2 numbers).

:func:`allreduce_sum` is the in-program form: the FFI target
``jaxamg_mpi_allreduce_sum`` (eager and under jax.jit alike), differentiable
in reverse mode: the transpose of "sum over ranks" is "sum over ranks" of
the cotangent. The result is bitwise the same on every rank (the native side
adds the ranks' contributions in rank order).

:func:`tree_sum` and :func:`host_sum` are the reduction hooks that the
functions of :mod:`jaxamg.nullspace` take: one collective for a whole tuple
of arrays, in the program or on the host (concrete NumPy values, for the
checks that run before the solve).

Collectives must be issued in the same order by every rank. Each hook call
is one collective; callers order consecutive ones by data dependence (see
``_dist.nullspace``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from .._core import ffi


def _native_sum(comm: int, x: Any):
    import jax

    ffi.ensure_mpi_registered()
    call = jax.ffi.ffi_call(
        "jaxamg_mpi_allreduce_sum",
        jax.ShapeDtypeStruct(x.shape, x.dtype),
        # One collective on the whole batch: every rank has the same lanes.
        vmap_method="broadcast_all",
    )
    return call(x, comm=np.int64(comm))


@functools.cache
def _allreduce():
    import jax

    @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
    def allreduce(comm, x):
        return _native_sum(comm, x)

    def fwd(comm, x):
        return _native_sum(comm, x), None

    def bwd(comm, _, g):
        # y = sum_r x_r on every rank, so dL/dx_r = sum_r' dL_r'/dy.
        return (_native_sum(comm, g),)

    allreduce.defvjp(fwd, bwd)
    return allreduce


def allreduce_sum(x: Any, comm: int):
    """The elementwise sum of the float32/float64 array `x` over the ranks of
    the communicator with Fortran handle `comm` (the same on every rank).
    Collective: every rank passes an array of the same shape and dtype."""
    return _allreduce()(int(comm), x)


def tree_sum(comm: int) -> Callable[[Any], Any]:
    """The in-program reduction hook: sums a tuple of arrays (of one floating
    dtype) over the ranks with ONE collective (flattened, concatenated,
    split again)."""

    def reduce(parts):
        import jax.numpy as jnp

        parts = tuple(parts)
        dtype = jnp.result_type(*parts)
        flat = jnp.concatenate([jnp.ravel(p).astype(dtype) for p in parts])
        total = allreduce_sum(flat, comm)
        out, offset = [], 0
        for p in parts:
            size = int(np.prod(p.shape, dtype=np.int64))
            out.append(total[offset : offset + size].reshape(p.shape).astype(p.dtype))
            offset += size
        return tuple(out)

    return reduce


def host_sum(comm: Any) -> Callable[[Any], Any]:
    """The host reduction hook (concrete values, mpi4py): sums a tuple of
    NumPy arrays over the ranks with one allgather, adding in rank order so
    that every rank gets the same bits."""

    def reduce(parts):
        parts = tuple(np.asarray(p) for p in parts)
        gathered = comm.allgather(parts)
        return tuple(functools.reduce(np.add, (g[i] for g in gathered)) for i in range(len(parts)))

    return reduce


def host_max(comm: Any) -> Callable[[Any], Any]:
    """The elementwise maximum of a NumPy array over the ranks (one allgather)."""

    def reduce(values):
        return functools.reduce(np.maximum, comm.allgather(np.asarray(values)))

    return reduce
