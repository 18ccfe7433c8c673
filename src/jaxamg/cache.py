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
    out = []
    for e in entries:
        entry = dict(e)
        entry["device"] = device
        try:
            entry["config"] = json.loads(entry["config"])
        except ValueError:
            pass
        out.append(entry)
    return out


def get_solver_cache_info() -> dict:
    """The native caches: ``{"single_gpu": {"size", "capacity", "entries"},
    "mpi": {...}, "isolated_mode": bool, "total_setups": int}`` (the layout
    JAX-AMG uses; the "single_gpu" section holds single-process solves on any
    device, CPU and CUDA, and "mpi" the distributed solvers of this process).

    Each entry: n_rows, nnz, mode ("float32"/"float64"), block_dim, config
    (as a dict), device ("cpu", "cuda" or "mpi"); single-process entries also
    transpose_solve, structure_hash and the counters setups, resetups and
    reuses; MPI entries n_rows_global, row_start and comm_size.

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
    mpi = _loaded_module("_mpi")
    if mpi is not None:
        raw_mpi = mpi.cache_info()
        mpi_section = {
            "size": raw_mpi["size"],
            "capacity": raw_mpi["capacity"],
            "entries": _decoded(raw_mpi["entries"], "mpi"),
        }
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
    for name in ("_cuda", "_mpi"):
        module = _loaded_module(name)
        if module is not None:
            module.clear_cache()


def finalize() -> None:
    """Clears the caches and releases native resources; safe to call twice."""
    try:
        clear_solver_cache()
    except ImportError:
        pass
