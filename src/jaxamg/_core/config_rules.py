"""How a user's config becomes the engine's config: defaults, merge rules,
validation. Re-exported by :mod:`jaxamg.config`.

The rules follow JAX-AMG so that its users get the same solver:

* a config is *nested* if it has ``config_version`` or a dict ``solver``;
  a flat dict is wrapped as ``{"config_version": 2, "solver": {...}}``;
* the user's outer solver scope is deep-merged over the defaults; if the user
  names a preconditioner that is not AMG, the default AMG block is dropped
  first (no stray AMG keys), and an AMG preconditioner gets its missing
  fields from the AMG defaults;
* ``**kwargs`` are deep-merged last into the outer scope (a string replaces,
  a dict merges);
* ``monitor_residual`` and ``store_res_history`` are always on in the outer
  scope (info needs them); ``save_stats`` adds the print flags.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from .default_config import DEFAULT_CONFIG
from .errors import ConfigError
from .shipped_configs import load as load_shipped

_AMG = "AMG"
_KRYLOV_WITH_RESTART = ("GMRES", "FGMRES")


def deep_merge(base: dict, override: dict) -> dict:
    """A new dict: ``override`` merged into ``base`` (dicts merge recursively,
    anything else replaces)."""
    for name, value in (("base", base), ("override", override)):
        if not isinstance(value, dict):
            raise TypeError(
                f"`deep_merge`: `{name}` must be a dict, got {type(value).__name__} {value!r}; "
                "pass config dictionaries."
            )
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _is_amg(solver: Any) -> bool:
    if isinstance(solver, str):
        return solver == _AMG
    return isinstance(solver, dict) and solver.get("solver") == _AMG


def _user_algorithm(user_outer: dict, kwargs: dict) -> Any:
    """The `algorithm` the user's AMG preconditioner names (keyword argument
    first), or None."""
    for precond in (kwargs.get("preconditioner"), user_outer.get("preconditioner")):
        if isinstance(precond, dict) and "algorithm" in precond:
            return precond["algorithm"]
    return None


def _block_amg_defaults(mpi: bool) -> dict:
    amg = {
        "scope": "amg",
        "solver": "AMG",
        "algorithm": "AGGREGATION",
        "selector": "SIZE_2",
        "smoother": {"scope": "amg_smoother", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.9},
        "presweeps": 1,
        "postsweeps": 1,
        "max_levels": 100,
        "min_coarse_rows": 32,
        "dense_lu_num_rows": 64,
        "coarse_solver": "DENSE_LU_SOLVER",
        "max_iters": 1,
        "cycle": "V",
    }
    if mpi:
        amg["coarse_solver"] = {"scope": "amg_coarse", "solver": "BLOCK_JACOBI", "max_iters": 50}
        del amg["dense_lu_num_rows"]
    return amg


def singular_coarse(amg: dict) -> dict:
    """A declared null space: dense LU would divide by a zero pivot, so the
    coarsest level gets block-Jacobi sweeps on a small grid instead."""
    amg = copy.deepcopy(amg)
    amg["coarse_solver"] = {"scope": "amg_coarse", "solver": "BLOCK_JACOBI", "max_iters": 20}
    amg["min_coarse_rows"] = 8
    amg.pop("dense_lu_num_rows", None)
    return amg


def _amg_scopes(scope: dict):
    """Yields every AMG solver dict in a config tree."""
    if not isinstance(scope, dict):
        return
    if scope.get("solver") == _AMG:
        yield scope
    for key in ("solver", "preconditioner", "smoother", "coarse_solver"):
        child = scope.get(key)
        if isinstance(child, dict):
            yield from _amg_scopes(child)


def prepare_config(
    user_config: dict | None = None,
    save_stats: bool = False,
    mpi: bool = False,
    block_dim: int = 1,
    singular: bool = False,
    **kwargs: Any,
) -> str:
    """The canonical JSON text of the config a solve runs with.

    ``user_config`` is a dict (flat, or nested with ``config_version`` 2), the
    name of a shipped config (:func:`jaxamg.config.shipped_configs`), or None.
    """
    if isinstance(user_config, bytes):
        raise TypeError(
            "`config` must be a dict or a shipped config's name, got bytes; parse JSON text "
            "first, e.g. `config=json.loads(text)`."
        )
    if isinstance(user_config, str):
        if user_config.lstrip().startswith("{"):
            raise TypeError(
                "`config` must be a dict or a shipped config's name, got JSON text; parse it "
                "first, e.g. `config=json.loads(text)`."
            )
        if "=" in user_config:
            raise TypeError(
                f"`config` got AmgX legacy text ({user_config[:40]!r}); pass a dict or a shipped "
                "config's name (the command line reads legacy text: python -m jaxamg solve "
                "--config-string)."
            )
        if user_config.strip().lower() == "auto":
            raise ConfigError(
                "`config='auto'` is chosen per matrix by `jaxamg.solve` on one process; here "
                "(an MPI or sharded solve, or a preconditioner) pass a config dict or a shipped "
                "config's name, e.g. the one `jaxamg.config.auto_config(A)` picks."
            )
        user_config = load_shipped(user_config)
    if user_config is not None and not isinstance(user_config, dict):
        raise TypeError(f"`config` must be a dict or None, got {type(user_config).__name__}.")
    outer = copy.deepcopy(DEFAULT_CONFIG["solver"])
    user = copy.deepcopy(user_config or {})
    version = user.get("config_version", 2)
    if isinstance(version, bool) or version not in (1, 2):
        raise ConfigError(
            f"`config_version` must be 1 or 2 (AmgX's config formats), got {version!r}; use 2 "
            "for nested scopes."
        )
    nested = "config_version" in user or isinstance(user.get("solver"), dict)
    top: dict = {}
    if nested and isinstance(user.get("solver"), dict):
        top = {k: v for k, v in user.items() if k not in ("solver", "config_version")}
        user_outer = user["solver"]
    else:
        user_outer = {k: v for k, v in user.items() if k != "config_version"}

    amg_defaults = outer["preconditioner"]
    # A block system gets aggregation's defaults, unless the user's AMG asks
    # for classical coarsening (unknown-based there): then the scalar ones.
    if block_dim > 1 and _user_algorithm(user_outer, kwargs) != "CLASSICAL":
        amg_defaults = _block_amg_defaults(mpi)
    if singular:
        amg_defaults = singular_coarse(amg_defaults)
    outer["preconditioner"] = amg_defaults

    if "preconditioner" in user_outer and not _is_amg(user_outer["preconditioner"]):
        outer.pop("preconditioner")
    merged = deep_merge(outer, user_outer)
    for key, value in kwargs.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    precond = merged.get("preconditioner")
    if precond == _AMG:
        merged["preconditioner"] = copy.deepcopy(amg_defaults)
    elif _is_amg(precond):
        merged["preconditioner"] = deep_merge(amg_defaults, precond)
    merged["monitor_residual"] = 1
    merged["store_res_history"] = 1
    if save_stats:
        merged["print_solve_stats"] = 1
        for amg in _amg_scopes(merged):
            amg["print_grid_stats"] = 1
    config = {"config_version": 2, **top, "solver": merged}
    if singular:
        # A declared null space: a DENSE_LU_SOLVER coarse solve pins its zero
        # pivots instead of failing (the engine's extension parameter).
        config.setdefault("x_singular_system", 1)
    validate_config(config, mpi=mpi, block_dim=block_dim)
    return json.dumps(config, sort_keys=True, separators=(",", ":"))


def _positive(scope: dict, key: str, where: str) -> None:
    if key in scope:
        value = scope[key]
        if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
            raise ConfigError(f"`{key}` in {where} must be a positive number, got {value!r}.")


def _non_negative(scope: dict, key: str, where: str) -> None:
    if key in scope:
        value = scope[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ConfigError(f"`{key}` in {where} must be an integer >= 0, got {value!r}.")


_JSON_SCALARS = (str, int, float, bool)


def _check_values(tree: Any, path: str) -> None:
    """Every key a string and every value JSON-representable and finite.

    Without this, a NaN tolerance reaches the engine as the text ``NaN`` (and
    is reported as broken JSON), a ``None`` value becomes ``null`` and is
    silently ignored (the default is used), and an object or a non-string key
    fails in ``json.dumps`` with a message that names no key.
    """
    if isinstance(tree, dict):
        for key, value in tree.items():
            if not isinstance(key, str):
                raise TypeError(
                    f"config keys must be strings, got {key!r} ({type(key).__name__}) in "
                    f"{path or 'the top level'}; name parameters with strings."
                )
            _check_values(value, f"{path}.{key}" if path else key)
        return
    if isinstance(tree, (list, tuple)):
        for i, value in enumerate(tree):
            _check_values(value, f"{path}[{i}]")
        return
    if tree is None:
        raise ConfigError(
            f"config parameter `{path}` is None; give it a value, or leave the key out to get "
            "the default."
        )
    if not isinstance(tree, _JSON_SCALARS):
        raise TypeError(
            f"config parameter `{path}` has a value of type {type(tree).__name__} ({tree!r}); "
            "pass a Python str, int, float, bool or dict (e.g. int(value) for a NumPy integer)."
        )
    if isinstance(tree, float) and not math.isfinite(tree):
        raise ConfigError(f"config parameter `{path}` is {tree!r}; pass a finite number.")


def validate_config(cfg: dict, *, mpi: bool = False, block_dim: int = 1) -> None:
    """Checks a nested config before any native call; raises ConfigError
    (a ValueError) or TypeError naming the offending key."""
    _check_values(cfg, "")
    outer = cfg.get("solver")
    if not isinstance(outer, dict):
        raise ConfigError("the config needs a `solver` scope (a dict naming the outer solver).")
    communicator = cfg.get("communicator", outer.get("communicator"))
    if communicator is not None and communicator not in ("MPI", "MPI_DIRECT"):
        raise ConfigError(f"`communicator` must be 'MPI' or 'MPI_DIRECT', got {communicator!r}.")
    _positive(outer, "max_iters", "the outer solver")
    _positive(outer, "tolerance", "the outer solver")
    if outer.get("solver") in _KRYLOV_WITH_RESTART:
        _positive(outer, "gmres_n_restart", f"{outer['solver']}")
    for amg in _amg_scopes(outer):
        where = f"the AMG scope '{amg.get('scope', '?')}'"
        for key in ("max_iters", "max_levels", "dense_lu_num_rows", "min_coarse_rows"):
            _positive(amg, key, where)
        for key in ("presweeps", "postsweeps"):
            _non_negative(amg, key, where)
        smoother = amg.get("smoother")
        if smoother is not None and not isinstance(smoother, (str, dict)):
            raise TypeError(
                f"`smoother` in {where} must be a solver name or a dict, "
                f"got {type(smoother).__name__}."
            )
        if mpi and block_dim > 1 and amg.get("algorithm", "CLASSICAL") == "CLASSICAL":
            raise ConfigError(
                f"{where}: classical AMG does not support block_dim={block_dim} on a matrix "
                "distributed over several processes; use `algorithm: AGGREGATION` (the block "
                "default) or block_dim=1."
            )
        if mpi and block_dim > 1 and _names_dense_lu(amg.get("coarse_solver")):
            raise ConfigError(
                f"{where}: DENSE_LU_SOLVER as coarse solver is not supported for distributed "
                "block systems; use a BLOCK_JACOBI coarse solver."
            )
        if mpi and amg.get("x_amg_precision") == "FLOAT":
            raise ConfigError(
                f"{where}: x_amg_precision FLOAT (a float32 hierarchy in a float64 solve) does "
                "not run on a matrix distributed over several processes; use SAME, the nearest "
                "(the hierarchy in the solve's precision), or float32 inputs for a float32 solve."
            )
        if mpi and _names(amg.get("smoother"), "MULTICOLOR_DILU"):
            if amg.get("dense_lu_num_rows", 1) <= 1 or amg.get("min_coarse_rows", 1) <= 1:
                raise ConfigError(
                    f"{where}: a MULTICOLOR_DILU smoother under MPI needs coarse levels larger "
                    "than one row; set dense_lu_num_rows and min_coarse_rows (e.g. 64)."
                )
    if mpi and block_dim > 1 and outer.get("solver") == "DENSE_LU_SOLVER":
        raise ConfigError(
            "DENSE_LU_SOLVER as the outer solver is not supported for distributed block systems."
        )


def _names(solver: Any, name: str) -> bool:
    return solver == name or (isinstance(solver, dict) and solver.get("solver") == name)


def _names_dense_lu(solver: Any) -> bool:
    return _names(solver, "DENSE_LU_SOLVER")


def outer_max_iters(config_str: str) -> int:
    """The outer solver's max_iters (sizes the residual history); 100 if the
    text is not JSON or the value is missing, invalid or <= 0."""
    try:
        value = json.loads(config_str)["solver"]["max_iters"]
    except (ValueError, KeyError, TypeError):
        return 100
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        return 100
    return value


def uses_amg(config_str: str) -> bool:
    """Whether the config text's solver tree has an AMG scope; True for text
    that is not a JSON config (the engine decides then)."""
    try:
        outer = json.loads(config_str)["solver"]
    except (ValueError, KeyError, TypeError):
        return True
    return any(True for _ in _amg_scopes(outer))


def uses_dense_lu_coarse_solver(config_str: str) -> bool:
    """Whether any AMG scope of the config text solves its coarsest level with
    DENSE_LU_SOLVER (the default when ``coarse_solver`` is not set); False for
    text that is not a config."""
    try:
        outer = json.loads(config_str)["solver"]
    except (ValueError, KeyError, TypeError):
        return False
    return any(
        _names_dense_lu(amg.get("coarse_solver", "DENSE_LU_SOLVER")) for amg in _amg_scopes(outer)
    )
