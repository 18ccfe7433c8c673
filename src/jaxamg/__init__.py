"""jaxamg: differentiable sparse linear solves (AMG and Krylov) for JAX.

Importing this package is cheap: neither JAX nor the native engine is loaded
until something that needs them is used. The JAX-facing names below resolve on
first access (module ``__getattr__``), so ``import jaxamg`` followed by the
command-line interface or ``jaxamg.config`` never imports JAX.
"""

import importlib
from typing import TYPE_CHECKING

from ._core import xla_setup as _xla_setup
from ._core.errors import ConfigError
from ._core.threads import configure_openmp as _configure_openmp
from ._version import __version__

# Before any native module loads, also one imported directly (`import
# jaxamg._engine`, which imports this package first): the OpenMP runtime
# reads its wait policy once, when it starts.
_configure_openmp()

# Before the user's first JAX device call: XLA reads XLA_FLAGS once, when its
# backend starts (see _xla_setup: sharded solves compile rank-specific
# programs, which XLA's cross-process GPU autotuning cannot handle).
_xla_setup.disable_shard_autotuning()
_xla_setup.arrange_cpu_collectives()

# Public name -> the private module that defines it, imported on first use.
_LAZY_ATTRIBUTES = {
    "solve": "._solve",
    "AdjointConvergenceWarning": "._core.linear_solve",
    "NullSpaceWarning": ".nullspace",
    "AMGXStatus": "._core.status",
    "with_cache": ".cache",
    "get_solver_cache_info": ".cache",
    "clear_solver_cache": ".cache",
    "finalize": ".cache",
    "make_preconditioner": ".preconditioners",
    "make_lineax_preconditioner": ".preconditioners",
    "cache_coloring": ".sparsity",
    "rigid_body_modes": "._core.aggregation_modes",
    "cache_mpi_metadata": "._dist.solve",
    "make_sharded_vector": "._sharded.layout",
    "make_sharded_matrix": "._sharded.matrix",
    "ShardedMatrix": "._sharded.matrix",
    "make_sharded_solver": "._sharded.solver",
    "ShardedSolve": "._sharded.solver",
}
# The same names for type checkers and the API reference (static analysis
# cannot follow ``__getattr__``; ``import X as X`` marks a re-export); at run
# time they load lazily as above.
if TYPE_CHECKING:
    from ._core.aggregation_modes import rigid_body_modes as rigid_body_modes
    from ._core.linear_solve import AdjointConvergenceWarning as AdjointConvergenceWarning
    from ._core.status import AMGXStatus as AMGXStatus
    from ._dist.solve import cache_mpi_metadata as cache_mpi_metadata
    from ._sharded.layout import make_sharded_vector as make_sharded_vector
    from ._sharded.matrix import ShardedMatrix as ShardedMatrix
    from ._sharded.matrix import make_sharded_matrix as make_sharded_matrix
    from ._sharded.solver import ShardedSolve as ShardedSolve
    from ._sharded.solver import make_sharded_solver as make_sharded_solver
    from ._solve import solve as solve
    from .cache import clear_solver_cache as clear_solver_cache
    from .cache import finalize as finalize
    from .cache import get_solver_cache_info as get_solver_cache_info
    from .cache import with_cache as with_cache
    from .nullspace import NullSpaceWarning as NullSpaceWarning
    from .preconditioners import make_lineax_preconditioner as make_lineax_preconditioner
    from .preconditioners import make_preconditioner as make_preconditioner
    from .sparsity import cache_coloring as cache_coloring

# Public submodules, importable as attributes too (``jaxamg.matrices``). The
# last three are JAX-AMG's module paths, kept as documented re-exports.
_SUBMODULES = (
    "cache",
    "config",
    "matrices",
    "mpi_utils",
    "nullspace",
    "preconditioners",
    "sparsity",
    "utils",
    "sharding",
    "sparsity_tracing",
    "jaxamg",
)

__all__ = ["ConfigError", "__version__", *_LAZY_ATTRIBUTES]


def __getattr__(name: str):
    module = _LAZY_ATTRIBUTES.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value  # later lookups bypass this function
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'jaxamg' has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_LAZY_ATTRIBUTES, *_SUBMODULES})
