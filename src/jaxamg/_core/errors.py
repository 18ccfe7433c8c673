"""Exception types shared by the Python layer and the native engine module.

Defined in Python (not in the extension) so that ``jaxamg.ConfigError`` can be
imported, caught and documented without loading any native code.
"""


class ConfigError(ValueError):
    """A solver configuration that cannot be parsed or names an unknown
    solver, parameter or value.

    Subclasses :class:`ValueError`, so ``except ValueError`` also catches it.
    """


def to_runtime_error(e: Exception) -> Exception:
    """An engine error raised through XLA, re-raised as a Python error."""
    text = str(e)
    for prefix, kind in (
        ("INVALID_ARGUMENT: ", ValueError),
        ("UNIMPLEMENTED: ", NotImplementedError),
        ("INTERNAL: ", RuntimeError),
    ):
        if prefix in text:
            message = text.split(prefix, 1)[1].split("\n")[0]
            if kind is ValueError and message.startswith("config: "):
                kind = ConfigError  # the engine marks its config errors so
            return kind(f"jaxamg.solve: {message}")
    return RuntimeError(f"jaxamg.solve: {text}")
