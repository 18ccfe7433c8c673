"""Every public name has a docstring: the API reference (docs/api.md) is
generated from them, so a missing one is a hole in the documentation.

Public means: the names of ``jaxamg.__all__``, the ``__all__`` of each public
submodule, and the public functions of ``jaxamg.mpi_utils``; for a class, also
its public methods and properties. ``make docs`` runs this file.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

import jaxamg

SUBMODULES = (
    "cache",
    "config",
    "matrices",
    "mpi_utils",
    "nullspace",
    "preconditioners",
    "sparsity",
    "utils",
)
# Module-level data whose documentation is the module's text, not a docstring.
DATA_NAMES = {"__version__", "DEFAULT_CONFIG", "DEFAULT_PRECONDITIONER_CONFIG"}


def _public_names() -> list[tuple[str, object]]:
    names = [(f"jaxamg.{n}", getattr(jaxamg, n)) for n in jaxamg.__all__ if n not in DATA_NAMES]
    for sub in SUBMODULES:
        module = importlib.import_module(f"jaxamg.{sub}")
        listed = getattr(module, "__all__", None)
        if listed is None:  # no __all__: its own public functions and classes
            listed = [
                n
                for n, v in vars(module).items()
                if not n.startswith("_")
                and (inspect.isfunction(v) or inspect.isclass(v))
                and v.__module__ == module.__name__
            ]
        names.extend(
            (f"jaxamg.{sub}.{n}", getattr(module, n))
            for n in dict.fromkeys(listed)
            if n not in DATA_NAMES
        )
    members = []
    for qualname, obj in names:
        if inspect.isclass(obj) and obj.__module__.startswith("jaxamg"):
            for attr, value in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if inspect.isfunction(value) or isinstance(
                    value, (property, classmethod, staticmethod)
                ):
                    members.append((f"{qualname}.{attr}", value))
    return names + members


PUBLIC = _public_names()


def test_public_surface_is_not_empty():
    assert len(PUBLIC) > 50


def test_submodules_are_documented():
    for sub in ("", *SUBMODULES):
        module = importlib.import_module(f"jaxamg.{sub}" if sub else "jaxamg")
        assert (module.__doc__ or "").strip(), f"module {module.__name__} has no docstring"


@pytest.mark.parametrize("qualname,obj", PUBLIC, ids=[q for q, _ in PUBLIC])
def test_public_name_has_docstring(qualname, obj):
    target = obj.fget if isinstance(obj, property) else obj
    if isinstance(target, (classmethod, staticmethod)):
        target = target.__func__
    doc = target.__doc__ if isinstance(target, type) and target.__doc__ else inspect.getdoc(target)
    assert doc and doc.strip(), (
        f"{qualname} has no docstring; write one (the API reference in docs/api.md is built "
        "from it)."
    )


def test_lazy_names_are_visible_to_static_analysis():
    """The TYPE_CHECKING imports of jaxamg/__init__.py (what type checkers and
    the API reference see) name the same module for each lazy attribute."""
    import ast
    import pathlib

    tree = ast.parse(pathlib.Path(jaxamg.__file__).read_text())
    static = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                for alias in imp.names:
                    static[alias.name] = "." * imp.level + (imp.module or "")
    assert static == jaxamg._LAZY_ATTRIBUTES


def test_api_reference_lists_every_public_name():
    """docs/api.md renders each name of jaxamg.__all__ and each public submodule."""
    import pathlib

    api = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "api.md").read_text()
    listed = {
        line.split(":::", 1)[1].strip() for line in api.splitlines() if line.startswith(":::")
    }
    wanted = {f"jaxamg.{n}" for n in jaxamg.__all__ if n not in DATA_NAMES}
    wanted |= {f"jaxamg.{sub}" for sub in SUBMODULES}
    assert not wanted - listed, f"docs/api.md misses {sorted(wanted - listed)}"
