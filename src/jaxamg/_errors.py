"""Exception types shared by the Python layer and the native engine module.

Defined in Python (not in the extension) so that ``jaxamg.ConfigError`` can be
imported, caught and documented without loading any native code.
"""


class ConfigError(ValueError):
    """A solver configuration that cannot be parsed or names an unknown
    solver, parameter or value.

    Subclasses :class:`ValueError`, so ``except ValueError`` also catches it.
    """
