"""The import check (tools/check_imports.py): the package passes, and small
packages with an import cycle or a private name imported from another module
fail, naming file, line and rule."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("check_imports", ROOT / "tools" / "check_imports.py")
check_imports = importlib.util.module_from_spec(_spec)
sys.modules["check_imports"] = check_imports  # its dataclasses look their module up
_spec.loader.exec_module(check_imports)


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    """A package `pkg` with the given modules (path under pkg/ -> text)."""
    root = tmp_path / "pkg"
    for path, text in {"__init__.py": "", **files}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_the_package_passes():
    assert check_imports.check(ROOT / "src" / "jaxamg") == []
    assert check_imports.main(["check_imports.py"]) == 0


def test_allowed_imports_pass(tmp_path):
    root = _package(
        tmp_path,
        {
            "_core/__init__.py": "",
            "_core/checks.py": "def check(): pass\n_private = 1\n",
            # A private module of a subpackage, public names from it, a private
            # name of the module itself, imports under TYPE_CHECKING.
            "_single/__init__.py": "",
            "_single/solve.py": "from typing import TYPE_CHECKING\n"
            "from .._core import checks\nfrom .._core.checks import check\n"
            "from . import _helpers\n_x = checks.check\n"
            "if TYPE_CHECKING:\n    from ..api import solve\n",
            "_single/_helpers.py": "",
            "api.py": "from ._single.solve import check\n"
            "def solve():\n    from ._core import checks\n",
        },
    )
    assert check_imports.check(root) == []
    assert check_imports.main(["check_imports.py", str(root)]) == 0


def test_a_cycle_fails(tmp_path, capsys):
    root = _package(
        tmp_path,
        {
            "a.py": "from .b import g\ndef f(): pass\n",
            # The cycle is closed inside a function: it still counts.
            "b.py": "def g():\n    from .a import f\n",
            "c.py": "from . import a\n",
        },
    )
    problems = check_imports.check(root)
    assert len(problems) == 2
    assert problems[0].startswith("pkg/a.py:1: import cycle: pkg.a imports pkg.b")
    assert problems[1].startswith("pkg/b.py:2: import cycle: pkg.b imports pkg.a")
    assert check_imports.main(["check_imports.py", str(root)]) == 1
    out = capsys.readouterr().out
    assert "pkg/b.py:2: import cycle" in out
    assert "check_imports: import cycles: 1" in out


def test_a_private_name_from_another_module_fails(tmp_path, capsys):
    root = _package(
        tmp_path,
        {
            "_core/__init__.py": "",
            "_core/info.py": "_lock = 1\ndef _helper(): pass\n",
            "solve.py": "from ._core.info import _lock\n"
            "def f():\n    from ._core.info import _helper\n",
            "other.py": "from ._core import info\nx = info._lock\n",
        },
    )
    problems = check_imports.check(root)
    assert problems == [
        "pkg/other.py:2: private name _lock of pkg._core.info used: move it to a lower "
        "module under a public name",
        "pkg/solve.py:1: private name _lock imported from pkg._core.info: move it to a "
        "lower module under a public name",
        "pkg/solve.py:3: private name _helper imported from pkg._core.info: move it to a "
        "lower module under a public name",
    ]
    assert check_imports.main(["check_imports.py", str(root)]) == 1
    out = capsys.readouterr().out
    assert "check_imports: private names imported from another module: 2" in out
    assert "check_imports: of them inside functions: 1" in out


def test_a_layer_importing_upward_fails(tmp_path):
    root = _package(
        tmp_path,
        {
            "_core/__init__.py": "",
            "_core/x.py": "def f():\n    from ..config import y\n",
            "config.py": "y = 1\n",
            "_single/__init__.py": "",
            "_single/solve.py": "from .._dist import solve\n",
            "_dist/__init__.py": "",
            "_dist/solve.py": "from .._core import x\n",
        },
    )
    problems = check_imports.check(root)
    assert problems == [
        "pkg/_core/x.py:2: layer: _core imports config (pkg.config); _core may import only "
        "_core, _cpu, _cuda, _engine, _mpi, _mpi_cuda",
        "pkg/_single/solve.py:1: layer: _single imports _dist (pkg._dist.solve); _single may "
        "import only _core, _operators, _single, config, nullspace, sparsity",
    ]


def test_counts(tmp_path):
    root = _package(
        tmp_path,
        {
            "_core/__init__.py": "",
            "_core/x.py": "def f():\n    import json\n    from . import y\n",
            "_core/y.py": "",
        },
    )
    counts = check_imports.counts(root)
    assert counts["modules per folder"] == {"pkg": 1, "pkg/_core": 3}
    assert counts["of them inside functions"] == 1
    assert counts["other imports inside functions"] == 1
    assert counts["import cycles"] == 0
