"""Caching: metadata attached to matrices and operators (`with_cache`,
`cache_mpi_metadata`) and the native solver cache (`get_solver_cache_info`,
`clear_solver_cache`, `finalize`).

`with_cache` lives in ``jaxamg._core.metadata`` and `cache_mpi_metadata` in
``jaxamg._dist.solve`` (the MPI path, whose host-side work it does); both are
re-exported here, where JAX-AMG has them.

The native cache keys a set-up solver by the sparsity structure (a 128-bit
fingerprint computed once in Python when the structure is concrete), the
config, the dtype and the block size. A call with the same values reuses the
setup; new values on the same pattern trigger a resetup that keeps the
coarsening. Its capacity is ``JAXAMG_CACHE_SIZE`` (default 8; 0 disables
reuse).
"""

from __future__ import annotations

import json
from typing import Any

from ._core.ffi import native
from ._core.metadata import with_cache
from ._dist.solve import cache_mpi_metadata

__all__ = [
    "with_cache",
    "cache_mpi_metadata",
    "get_solver_cache_info",
    "clear_solver_cache",
    "finalize",
]


def _loaded_module(name: str) -> Any:
    """The native module ``jaxamg.<name>`` if it has been imported, else None
    (a cache that was never used holds nothing: no need to load it)."""
    import sys

    return sys.modules.get(f"jaxamg.{name}")


def _decoded(entries: Any, device: str) -> list:
    """The native entries with JAX-AMG's key types: ``config`` parsed back
    into a dict, ``structure_hash`` an int (the engine prints its 128-bit
    key as hex), and the MPI entries' names ``n_local``, ``n_global``,
    ``lrank`` and ``transpose_solve`` beside ours."""
    out = []
    for e in entries:
        entry = dict(e)
        entry["device"] = device
        try:
            entry["config"] = json.loads(entry["config"])
        except ValueError:
            pass
        if isinstance(entry.get("structure_hash"), str):
            entry["structure_hash"] = int(entry["structure_hash"], 16)
        if device == "mpi":
            entry["n_local"] = entry["n_rows"]
            entry["n_global"] = entry["n_rows_global"]
            entry["lrank"] = _local_device_index()
            # One distributed solver serves the forward and the adjoint solve
            # (the engine transposes the forward hierarchy); there is never a
            # separate A^T entry, and the engine does not record whether the
            # adjoint has run on this one.
            entry["transpose_solve"] = bool(entry.get("transpose_solve", False))
        out.append(entry)
    return out


def _local_device_index() -> int:
    """The index among ``jax.local_devices()`` of the device this process's
    solves run on: JAX's default device (JAX-AMG's ``lrank``, the GPU a rank
    uses)."""
    import jax

    default = jax.config.jax_default_device  # type: ignore[attr-defined]
    local = jax.local_devices()
    if isinstance(default, jax.Device) and default in local:
        return local.index(default)
    return 0


def get_solver_cache_info() -> dict:
    """The native solver caches, in JAX-AMG's layout plus our keys::

        {"single_gpu": {"size", "capacity", "entries": [...]},
         "mpi":        {"size", "capacity", "entries": [...]},
         "isolated_mode": bool,        # capacity 0: no reuse
         "total_setups": int}          # ours

    "single_gpu" holds the single-process solvers on any device (CPU and
    CUDA), "mpi" the distributed solvers of this process.

    JAX-AMG's entry keys, with its types:

    - every entry: ``n_rows`` (int), ``nnz`` (int), ``mode`` ("float32" or
      "float64"), ``transpose_solve`` (bool), ``block_dim`` (int),
      ``config`` (the config as a dict);
    - single-process entries: ``structure_hash`` (int, the 128-bit
      fingerprint of the sparsity pattern the entry is keyed by);
    - MPI entries: ``n_local`` (this rank's rows, = ``n_rows``),
      ``n_global`` (int), ``lrank`` (the index of the local device the
      process solves on: JAX's default device among ``jax.local_devices()``).

    ``transpose_solve`` is True once a single-process entry has served an
    adjoint (A^T) solve of a gradient: the engine solves with the transpose
    of the forward hierarchy, so there is no separate A^T entry as in
    JAX-AMG. An MPI entry serves both directions the same way and the engine
    does not record the adjoint's use, so it is False there.

    Our extra keys: ``device`` ("cpu", "cuda" or "mpi") on every entry;
    ``setups``, ``resetups`` and ``reuses`` (counters) on single-process
    entries; ``n_rows_global``, ``row_start`` and ``comm_size`` on MPI
    entries; ``total_setups`` at the top.

    The counters count solves that have run. JAX dispatches asynchronously,
    so a solve whose result nobody has waited for may not be counted yet:
    call ``jax.block_until_ready`` on its result first.
    """
    raw = native().cache_info()
    entries = _decoded(raw["entries"], "cpu")
    total_setups = raw["total_setups"]
    cuda = _loaded_module("_cuda")
    if cuda is not None:
        raw_cuda = cuda.cache_info()
        entries += _decoded(raw_cuda["entries"], "cuda")
        total_setups += raw_cuda["total_setups"]
    mpi_section = {"size": 0, "capacity": raw["capacity"], "entries": []}
    # The CPU processes' MPI cache, and the GPU processes' (its own module).
    for name in ("_mpi", "_mpi_cuda"):
        mpi = _loaded_module(name)
        if mpi is not None:
            raw_mpi = mpi.cache_info()
            mpi_section["size"] += raw_mpi["size"]
            mpi_section["capacity"] = raw_mpi["capacity"]
            mpi_section["entries"] += _decoded(raw_mpi["entries"], "mpi")
    return {
        "single_gpu": {"size": len(entries), "capacity": raw["capacity"], "entries": entries},
        "mpi": mpi_section,
        "isolated_mode": raw["capacity"] == 0,
        "total_setups": total_setups,
    }


def clear_solver_cache() -> None:
    """Frees every cached solver of this process — CPU, CUDA (its device
    memory returns to the driver) and MPI — so the next solve sets up from
    scratch. Under MPI it is local to the calling process and safe to call
    on some processes only."""
    native().clear_cache()
    for name in ("_cuda", "_mpi", "_mpi_cuda"):
        module = _loaded_module(name)
        if module is not None:
            module.clear_cache()


def finalize() -> None:
    """Clears the caches and releases native resources; safe to call twice."""
    try:
        clear_solver_cache()
    except ImportError:
        pass
