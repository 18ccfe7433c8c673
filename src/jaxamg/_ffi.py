"""The XLA FFI call of the native solver.

The extension module ``jaxamg._cpu`` is imported on first use (so that
``import jaxamg`` stays fast); its handlers are registered with JAX for the
"cpu" platform under the name ``jaxamg_solve``.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

_lock = threading.Lock()
_registered = False


@functools.lru_cache(maxsize=None)
def native():
    """The compiled module; raises ImportError with guidance if missing."""
    from ._threads import configure_openmp

    configure_openmp()
    try:
        from jaxamg import _cpu  # type: ignore[attr-defined]
    except ImportError as e:  # pragma: no cover - depends on the build
        raise ImportError(
            "jaxamg's native module `jaxamg._cpu` could not be loaded "
            f"({e}). Reinstall the package (`make` or `pip install .`) so that the "
            "C++ extension is built for this Python."
        ) from e
    return _cpu


def ensure_registered() -> None:
    global _registered
    if _registered:
        return
    with _lock:
        if _registered:
            return
        import jax

        for name, capsule in native().registrations().items():
            jax.ffi.register_ffi_target(name, capsule, platform="cpu")
        _registered = True


def solve_call(
    indptr: Any,
    indices: Any,
    data: Any,
    b: Any,
    x0: Any,
    *,
    config: str,
    structure: tuple[int, int],
    transpose: bool,
    use_x0: bool,
    reuse_setup: bool,
    block_dim: int,
    history_len: int,
):
    """One native solve: returns (x, stats) with stats = [iterations, residual,
    status, history...] (NaN-padded to ``history_len``)."""
    import jax
    import numpy as np

    ensure_registered()
    stats_shape = jax.ShapeDtypeStruct(b.shape[:-1] + (3 + history_len,), b.dtype)
    call = jax.ffi.ffi_call(
        "jaxamg_solve",
        (jax.ShapeDtypeStruct(b.shape, b.dtype), stats_shape),
        vmap_method="expand_dims",
    )
    return call(
        indptr,
        indices,
        data,
        b,
        x0,
        config=config,
        structure_hi=np.int64(structure[0]),
        structure_lo=np.int64(structure[1]),
        transpose=bool(transpose),
        use_x0=bool(use_x0),
        reuse_setup=bool(reuse_setup),
        block_dim=np.int64(block_dim),
        history_len=np.int64(history_len),
    )
