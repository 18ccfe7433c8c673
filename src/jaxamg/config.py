"""Solver configurations in AmgX's JSON vocabulary.

``DEFAULT_CONFIG`` is the configuration every entry point (the JAX API and the
command-line interface) uses when the caller gives none. It reproduces
JAX-AMG's default for ``solve``: BiCGStab preconditioned by one V-cycle of
classical AMG (PMIS coarsening, distance-two interpolation, damped block-Jacobi
smoothing, a dense LU solve on the coarsest level), which JAX-AMG describes as
matching PETSc's AMG defaults.

It is written in nested ``config_version`` 2 form with a named scope for every
solver, because AmgX looks a parameter up only in the scope of the solver that
reads it: a parameter placed in the wrong scope is silently ignored. Two
differences from JAX-AMG's dictionary, neither of which changes the solver:

* the scopes have names (``main``, ``amg``, ``amg_smoother``) instead of the
  generated ``default_sub_solver...`` ones, so statistics and error messages
  name them readably;
* JAX-AMG also sets ``exact_coarse_solve`` in the outer scope, where no solver
  reads it (the string-declared dense LU coarse solver reads the ``default``
  scope), so it is left out.

``monitor_residual`` and ``store_res_history`` are on in the outer scope: every
solve reports its residual and history, as JAX-AMG always injects them.

Shipped configs: the package carries named configs (``configs/*.json``): our
equivalents of AmgX's stock configs (``FGMRES_AGGREGATION``,
``PCG_CLASSICAL_V_JACOBI``, ...) and the tuned ones the benchmarks use
(``PCG_CLASSICAL_AGG1_CHEBY2``, ``PCG_SA_NEAR_NULLSPACE``, ...).
:func:`shipped_configs` lists them, :func:`load` returns one as a dict, and
every entry point accepts a name in place of a dict
(``solve(A, b, config="FGMRES_AGGREGATION")``).

``solve(A, b, config="auto")`` picks one of the tuned configs from what the
matrix and the call say (symmetric or not, scalar or block, a declared null
space); ``info["config_choice"]`` says which and why, and
:func:`auto_config` gives the same choice without solving.
"""

from __future__ import annotations

import copy
import json
from typing import Any

# The defaults and how a user's config becomes the engine's (JAX-AMG's merge
# and validation rules) are written in private modules and published here.
from ._core.auto_config import auto_config
from ._core.config_rules import (
    deep_merge,
    outer_max_iters,
    prepare_config,
    uses_dense_lu_coarse_solver,
    validate_config,
)
from ._core.default_config import DEFAULT_CONFIG
from ._core.shipped_configs import load, shipped_configs

__all__ = [
    "DEFAULT_CONFIG",
    "auto_config",
    "deep_merge",
    "default_config",
    "load",
    "outer_max_iters",
    "prepare_config",
    "shipped_configs",
    "to_json",
    "uses_dense_lu_coarse_solver",
    "validate_config",
]


def default_config() -> dict[str, Any]:
    """A fresh deep copy of :data:`DEFAULT_CONFIG`, safe to modify."""
    return copy.deepcopy(DEFAULT_CONFIG)


def to_json(config: dict[str, Any]) -> str:
    """Deterministic JSON text of a config dictionary (sorted keys, compact)."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"))
