"""The differentiable allgather behind `jaxamg.mpi_utils.make_allgather_vector`.

Forward: every rank receives the concatenation of the local pieces (rank
order). Reverse: the cotangent of the global vector is sliced back to this
rank's rows. No sum over ranks: the adjoint of "replicate my piece on every
rank" is a sum of the ranks' cotangents, but each rank's cotangent here is
the gradient of its own local loss, and summing happens where the user
combines losses (allreduce of replicated-parameter gradients), as in JAX-AMG.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .comm import run_and_agree


def _mpi_type(MPI, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float64:
        return MPI.DOUBLE
    if dtype == np.float32:
        return MPI.FLOAT
    raise TypeError(
        f"`jaxamg.mpi_utils.make_allgather_vector`: vectors must be float32 or float64, got "
        f"{dtype}; cast before gathering."
    )


def _host_allgather(comm, sizes, displs, nglobal):
    from mpi4py import MPI

    def gather(x):
        x = np.ascontiguousarray(x)
        out = np.empty((nglobal,), dtype=x.dtype)
        t = _mpi_type(MPI, x.dtype)
        comm.Allgatherv([x, t], [out, (sizes, displs), t])
        return out

    return gather


def _mpi4jax_allgather(comm, sizes, rank):
    """mpi4jax's allgather needs equal pieces: pad to the largest, gather,
    then cut every rank's padding out (sizes are static)."""
    import jax.numpy as jnp
    import mpi4jax

    width = max(sizes)

    def gather(x):
        padded = jnp.pad(x, (0, width - x.shape[-1]))
        out = mpi4jax.allgather(padded, comm=comm)
        if isinstance(out, tuple):  # mpi4jax < 0.4 also returned a token
            out = out[0]
        return jnp.concatenate([out[r, : sizes[r]] for r in range(len(sizes))])

    return gather


def build_allgather(comm: Any, sizes: tuple[int, ...], rank: int, backend: str):
    import jax
    import jax.numpy as jnp

    nglobal = int(sum(sizes))
    start = int(sum(sizes[:rank]))
    n_local = int(sizes[rank])
    displs = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    counts = np.asarray(sizes, dtype=np.int64)

    if backend == "host":
        # The callback may run on an XLA thread while the caller's thread
        # runs collectives of its own on `comm`; gathering on a private
        # duplicate (made here, collectively, in the caller's thread) keeps
        # the two from matching each other. One per allgather built; it
        # lives as long as the process, like the function returned.
        host = _host_allgather(comm.Dup(), counts, displs, nglobal)

        def raw(x):
            shape = jax.ShapeDtypeStruct((nglobal,), x.dtype)
            # "sequential": a batch is gathered lane by lane, the same number
            # of collectives on every rank.
            return jax.pure_callback(host, shape, x, vmap_method="sequential")

    else:
        raw = _mpi4jax_allgather(comm, sizes, rank)

    @jax.custom_vjp
    def allgather(x):
        return raw(x)

    def fwd(x):
        return raw(x), None

    def bwd(_, g):
        return (g[..., start : start + n_local],)

    allgather.defvjp(fwd, bwd)

    def check(x_local):
        if x_local.ndim != 1 or x_local.shape[0] != n_local:
            raise ValueError(
                f"`allgather`: this rank owns {n_local} rows, got a vector of shape "
                f"{tuple(x_local.shape)}; pass the local piece (use jax.vmap for batches)."
            )

    def apply(x_local):
        x_local = jnp.asarray(x_local)
        # Agreed before the gather, so a wrong piece on one rank raises on all.
        run_and_agree(comm, lambda: check(x_local))
        if x_local.dtype not in (jnp.float32, jnp.float64):
            x_local = x_local.astype(jnp.float32)
        return allgather(x_local)

    apply.sizes = tuple(sizes)
    apply.backend = backend
    return apply
