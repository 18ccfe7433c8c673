"""Input normalisation: every accepted matrix form becomes CSR arrays.

``as_csr`` returns a :class:`CsrInput` holding int32 ``indptr``/``indices``
(NumPy when the structure is concrete, JAX arrays when traced), the values
(a JAX array, possibly traced) and the shape. The structure fingerprint that
keys the native solver cache is computed here, once per concrete structure.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import weakref
from typing import Any

import numpy as np


@dataclasses.dataclass(frozen=True)
class CsrInput:
    indptr: Any  # int32 [n + 1]
    indices: Any  # int32 [nnz]
    data: Any  # float [nnz] (JAX array, maybe traced)
    shape: tuple[int, int]
    source: Any  # the user's matrix object (for with_cache metadata)

    @property
    def n_rows(self) -> int:
        return self.shape[0]

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[-1])


def _is_tracer(x: Any) -> bool:
    import jax

    return isinstance(x, jax.core.Tracer)


def is_concrete(*arrays: Any) -> bool:
    return not any(_is_tracer(a) for a in arrays)


_fingerprints: weakref.WeakKeyDictionary[Any, tuple[int, int]] = weakref.WeakKeyDictionary()


def structure_fingerprint(indptr: Any, indices: Any) -> tuple[int, int]:
    """128-bit hash of a concrete CSR structure as two signed int64s.

    (0, 0) means "unknown" (the structure is traced): the native handler then
    fingerprints the buffers itself.
    """
    if not is_concrete(indptr, indices):
        return (0, 0)
    try:
        cached = _fingerprints.get(indices)
    except TypeError:  # not hashable
        cached = _jax_fingerprint(indices)
    if cached is not None:
        return cached
    if int(np.shape(indices)[0]) >= _DEVICE_HASH_MIN_NNZ and on_accelerator(indptr, indices):
        digest = _device_digest(indptr, indices)
    else:
        h = hashlib.blake2b(digest_size=16)
        p = np.ascontiguousarray(np.asarray(indptr), dtype=np.int32)
        i = np.ascontiguousarray(np.asarray(indices), dtype=np.int32)
        h.update(np.int64(p.shape[0] - 1).tobytes())
        h.update(p.tobytes())
        h.update(i.tobytes())
        digest = h.digest()
    hi = int.from_bytes(digest[:8], "little", signed=True)
    lo = int.from_bytes(digest[8:], "little", signed=True)
    if hi == 0 and lo == 0:
        lo = 1
    try:
        _fingerprints[indices] = (hi, lo)
    except TypeError:
        _remember_jax_fingerprint(indices, (hi, lo))
    return (hi, lo)


# A structure of at least this many nonzeros held on a GPU is hashed there:
# copying it to the host and hashing it there takes seconds at 256³ (115M
# nonzeros), while a smaller one is cheaper to copy than to compile a hash for.
_DEVICE_HASH_MIN_NNZ = 1 << 20


def _device_digest(indptr: Any, indices: Any) -> bytes:
    """A 128-bit hash of a GPU-resident structure computed on its device:
    four independently seeded 32-bit lanes, each the wrapping sum over the
    entries of a mix of (position, value); 16 bytes come back to the host."""
    lanes = np.asarray(compiled_for(_hash_lanes_impl, indptr, indices)(indptr, indices))
    return lanes.astype(np.uint32).tobytes()


def compiled_for(fun: Any, *arrays: Any) -> Any:
    """`fun` compiled for the shapes, dtypes and placement of concrete
    `arrays` (memoised): calling it runs now on the arrays' device, also
    while the caller traces, where a jitted call would be staged into that
    trace (and would bake in whatever it computes from constants)."""
    import jax

    specs = tuple(jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding) for a in arrays)
    return _compiled(fun, specs, bool(jax.config.jax_enable_x64))


@functools.lru_cache(maxsize=16)
def _compiled(fun: Any, specs: tuple, x64: bool) -> Any:
    """(`x64` keys the cache: it changes what `fun` computes.)"""
    import jax

    return jax.jit(fun).lower(*specs).compile()


def _mix32(x: Any) -> Any:
    """A 32-bit integer finaliser (xor-shift-multiply, full avalanche)."""
    import jax.numpy as jnp

    x = x ^ (x >> 16)
    x = x * jnp.uint32(0x7FEB352D)
    x = x ^ (x >> 15)
    x = x * jnp.uint32(0x846CA68B)
    return x ^ (x >> 16)


def _hash_lanes_impl(indptr: Any, indices: Any) -> Any:
    import jax
    import jax.numpy as jnp

    def lanes(v, salt):
        v = jax.lax.bitcast_convert_type(v.astype(jnp.int32), jnp.uint32)
        pos = jnp.arange(v.shape[0], dtype=jnp.uint32) * jnp.uint32(0x9E3779B1)
        return [
            jnp.sum(
                _mix32(v ^ _mix32(pos + jnp.uint32((seed ^ salt) & 0xFFFFFFFF))), dtype=jnp.uint32
            )
            for seed in (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344)
        ]

    n = jnp.uint32(indptr.shape[0] - 1)
    ptr_lanes = lanes(indptr, 0x517CC1B7)
    idx_lanes = lanes(indices, 0x2545F491)
    return jnp.stack([_mix32(p ^ _mix32(i + n)) for p, i in zip(ptr_lanes, idx_lanes)])


# JAX arrays are immutable but unhashable: their fingerprints are memoised by
# identity while the array lives (a GPU solve would otherwise copy and hash
# the structure on every call).
_jax_fingerprints: dict[int, tuple[Any, tuple[int, int]]] = {}


def _jax_fingerprint(indices: Any) -> tuple[int, int] | None:
    entry = _jax_fingerprints.get(id(indices))
    return entry[1] if entry is not None and entry[0]() is indices else None


def _remember_jax_fingerprint(indices: Any, fingerprint: tuple[int, int]) -> None:
    if not _is_jax_array(indices):
        return  # NumPy arrays can change in place: no identity memo
    key = id(indices)
    ref = weakref.ref(indices, lambda _, key=key: _jax_fingerprints.pop(key, None))
    _jax_fingerprints[key] = (ref, fingerprint)


def _scipy_sparse():
    import scipy.sparse as sp

    return sp


def on_accelerator(*arrays: Any) -> bool:
    """True when every array is a concrete JAX array stored off the host."""
    import jax

    return all(
        isinstance(a, jax.Array)
        and not _is_tracer(a)
        and all(d.platform != "cpu" for d in a.devices())
        for a in arrays
    )


def as_csr(A: Any, where: str = "jaxamg.solve") -> CsrInput:
    """Converts BCSR, BCOO, SciPy sparse or a dense 2-D array to CSR arrays."""
    import jax.numpy as jnp
    from jax.experimental import sparse as jsparse

    if isinstance(A, jsparse.BCSR):
        if A.n_batch > 0:
            raise ValueError(
                f"`{where}` does not support batched BCSR matrices (n_batch={A.n_batch}); "
                "use jax.vmap over unbatched matrices instead."
            )
        if A.n_dense > 0 or A.ndim != 2:
            raise ValueError(f"`{where}`: `A` must be a 2-D BCSR matrix without dense dimensions.")
        indptr, indices = A.indptr, A.indices
        if (
            is_concrete(indptr, indices)
            and on_accelerator(indices)
            and (indptr.dtype == np.int32 and indices.dtype == np.int32)
        ):
            # On a GPU the arrays stay where they are: a host copy and a new
            # fingerprint per call would cost more than the solve (the
            # fingerprint is memoised per array object).
            pass
        elif is_concrete(indptr, indices):
            indptr = np.asarray(indptr, dtype=np.int32)
            indices = np.asarray(indices, dtype=np.int32)
        else:
            indptr = indptr.astype(jnp.int32)
            indices = indices.astype(jnp.int32)
        return CsrInput(indptr, indices, A.data, tuple(A.shape), A)
    if isinstance(A, jsparse.BCOO):
        if A.n_batch > 0:
            raise ValueError(
                f"`{where}` does not support batched BCOO matrices (n_batch={A.n_batch}); "
                "use jax.vmap over unbatched matrices instead."
            )
        if not is_concrete(A.indices):
            raise ValueError(
                f"`{where}`: a BCOO matrix with traced indices cannot be converted to CSR; "
                "pass a BCSR matrix or keep the indices concrete (outside jit)."
            )
        return as_csr(jsparse.BCSR.from_bcoo(A.sort_indices()), where)
    sp = _scipy_sparse()
    if sp.issparse(A):
        if A.format not in ("csr", "csc", "coo", "bsr", "lil", "dok"):
            raise TypeError(
                f"`{where}`: SciPy sparse format '{A.format}' is not supported; "
                "pass csr, csc, coo, bsr, lil or dok."
            )
        M = A.tocsr()
        M.sum_duplicates()
        M.sort_indices()
        data = jnp.asarray(M.data)
        return CsrInput(
            M.indptr.astype(np.int32), M.indices.astype(np.int32), data, tuple(M.shape), A
        )
    if isinstance(A, np.ndarray) or hasattr(A, "__jax_array__") or _is_jax_array(A):
        if A.ndim != 2:
            raise ValueError(
                f"`{where}`: a dense `A` must be 2-D, got an array of shape {tuple(A.shape)}."
            )
        if not is_concrete(A):
            # Traced dense values: the sparsity is unknown, so use the full
            # pattern. Correct and differentiable; meant for small systems.
            n_rows, n_cols = A.shape
            indptr = np.arange(0, (n_rows + 1) * n_cols, n_cols, dtype=np.int32)
            indices = np.tile(np.arange(n_cols, dtype=np.int32), n_rows)
            return CsrInput(indptr, indices, jnp.reshape(A, (-1,)), (n_rows, n_cols), A)
        M = sp.csr_matrix(np.asarray(A))
        M.sort_indices()
        return CsrInput(
            M.indptr.astype(np.int32),
            M.indices.astype(np.int32),
            jnp.asarray(M.data),
            tuple(M.shape),
            A,
        )
    raise TypeError(
        f"`{where}`: `A` of type {type(A).__name__} is not supported; pass a "
        "jax.experimental.sparse BCSR/BCOO matrix, a SciPy sparse matrix "
        "(csr, csc, coo, bsr, lil, dok), a dense 2-D array, or a callable operator."
    )


def _is_jax_array(x: Any) -> bool:
    import jax

    return isinstance(x, jax.Array)
