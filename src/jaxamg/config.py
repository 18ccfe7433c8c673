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
"""

from __future__ import annotations

import copy
import json
from typing import Any

# How a user's config becomes the engine's (JAX-AMG's merge and validation
# rules) is written in a private module and published here.
from ._config_rules import (
    outer_max_iters,
    prepare_config,
    uses_dense_lu_coarse_solver,
    validate_config,
)

__all__ = [
    "DEFAULT_CONFIG",
    "default_config",
    "outer_max_iters",
    "prepare_config",
    "to_json",
    "uses_dense_lu_coarse_solver",
    "validate_config",
]

DEFAULT_CONFIG: dict[str, Any] = {
    "config_version": 2,
    "solver": {
        "scope": "main",
        "solver": "PBICGSTAB",
        "convergence": "RELATIVE_INI",
        "tolerance": 1e-6,
        "max_iters": 1000,
        "norm": "L2",
        "monitor_residual": 1,
        "store_res_history": 1,
        "preconditioner": {
            "scope": "amg",
            "solver": "AMG",
            "algorithm": "CLASSICAL",
            "selector": "PMIS",
            "interpolator": "D2",
            "smoother": {
                "scope": "amg_smoother",
                "solver": "BLOCK_JACOBI",
                "relaxation_factor": 0.9,
            },
            "presweeps": 1,
            "postsweeps": 1,
            "max_levels": 100,
            "strength_threshold": 0.5,
            "dense_lu_num_rows": 1,
            "aggressive_levels": 0,
            "coarse_solver": "DENSE_LU_SOLVER",
            "max_iters": 1,
            "cycle": "V",
        },
    },
}


def default_config() -> dict[str, Any]:
    """A fresh deep copy of :data:`DEFAULT_CONFIG`, safe to modify."""
    return copy.deepcopy(DEFAULT_CONFIG)


def to_json(config: dict[str, Any]) -> str:
    """Deterministic JSON text of a config dictionary (sorted keys, compact)."""
    return json.dumps(config, sort_keys=True, separators=(",", ":"))


# The merge and validation rules live beside the defaults' users; they are
# part of this module's public surface.
from ._config_rules import (  # noqa: E402
    deep_merge,
    outer_max_iters,
    prepare_config,
    uses_dense_lu_coarse_solver,
    validate_config,
)

__all__ += [
    "deep_merge",
    "outer_max_iters",
    "prepare_config",
    "uses_dense_lu_coarse_solver",
    "validate_config",
]
