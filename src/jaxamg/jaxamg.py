"""JAX-AMG's main module path, ``jaxamg.jaxamg``, for code that imports from it.

A documented re-export: :func:`solve` lives in ``jaxamg._solve``,
:class:`AMGXStatus` in ``jaxamg._core.status``, the cache functions in
:mod:`jaxamg.cache`, :func:`cache_coloring` in :mod:`jaxamg.sparsity` and the
helpers JAX-AMG star-imported here in :mod:`jaxamg.utils`; each is the same
object as the top-level ``jaxamg.<name>``.

``HAS_MPI`` is True when this installation can run MPI solves: jaxamg was
built with its MPI module (``jaxamg._mpi``) and mpi4py is installed. Neither
is loaded to find out (loading the MPI module needs an MPI library).
"""

import importlib.util

from ._core.status import AMGXStatus
from ._solve import solve
from .cache import (
    cache_mpi_metadata,
    clear_solver_cache,
    finalize,
    get_solver_cache_info,
    with_cache,
)
from .sparsity import cache_coloring
from .utils import (
    deep_merge,
    ensure_int64_array,
    format_amgx_stats,
    get_preferred_dtype,
    temp_enable_x64,
    to_bcsr_matrix,
    to_scipy,
)


def _found(name: str) -> bool:
    """Whether `name` can be imported, without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


HAS_MPI = _found("mpi4py") and _found("jaxamg._mpi")

__all__ = [
    "HAS_MPI",
    "AMGXStatus",
    "solve",
    "with_cache",
    "cache_coloring",
    "cache_mpi_metadata",
    "get_solver_cache_info",
    "clear_solver_cache",
    "finalize",
    "to_scipy",
    "get_preferred_dtype",
    "to_bcsr_matrix",
    "format_amgx_stats",
    "deep_merge",
    "temp_enable_x64",
    "ensure_int64_array",
]
