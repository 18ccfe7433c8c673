"""Exception types shared by the Python layer and the native engine module.

Defined in Python (not in the extension) so that ``jaxamg.ConfigError`` can be
imported, caught and documented without loading any native code.
"""

import re


class ConfigError(ValueError):
    """A solver configuration that cannot be parsed or names an unknown
    solver, parameter or value.

    Subclasses :class:`ValueError`, so ``except ValueError`` also catches it.
    """


# The XLA error code an engine failure crosses the FFI with -> the Python
# exception class. The C++ side of this table is to_ffi_error in
# cpp/ffi/handler_common.h; the engine's kinds are in cpp/engine/core/error.h.
ERROR_CLASS_OF_CODE: dict[str, type[Exception]] = {
    "INVALID_ARGUMENT": ValueError,  # bad input; ConfigError when marked "config: "
    "UNIMPLEMENTED": NotImplementedError,  # a valid request the engine does not provide
    "FAILED_PRECONDITION": RuntimeError,  # a numerical failure (e.g. a singular coarse matrix)
    "INTERNAL": RuntimeError,  # a defect of the engine
}
_CODE = re.compile(r"\b(" + "|".join(ERROR_CLASS_OF_CODE) + r"): ")


def to_runtime_error(e: Exception) -> Exception:
    """An engine error raised through XLA, re-raised as the Python error of
    its kind."""
    text = str(e)
    code = _CODE.search(text)
    if code is None:
        return RuntimeError(f"jaxamg.solve: {text}")
    kind = ERROR_CLASS_OF_CODE[code.group(1)]
    message = text[code.end() :].split("\n")[0]
    if kind is ValueError and message.startswith("config: "):
        kind = ConfigError
    return kind(f"jaxamg.solve: {message}")
