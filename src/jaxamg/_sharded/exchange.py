"""The matrix derivative's column exchange of the sharded interface under jit:
``dL/dA_ij = -lambda_i x_j`` (reverse mode) and ``dA x`` (forward mode) need
x at every column of this rank's pattern, and the columns owned by other
ranks arrive by ``jax.lax.all_to_all`` over the
mesh axis inside ``shard_map`` (an XLA collective: JAX's CPU collectives
between CPU processes, NCCL between GPUs). Eager calls keep the MPI exchange
of the MPI interface (``jaxamg_mpi_gather_columns``).

The plan is made once, when the solver is created, and is the halo plan in
all_to_all form: rank p sends rank q the values of its rows that appear as
columns in q's pattern, in q's (sorted) order. all_to_all sends equal blocks
to every rank, so each block is padded to the longest list over all pairs;
for a partition into contiguous row ranges most pairs are not neighbours and
send only padding (the MPI path sends nothing to them).
"""

from __future__ import annotations

import numpy as np


class AllToAllColumns:
    """``x_columns = plan(x)``: for this rank's local x (last axis: local
    rows), the value of x at the column of every stored entry, in pattern
    order. Callable only inside ``shard_map`` over `axis_name`. Made
    collectively on `comm` (every rank at once)."""

    def __init__(self, comm, axis_name: str, indices, row_counts) -> None:
        rank, size = comm.Get_rank(), comm.Get_size()
        starts = np.concatenate([[0], np.cumsum(np.asarray(row_counts, dtype=np.int64))])
        lo, hi = int(starts[rank]), int(starts[rank + 1])
        cols = np.asarray(indices, dtype=np.int64)
        ghosts = np.unique(cols[(cols < lo) | (cols >= hi)])
        owner = np.searchsorted(starts, ghosts, side="right") - 1
        needed = [ghosts[owner == q] for q in range(size)]  # sorted ids, from q
        asked = comm.alltoall(needed)  # asked[q]: my rows that q needs, in q's order
        self.axis_name = axis_name
        self.block = int(comm.allreduce(max((len(a) for a in needed), default=0), op=_max()))
        self.n_local = hi - lo
        # Gather indices of the blocks to send (padding reads row 0).
        self.send_index = np.zeros((size, max(self.block, 1)), dtype=np.int32)
        for q, rows in enumerate(asked):
            self.send_index[q, : len(rows)] = np.asarray(rows, dtype=np.int64) - lo
        # Every entry's source in [x | received blocks flattened by rank].
        source = np.empty(cols.shape, dtype=np.int64)
        local = (cols >= lo) & (cols < hi)
        source[local] = cols[local] - lo
        if (~local).any():
            q = np.searchsorted(starts, cols[~local], side="right") - 1
            offsets = np.concatenate([[0], np.cumsum([len(a) for a in needed])])
            position = np.searchsorted(ghosts, cols[~local]) - offsets[q]
            source[~local] = self.n_local + q * self.block + position
        self.source = source.astype(np.int32)

    def __call__(self, x):
        import jax
        import jax.numpy as jnp

        if self.block == 0:  # no rank has ghost columns: nothing to exchange
            return jnp.take(x, self.source, axis=-1)
        blocks = jnp.take(x, self.send_index, axis=-1)  # (..., ranks, block)
        axis = blocks.ndim - 2
        received = jax.lax.all_to_all(blocks, self.axis_name, axis, axis, tiled=True)
        flat = received.reshape(*received.shape[:-2], -1)
        return jnp.take(jnp.concatenate([x, flat], axis=-1), self.source, axis=-1)


def _max():
    from mpi4py import MPI

    return MPI.MAX
