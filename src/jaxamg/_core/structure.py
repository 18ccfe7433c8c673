"""The structure of a CSR matrix as the arrays the jitted core reads:
(indptr, indices, rows), made once per distinct concrete structure."""

from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np

from .matrix import CsrInput, compiled_for, on_accelerator


@functools.lru_cache(maxsize=32)
def _device_structure(fingerprint: tuple[int, int], indptr_bytes: bytes, indices_bytes: bytes):
    """Device copies of a concrete structure, made once per structure."""
    import jax
    import jax.numpy as jnp

    indptr = np.frombuffer(indptr_bytes, dtype=np.int32)
    indices = np.frombuffer(indices_bytes, dtype=np.int32)
    rows = np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int32), np.diff(indptr))
    # The first call may come from inside a trace (jit, a Krylov loop): the
    # memoised arrays must be concrete, never that trace's tracers.
    with jax.ensure_compile_time_eval():
        return jnp.asarray(indptr), jnp.asarray(indices), jnp.asarray(rows)


def _rows_of(indptr: Any, indices: Any):
    import jax.numpy as jnp

    n = indptr.shape[0] - 1
    return jnp.repeat(
        jnp.arange(n, dtype=jnp.int32), jnp.diff(indptr), total_repeat_length=indices.shape[0]
    )


def _rows_on_device(indptr: Any, indices: Any):
    """The row of every stored entry, computed where the structure lives."""
    return compiled_for(_rows_of, indptr, indices)(indptr, indices)


def structure_arrays(csr: CsrInput, fingerprint: tuple[int, int]):
    """(indptr, indices, rows) as arrays for the jitted core."""
    import jax.numpy as jnp

    if fingerprint != (0, 0):
        resident = on_accelerator(csr.indptr, csr.indices)
        # Arrays already on a GPU are committed to it: memoised per device.
        # The host-made copies are uncommitted and follow the values anywhere.
        key = (
            (fingerprint, tuple(sorted(str(d) for d in csr.indices.devices())))
            if resident
            else fingerprint
        )
        cached = _structure_memo.get(key)
        if cached is None:
            if resident:
                # Already on its device: no host round trip, rows made there.
                cached = (csr.indptr, csr.indices, _rows_on_device(csr.indptr, csr.indices))
            else:
                cached = _device_structure(
                    fingerprint,
                    np.ascontiguousarray(csr.indptr, dtype=np.int32).tobytes(),
                    np.ascontiguousarray(csr.indices, dtype=np.int32).tobytes(),
                )
            with _structure_memo_lock:  # solves may run in several threads
                _structure_memo[key] = cached
                while len(_structure_memo) > 32:
                    _structure_memo.pop(next(iter(_structure_memo)))
        return cached
    n = csr.n_rows
    rows = jnp.repeat(
        jnp.arange(n, dtype=jnp.int32), jnp.diff(csr.indptr), total_repeat_length=csr.nnz
    )
    return csr.indptr, csr.indices, rows


_structure_memo: dict = {}
_structure_memo_lock = threading.Lock()


def coo_to_csr_order(rows: Any, cols: Any, n_rows: int):
    """The CSR layout of COO entries with JAX array operations only (the
    entries may be traced): the permutation that sorts them by row, then
    column, and the row offsets of the sorted entries."""
    import jax.numpy as jnp

    order = jnp.lexsort((cols, rows))
    counts = jnp.bincount(rows, length=n_rows)
    indptr = jnp.concatenate([jnp.zeros((1,), counts.dtype), jnp.cumsum(counts)])
    return order, indptr
