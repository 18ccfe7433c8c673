"""The layering check (tools/check_layers.py): the repository's tree passes,
and a tree with one include of each forbidden kind fails, naming each."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("check_layers", ROOT / "tools" / "check_layers.py")
check_layers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_layers)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """A cpp/ folder with the given files (path under cpp/ -> text)."""
    cpp = tmp_path / "cpp"
    for layer in (
        "core",
        "config",
        "backend/cpu",
        "solvers",
        "amg",
        "api",
        "dist",
        "device/setup",
    ):
        (cpp / "engine" / layer).mkdir(parents=True, exist_ok=True)
    for name in ("ffi", "bindings", "tests"):
        (cpp / name).mkdir(parents=True, exist_ok=True)
    (cpp / "engine/core/types.h").write_text("#pragma once\n")
    (cpp / "engine/solvers/solver.h").write_text('#include "core/types.h"\n')
    (cpp / "engine/device/device_solver.h").write_text('#include "solvers/solver.h"\n')
    (cpp / "ffi/handler.h").write_text("#pragma once\n")
    for path, text in files.items():
        (cpp / path).write_text(text)
    return cpp


def test_repository_tree_follows_the_layering():
    assert check_layers.check(ROOT / "cpp") == []


def test_allowed_includes_pass(tmp_path):
    cpp = _tree(
        tmp_path,
        {
            "engine/backend/cpu/blas.h": '#include "core/types.h"\n#include <vector>\n',
            "engine/backend/cpu/blas.cc": '#include "backend/cpu/blas.h"\n#include "xla/ffi.h"\n',
            "engine/device/setup/pmis.cu": '#include "device/device_solver.h"\n'
            '#include "amg/x.h"\n#include "config/c.h"\n',
            "ffi/handler.cc": '#include "handler.h"\n#include "device/device_solver.h"\n',
            "tests/test_x.cc": '#include "device/device_solver.h"\n',
        },
    )
    assert check_layers.check(cpp) == []
    assert check_layers.main(["check_layers.py", str(cpp)]) == 0


def test_each_forbidden_include_is_named(tmp_path, capsys):
    cpp = _tree(
        tmp_path,
        {
            # A backend sees core and backend only.
            "engine/backend/cpu/blas.cc": '#include "core/types.h"\n\n#include "solvers/solver.h"\n',
            "engine/backend/cpu/spgemm.h": '  #  include "config/config.h"\n',
            # Relative paths count for the folder they reach.
            "engine/backend/cpu/rel.h": '#include "../../amg/amg.h"\n',
            # No engine file includes the front ends; only the device layer
            # includes itself, and it never includes dist.
            "engine/device/setup/pmis.cu": '#include "ffi/handler.h"\n',
            "engine/device/setup/halo.cu": '#include "dist/halo.h"\n',
            "engine/solvers/krylov.cc": '#include "device/device_solver.h"\n',
            "engine/amg/amg.cc": '#include "dist/halo.h"\n',
            "engine/core/error.h": '#include "api/linear_solver.h"\n',
        },
    )
    problems = check_layers.check(cpp)
    expected = [
        ("cpp/engine/amg/amg.cc:1:", "dist/"),
        ("cpp/engine/backend/cpu/blas.cc:3:", "solvers/"),
        ("cpp/engine/backend/cpu/rel.h:1:", "amg/"),
        ("cpp/engine/backend/cpu/spgemm.h:1:", "config/"),
        ("cpp/engine/core/error.h:1:", "api/"),
        ("cpp/engine/device/setup/halo.cu:1:", "dist/"),
        ("cpp/engine/device/setup/pmis.cu:1:", "ffi/"),
        ("cpp/engine/solvers/krylov.cc:1:", "device/"),
    ]
    assert len(problems) == len(expected), problems
    for problem, (where, layer) in zip(problems, expected):
        assert problem.startswith(where) and f"includes {layer}" in problem, problem
    assert check_layers.main(["check_layers.py", str(cpp)]) == 1
    assert "cpp/engine/backend/cpu/blas.cc:3:" in capsys.readouterr().out
