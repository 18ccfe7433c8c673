"""Sparsity detection by probing: the operator applied to one-hot vectors.

Exact for any linear operator (an entry is kept when |value| > tol), but it
costs one application per column, so it is the fallback for operators the
tracer cannot read. Columns are probed in blocks sized to a memory budget;
the matrix is never held densely, and a block that runs out of memory is
halved.
"""

from __future__ import annotations

import numpy as np

__all__ = ["probe_pattern", "probe_batch_size", "PROBE_BATCH_BYTES"]

# Device memory for one block of probes and their results.
PROBE_BATCH_BYTES = 256 * 2**20


def probe_batch_size(
    n_global: int, n_local: int, itemsize: int, budget: int = PROBE_BATCH_BYTES
) -> int:
    """Probes per block: as many as fit the budget, at least one, at most all."""
    per_probe = max((n_global + n_local) * itemsize, 1)
    return int(max(1, min(n_global, budget // per_probe)))


def _supports_vmap(operator, n_global: int, dtype) -> bool:
    import jax

    try:
        jax.eval_shape(jax.vmap(operator), jax.ShapeDtypeStruct((2, n_global), dtype))
        return True
    except Exception:  # no batching rule (e.g. a callback without vmap_method)
        return False


def _is_out_of_memory(e: Exception) -> bool:
    text = str(e).lower()
    return isinstance(e, MemoryError) or "resource_exhausted" in text or "out of memory" in text


def probe_pattern(operator, shape, tol: float = 1e-10, dtype=None, budget: int = PROBE_BATCH_BYTES):
    import jax
    import jax.numpy as jnp
    from jax import lax

    n_local, n_global = shape
    if n_local == 0 or n_global == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    dtype = jnp.result_type(float) if dtype is None else jnp.dtype(dtype)
    batched = _supports_vmap(operator, n_global, dtype)
    block = probe_batch_size(n_global, n_local, jnp.dtype(dtype).itemsize, budget)

    def make_block_fn(size):
        def run(start):
            cols = start + jnp.arange(size)
            basis = (jnp.arange(n_global)[None, :] == cols[:, None]).astype(dtype)
            apply = lambda e: jnp.reshape(operator(e), (n_local,))
            out = jax.vmap(apply)(basis) if batched else lax.map(apply, basis)
            return jnp.abs(out) > tol

        return jax.jit(run)

    rows, cols = [], []
    start, block_fn = 0, make_block_fn(block)
    while start < n_global:
        try:
            # The last block overlaps the previous one rather than being
            # smaller, so one compiled block size serves every block.
            first = min(start, n_global - block)
            hits = np.asarray(block_fn(first))
        except Exception as e:
            if not _is_out_of_memory(e) or block == 1:
                raise
            block = max(1, block // 2)
            block_fn = make_block_fn(block)
            continue
        k, r = np.nonzero(hits)
        c = first + k
        new = c >= start  # drop the columns an overlapping last block repeats
        rows.append(r[new])
        cols.append(c[new])
        start = first + block
    rows = np.concatenate(rows).astype(np.int64)
    cols = np.concatenate(cols).astype(np.int64)
    order = np.lexsort((cols, rows))
    return rows[order], cols[order]
