"""Loads the compiled engine module on first use, with an actionable error."""

from __future__ import annotations

import functools
from types import ModuleType


@functools.cache
def engine() -> ModuleType:
    """Returns ``jaxamg._engine``, importing it on the first call."""
    from .threads import configure_openmp

    configure_openmp()
    try:
        from .. import _engine
    except ImportError as e:
        raise ImportError(
            "jaxamg: the native engine module jaxamg._engine could not be loaded "
            f"({e}); build it with `make` in a source checkout or reinstall with "
            "`pip install .`"
        ) from e
    return _engine
