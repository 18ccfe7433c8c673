"""The XLA FFI call of the native solver.

The extension module ``jaxamg._cpu`` is imported on first use (so that
``import jaxamg`` stays fast); its handlers are registered with JAX for the
"cpu" platform under the name ``jaxamg_solve``.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from .threads import configure_openmp

# The entries of a native call's stats row before the residual history:
# iterations, final residual, status, and where the setup and the solve ran
# (PLACE_* bits; handler_common.h's Place).
STATS_HEAD = 4
PLACE_SOLVE_ON_DEVICE = 1
PLACE_SETUP_ON_DEVICE = 2

_lock = threading.Lock()
_registered = False


@functools.cache
def native():
    """The compiled module; raises ImportError with guidance if missing."""
    configure_openmp()
    try:
        # Local: the compiled module loads on first use, after the OpenMP
        # settings above and not on `import jaxamg` (kept free of native code).
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
        cuda = cuda_native()
        if cuda is not None:
            # Same target names: XLA runs the handler of the array's platform.
            for name, capsule in cuda.registrations().items():
                jax.ffi.register_ffi_target(name, capsule, platform="CUDA")
        _registered = True


@functools.cache
def cuda_native():
    """``jaxamg._cuda`` when this build has it and JAX has a GPU backend, else None."""
    import jax

    try:
        if not jax.devices("gpu"):
            return None
    except RuntimeError:  # no GPU backend in this JAX
        return None
    try:
        # Local: optional (a build without the CUDA backend has no _cuda).
        from jaxamg import _cuda  # type: ignore[attr-defined]
    except ImportError:  # built without the CUDA backend
        return None
    return _cuda


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
    near_nullspace: Any = None,
):
    """One native solve: returns (x, stats) with stats = [iterations, residual,
    status, place, history...] (NaN-padded to ``history_len``). With `near_nullspace`
    (an (n, m) array in the values' dtype) the call goes to
    ``jaxamg_solve_nns``, which hands the vectors to smoothed aggregation."""
    import jax
    import numpy as np

    ensure_registered()
    stats_shape = jax.ShapeDtypeStruct(b.shape[:-1] + (STATS_HEAD + history_len,), b.dtype)
    call = jax.ffi.ffi_call(
        "jaxamg_solve" if near_nullspace is None else "jaxamg_solve_nns",
        (jax.ShapeDtypeStruct(b.shape, b.dtype), stats_shape),
        vmap_method="expand_dims",
    )
    operands = (indptr, indices, data, b, x0)
    if near_nullspace is not None:
        operands += (near_nullspace,)
    return call(
        *operands,
        config=config,
        structure_hi=np.int64(structure[0]),
        structure_lo=np.int64(structure[1]),
        transpose=bool(transpose),
        use_x0=bool(use_x0),
        reuse_setup=bool(reuse_setup),
        block_dim=np.int64(block_dim),
        history_len=np.int64(history_len),
    )


# ---- MPI: jaxamg._mpi (built only when CMake finds MPI) -----------------------
_mpi_registered = False


@functools.cache
def mpi_native():
    """The MPI module; raises RuntimeError if this build has none."""
    configure_openmp()
    try:
        # Local: optional (a build without MPI has no _mpi); loads on first use.
        from jaxamg import _mpi  # type: ignore[attr-defined]
    except ImportError as e:
        raise RuntimeError(
            "`jaxamg.solve`: this jaxamg was built without MPI support (the native module "
            f"`jaxamg._mpi` could not be loaded: {e}). Install an MPI (e.g. Debian's "
            "libopenmpi-dev and openmpi-bin) and rebuild jaxamg (`make` or `pip install .`)."
        ) from e
    return _mpi


@functools.cache
def mpi_cuda_native() -> Any:
    """The MPI targets for CUDA devices (jaxamg._mpi_cuda), or None in a
    build without them."""
    try:
        # Local: optional (built with MPI and the CUDA backend only).
        from jaxamg import _mpi_cuda  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _mpi_cuda


def mpi_available() -> bool:
    """True when the MPI module exists and reports itself usable."""
    try:
        return bool(mpi_native().available())
    except RuntimeError:
        return False


def ensure_mpi_registered() -> None:
    """Registers the MPI handlers (jaxamg_solve_mpi, jaxamg_mpi_gather_columns)
    for the "cpu" platform, beside the single-process ones, and for "CUDA"
    when this build has them (jaxamg._mpi_cuda) and JAX has a GPU backend
    (the setup on the host, the solve on the device)."""
    global _mpi_registered
    if _mpi_registered:
        return
    with _lock:
        if _mpi_registered:
            return
        import jax

        module = mpi_native()
        for name, capsule in module.registrations().items():
            jax.ffi.register_ffi_target(name, capsule, platform="cpu")
        if _has_gpu_backend():
            cuda_module = mpi_cuda_native()
            if cuda_module is not None:
                for name, capsule in cuda_module.registrations().items():
                    jax.ffi.register_ffi_target(name, capsule, platform="CUDA")
        _mpi_registered = True


def _has_gpu_backend() -> bool:
    import jax

    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:  # no GPU backend in this JAX
        return False


def solve_mpi_call(
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
    comm: int,
    row_start: int,
    nglobal: int,
):
    """One collective native solve on this rank's rows (global columns):
    returns (x_local, stats), stats identical on every rank."""
    import jax
    import numpy as np

    ensure_mpi_registered()
    stats_shape = jax.ShapeDtypeStruct(b.shape[:-1] + (STATS_HEAD + history_len,), b.dtype)
    call = jax.ffi.ffi_call(
        "jaxamg_solve_mpi",
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
        comm=np.int64(comm),
        row_start=np.int64(row_start),
        nglobal=np.int64(nglobal),
    )


def gather_columns_call(
    indptr: Any,
    indices: Any,
    x: Any,
    *,
    structure: tuple[int, int],
    comm: int,
    row_start: int,
    nglobal: int,
):
    """x_global[indices] for this rank's pattern, by a halo exchange (only the
    boundary values travel). Collective."""
    import jax
    import numpy as np

    ensure_mpi_registered()
    call = jax.ffi.ffi_call(
        "jaxamg_mpi_gather_columns",
        jax.ShapeDtypeStruct(x.shape[:-1] + indices.shape[-1:], x.dtype),
        # One exchange per lane, the same count on every rank.
        vmap_method="sequential",
    )
    return call(
        indptr,
        indices,
        x,
        comm=np.int64(comm),
        row_start=np.int64(row_start),
        nglobal=np.int64(nglobal),
        structure_hi=np.int64(structure[0]),
        structure_lo=np.int64(structure[1]),
    )
