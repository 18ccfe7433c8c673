"""Loads the compiled engine module on first use, with an actionable error."""

from __future__ import annotations

import functools
from types import ModuleType

from .threads import configure_openmp


@functools.cache
def engine() -> ModuleType:
    """Returns ``jaxamg._engine``, importing it on the first call."""
    configure_openmp()
    try:
        # Local: the compiled module loads on first use, after the OpenMP
        # settings above and not on `import jaxamg` (kept free of native code).
        from .. import _engine
    except ImportError as e:
        raise ImportError(
            "jaxamg: the native engine module jaxamg._engine could not be loaded "
            f"({e}); build it with `make` in a source checkout or reinstall with "
            "`pip install .`"
        ) from e
    return _engine
