"""The configuration every entry point uses when the caller gives none.

Published as :data:`jaxamg.config.DEFAULT_CONFIG` (whose module docstring
says what it reproduces and why each scope is named); defined here, below
both ``jaxamg.config`` and the merge rules of :mod:`.config_rules` that
start from it, so neither imports the other.
"""

from __future__ import annotations

from typing import Any

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
