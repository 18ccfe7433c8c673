"""The package surface: version, lazy attributes, what importing loads."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

import jaxamg


def loaded_after(code: str) -> list[str]:
    """Heavy modules present after running `code` in a fresh interpreter."""
    probe = (
        f"{code}\n"
        "import sys\n"
        "heavy = ('jax', 'jaxlib', 'jaxamg._engine', 'jaxamg._cpu')\n"
        "print(sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy[:2]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return eval(done.stdout.strip().split("\n")[-1])


def test_version_is_pep440():
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.dev\d+)?", jaxamg.__version__)


def test_the_changelog_heads_with_this_version():
    # A release is recorded with its date; a development version sits under
    # "Unreleased" until it is released.
    changelog = pathlib.Path(__file__).resolve().parents[1] / "CHANGELOG.md"
    heading = re.search(r"^## \[([^\]]+)\](.*)$", changelog.read_text(), re.M)
    assert heading is not None, "CHANGELOG.md has no release heading"
    if ".dev" in jaxamg.__version__:
        assert heading.group(1) == "Unreleased", heading.group(0)
    else:
        assert heading.group(1) == jaxamg.__version__, heading.group(0)
        assert re.fullmatch(r" — \d{4}-\d{2}-\d{2}", heading.group(2)), heading.group(0)


def test_import_loads_neither_jax_nor_native_code():
    import importlib.util

    # Only meaningful where JAX is installed.
    assert importlib.util.find_spec("jax") is not None
    code = "import jaxamg, jaxamg.config; jaxamg.ConfigError; jaxamg.__version__"
    assert loaded_after(code) == []
    # The probe itself can see JAX being loaded.
    assert "jax" in loaded_after("import jax")


def test_unknown_attribute():
    with pytest.raises(AttributeError) as e:
        jaxamg.no_such_name  # noqa: B018
    assert str(e.value) == "module 'jaxamg' has no attribute 'no_such_name'"


def test_lazy_names_are_listed():
    names = dir(jaxamg)
    for name in ("solve", "AMGXStatus", "ConfigError", "config", "matrices", "__version__"):
        assert name in names


def test_solve_refuses_a_sharded_matrix_naming_its_solver():
    # The front door picks the path; a ShardedMatrix has its own compiled
    # solver. (Made without MPI: solve must refuse before reading it.)
    from jaxamg import ShardedMatrix

    A = object.__new__(ShardedMatrix)
    with pytest.raises(TypeError, match="make_sharded_solver"):
        jaxamg.solve(A, [1.0, 2.0])
