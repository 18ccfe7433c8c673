"""The name under which the compiled engine module finds ``ConfigError``.

``jaxamg._engine`` (cpp/bindings/engine_module.cc) imports
``jaxamg._errors.ConfigError`` to raise it for a bad config; the class is
defined in :mod:`jaxamg._core.errors`. This module sits beside the compiled
modules because it is part of their interface.
"""

from ._core.errors import ConfigError

__all__ = ["ConfigError"]
