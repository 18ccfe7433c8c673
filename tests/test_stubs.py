"""The committed type stubs of the compiled modules (src/jaxamg/_*.pyi) are
what nanobind's stubgen makes of the built modules: a binding that changes
without `make stubs` fails here, naming the module."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

import jaxamg

PACKAGE = pathlib.Path(jaxamg.__file__).resolve().parent


@pytest.mark.parametrize("module", ["_engine", "_cpu", "_mpi", "_cuda", "_mpi_cuda"])
def test_the_committed_stub_is_the_generated_one(module, tmp_path):
    pytest.importorskip("nanobind.stubgen")
    if importlib.util.find_spec(f"jaxamg.{module}") is None:
        pytest.skip(f"this build has no jaxamg.{module}")
    out = tmp_path / f"{module}.pyi"
    done = subprocess.run(
        [sys.executable, "-m", "nanobind.stubgen", "-q", "-m", f"jaxamg.{module}", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    committed = (PACKAGE / f"{module}.pyi").read_text()
    assert out.read_text() == committed, (
        f"src/jaxamg/{module}.pyi differs from the bindings of jaxamg.{module}; run `make stubs`"
    )
