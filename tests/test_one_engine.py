"""One engine per process: every native module of the package loads the same
engine library (jaxamg/libjaxamg_engine.so), so a config validated through
jaxamg._engine is solved by the very code and registries that validated it.
A module linked to its own copy of the engine answers another address."""

from __future__ import annotations

import importlib
import pathlib


def _native_modules() -> list:
    """The package's native modules that this build has (_mpi and _cuda are
    optional)."""
    modules = []
    for name in ("_engine", "_cpu", "_mpi", "_cuda"):
        try:
            modules.append(importlib.import_module(f"jaxamg.{name}"))
        except ImportError:
            continue
    return modules


def test_every_native_module_uses_one_engine():
    modules = _native_modules()
    names = {m.__name__ for m in modules}
    assert {"jaxamg._engine", "jaxamg._cpu"} <= names
    instances = {m.__name__: m.engine_instance() for m in modules}
    assert len(set(instances.values())) == 1, instances


def test_the_engine_library_sits_beside_the_modules():
    engine = importlib.import_module("jaxamg._engine")
    folder = pathlib.Path(engine.__file__).parent
    assert (folder / "libjaxamg_engine.so").is_file()
