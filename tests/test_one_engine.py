"""One engine per process: every native module of the package loads the same
engine library (jaxamg/libjaxamg_engine.so), so a config validated through
jaxamg._engine is solved by the very code and registries that validated it.
A module linked to its own copy of the engine answers another address."""

from __future__ import annotations

import importlib
import pathlib


def _native_modules() -> list:
    """The package's native modules that this build has (_mpi, _cuda and
    _mpi_cuda are optional)."""
    modules = []
    for name in ("_engine", "_cpu", "_mpi", "_cuda", "_mpi_cuda"):
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


def test_the_engine_library_exports_no_cxx_runtime():
    """A toolchain that links libstdc++ statically puts a copy of it in the
    engine library. Exported, that copy's locale objects mix with those of
    the system libstdc++ that numpy loads first, and the engine's first
    formatted number crashes; the library is linked with --exclude-libs so
    that it exports none of the runtime's own symbols (std::locale's here)."""
    import shutil
    import subprocess

    import pytest

    if shutil.which("nm") is None:
        pytest.skip("nm (binutils) is not installed")
    engine = importlib.import_module("jaxamg._engine")
    lib = pathlib.Path(engine.__file__).parent / "libjaxamg_engine.so"
    out = subprocess.run(
        ["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True
    ).stdout
    runtime = [line for line in out.splitlines() if "St6locale" in line]
    assert runtime == [], runtime[:5]


def test_the_engine_library_and_every_module_share_the_shared_cxx_runtime():
    """Each native object must load the shared libstdc++: with a static copy
    in each (a toolchain that links it statically), an exception or a runtime
    object that crosses from the engine library to a module belongs to
    another copy, and the process aborts. The build names the shared runtime
    explicitly, so every object lists it among its needed libraries."""
    import shutil
    import subprocess

    import pytest

    if shutil.which("readelf") is None:
        pytest.skip("readelf (binutils) is not installed")
    folder = pathlib.Path(importlib.import_module("jaxamg._engine").__file__).parent
    objects = [folder / "libjaxamg_engine.so"] + [
        pathlib.Path(m.__file__) for m in _native_modules()
    ]
    without = []
    for obj in objects:
        dynamic = subprocess.run(
            ["readelf", "-d", str(obj)], capture_output=True, text=True, check=True
        ).stdout
        if "libstdc++.so" not in dynamic:
            without.append(obj.name)
    assert without == [], f"linked without the shared libstdc++: {without}"
