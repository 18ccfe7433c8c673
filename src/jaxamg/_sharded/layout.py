"""The padded row layout of the sharded interface, and `make_sharded_vector`.

JAX shards a global array into equal pieces, while MPI ranks may own
different numbers of rows. A sharded vector therefore stores rank r's
``n_r`` rows at the start of its shard of length ``max_r n_r`` and zeros
after them: the global length is ``nranks * max_local``. The same layout
packs the matrix values (padded to the largest local nnz).

Helpers here move between a rank's unpadded local piece and the global
array without any communication: each process only reads or writes its own
shard.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._dist.comm import run_and_agree
from .runtime import setup

WHERE_VECTOR = "jaxamg.make_sharded_vector"


def row_sharding(mesh: Any, axis_name: str, batch_dims: int = 0):
    """NamedSharding of an array whose last axis is split over the ranks."""
    from jax.sharding import NamedSharding, PartitionSpec

    return NamedSharding(mesh, PartitionSpec(*([None] * batch_dims), axis_name))


def pad_last(v: Any, length: int):
    """`v` with zeros appended along its last axis up to `length` entries."""
    import jax.numpy as jnp

    extra = length - v.shape[-1]
    if extra == 0:
        return v
    return jnp.pad(v, [(0, 0)] * (v.ndim - 1) + [(0, extra)])


def local_shard(x: Any):
    """This process's shard of a global array (a single-device array)."""
    shards = x.addressable_shards
    if len(shards) != 1:
        raise ValueError(
            f"expected one addressable shard per process, got {len(shards)}; the sharded "
            "interface runs one device per process."
        )
    return shards[0].data


def assemble(local_padded: Any, mesh: Any, axis_name: str, axis: int = -1):
    """The global array whose shard on this process is `local_padded`, split
    over the ranks along `axis` (the last one by default; the others are
    unsplit). No communication."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    piece = jax.device_put(as_local(local_padded), local_device(mesh))
    axis = axis % piece.ndim
    shape = list(piece.shape)
    shape[axis] *= mesh.devices.size
    spec = [None] * piece.ndim
    spec[axis] = axis_name
    sharding = NamedSharding(mesh, PartitionSpec(*spec))
    return jax.make_array_from_single_device_arrays(tuple(shape), sharding, [piece])


def local_device(mesh: Any):
    """The mesh device that belongs to this process."""
    import jax

    index = jax.process_index()
    return mesh.devices.flat[index]


@functools.cache
def _one_device_mesh(device: Any):
    import jax

    return jax.make_mesh((1,), ("local",), devices=[device])


def local_context(mesh: Any):
    """A context for JAX operations on this process's single-device arrays:
    a one-device mesh of the local device. Without it, an operation on a
    local shard fails inside the user's ``jax.set_mesh`` of the global mesh
    (its devices do not match the operand's)."""
    import jax

    return jax.set_mesh(_one_device_mesh(local_device(mesh)))


def as_local(x: Any):
    """`x` as a process-local array: a global array computed under
    ``jax.set_mesh`` (replicated, each copy holding this rank's values) gives
    its local copy."""
    import jax

    if (
        isinstance(x, jax.Array)
        and not isinstance(x, jax.core.Tracer)
        and (not x.is_fully_addressable)
    ):
        return local_shard(x)
    return x


def is_global_sharded(x: Any) -> bool:
    """True for a jax.Array spread over devices of more than one process."""
    import jax

    return (
        isinstance(x, jax.Array)
        and not isinstance(x, jax.core.Tracer)
        and (not x.is_fully_addressable)
    )


def make_sharded_vector(
    local_values: Any,
    *,
    comm: Any = None,
    mesh: Any = None,
    global_size: Any = None,
    axis_name: str = "rank",
):
    """A global row-sharded vector assembled from every rank's local values.

    Each rank passes its contiguous block of rows (`local_values`, 1-D);
    every rank must own at least one row, and `global_size`, if given, must
    equal the sum. Shards are padded with zeros to the largest local size, so
    the result has length ``nranks * max_local`` and the sharding
    ``NamedSharding(mesh, P(axis_name))``. `comm` defaults to
    ``MPI.COMM_WORLD``, `mesh` to a 1-D mesh of one device per rank. A JAX
    array stays on its device; other inputs go through NumPy and are
    transferred once. Dtypes other than float32/float64 become float32.
    Collective.
    """
    import jax

    comm, mesh = setup(comm, mesh, axis_name, WHERE_VECTOR)

    def local():
        values = local_values
        if isinstance(values, jax.core.Tracer):
            raise ValueError(
                f"`{WHERE_VECTOR}`: `local_values` is traced (inside jax.jit or another "
                "transform); build sharded vectors outside transforms and pass them in."
            )
        if is_global_sharded(values):
            raise ValueError(
                f"`{WHERE_VECTOR}`: `local_values` is already a global array sharded over "
                f"several processes ({values.sharding}); pass this rank's local rows "
                "(e.g. jaxamg.make_sharded_solver(...).local_vector(x))."
            )
        if not isinstance(values, jax.Array):
            values = np.asarray(values)
        if values.ndim != 1:
            raise ValueError(
                f"`{WHERE_VECTOR}`: `local_values` must be a 1-D vector of this rank's rows, got "
                f"shape {tuple(values.shape)}; build one sharded vector per right-hand side and "
                "stack them for jax.vmap."
            )
        dtype = np.dtype(values.dtype)
        if dtype.kind == "c":
            raise TypeError(
                f"`{WHERE_VECTOR}`: `local_values` is complex ({dtype}); complex systems are not "
                "supported."
            )
        if dtype not in (np.float32, np.float64):
            values = values.astype(np.float32)
        return values

    values, gathered = run_and_agree(comm, local, extra=lambda v: (int(v.shape[0]), str(v.dtype)))
    sizes = [n for n, _ in gathered]
    empty = [r for r, n in enumerate(sizes) if n == 0]
    if empty:
        raise ValueError(
            f"`{WHERE_VECTOR}`: every rank must own at least one row, but rank(s) {empty} passed "
            f"an empty vector (local sizes {sizes}); run on fewer ranks or repartition."
        )
    total = sum(sizes)
    if global_size is not None:
        if isinstance(global_size, bool) or not isinstance(global_size, (int, np.integer)):
            raise TypeError(
                f"`{WHERE_VECTOR}`: `global_size` must be an integer, got {global_size!r}."
            )
        if int(global_size) != total:
            raise ValueError(
                f"`{WHERE_VECTOR}`: global_size={global_size} but the ranks' local sizes {sizes} "
                f"sum to {total}; pass the global number of rows, or leave global_size=None."
            )
    max_local = max(sizes)
    dtypes = {d for _, d in gathered}
    if len(dtypes) > 1:
        raise ValueError(
            f"`{WHERE_VECTOR}`: the ranks passed different dtypes ({sorted(dtypes)}); pass the "
            "same precision on every rank."
        )
    if isinstance(values, jax.Array):
        # Stays on device: pad there and hand the shard over as it is.
        with local_context(mesh):
            padded = pad_last(jax.device_put(values, local_device(mesh)), max_local)
        return assemble(padded, mesh, axis_name)
    padded = np.zeros(max_local, dtype=values.dtype)
    padded[: values.shape[0]] = values
    return jax.make_array_from_process_local_data(
        row_sharding(mesh, axis_name), padded, (max_local * len(sizes),)
    )
