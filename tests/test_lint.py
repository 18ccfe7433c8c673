"""The Python lint and format check (`make lint`: ruff with pyproject.toml's
[tool.ruff]): the repository passes, and a file with a violation fails it.

Skipped where ruff is not installed (it comes with the dev extra that
`make venv` installs)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "pyproject.toml"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("ruff") is None,
    reason="ruff is not installed (pip install -e '.[dev]' brings it)",
)


def ruff(*args: str | Path) -> subprocess.CompletedProcess:
    """ruff with the repository's configuration, run from its root."""
    return subprocess.run(
        [sys.executable, "-m", "ruff", *map(str, args), "--config", str(CONFIG), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_repository_passes():
    lint = ruff("check", ".")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = ruff("format", "--check", ".")
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


# Each text is formatted as `ruff format` writes it, so that only the rule
# named fails.
VIOLATIONS = {
    "F401": "import os\n",  # unused import
    "F821": "def f():\n    return undefined_name\n",  # undefined name
    "I001": "import sys\nimport os\n\nprint(os, sys)\n",  # unsorted imports
    "B006": "def f(x=[]):\n    return x\n",  # mutable default argument
    "UP035": "from typing import Callable\n\nf: Callable\n",  # typing's Callable
}


@pytest.mark.parametrize("rule", sorted(VIOLATIONS))
def test_a_lint_violation_fails(tmp_path, rule):
    path = tmp_path / "bad.py"
    path.write_text(VIOLATIONS[rule])
    assert ruff("format", "--check", path).returncode == 0
    result = ruff("check", "--output-format", "concise", path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert rule in result.stdout


def test_unformatted_code_fails(tmp_path):
    path = tmp_path / "bad.py"
    path.write_text("x = [1,2 ,3]\ny = {'a':1}\n")
    assert ruff("check", path).returncode == 0
    result = ruff("format", "--check", path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "bad.py" in result.stdout + result.stderr
    # `make format` fixes it: afterwards the check passes.
    assert ruff("format", path).returncode == 0
    assert path.read_text() == 'x = [1, 2, 3]\ny = {"a": 1}\n'
    assert ruff("format", "--check", path).returncode == 0
