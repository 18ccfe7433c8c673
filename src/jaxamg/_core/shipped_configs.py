"""The named configs the package ships (``jaxamg/configs/*.json``).

A name is a file's stem; lookups ignore case and a trailing ``.json``, so
``"fgmres_aggregation"`` and ``"FGMRES_AGGREGATION.json"`` name the same
file. Published by :mod:`jaxamg.config`; :func:`.config_rules.prepare_config`
resolves a name given as ``config=`` through :func:`load`.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

from .errors import ConfigError

_FOLDER = "configs"


@functools.cache
def _files() -> dict[str, Any]:
    """Upper-case name -> the packaged file (a Traversable); the folder is
    part of the installed package, so it is listed once per process."""
    folder = resources.files("jaxamg").joinpath(_FOLDER)
    return {
        entry.name[: -len(".json")].upper(): entry
        for entry in folder.iterdir()
        if entry.name.endswith(".json")
    }


def shipped_configs() -> list[str]:
    """The names :func:`load` accepts, sorted."""
    return sorted(_files())


def load(name: str) -> dict[str, Any]:
    """A shipped config as a fresh dict (safe to modify), by name.

    Raises :class:`jaxamg.ConfigError` naming the shipped configs when
    ``name`` is none of them.
    """
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a config name (str), got {type(name).__name__}.")
    key = name[: -len(".json")] if name.lower().endswith(".json") else name
    files = _files()
    entry = files.get(key.upper())
    if entry is None:
        raise ConfigError(
            f"`config` {name!r} is not a shipped config; the shipped configs are "
            f"{', '.join(sorted(files))}. Pass one of them, or a config dict "
            "(e.g. `json.load(open(path))` for a file)."
        )
    return json.loads(entry.read_text())
