"""The layering check of the C++ tree: which folder may include which.

The engine's algorithms are written once over a small backend interface, so
the backends hold primitives only and never see the layers built on them.
Every ``#include "..."`` line of every source under cpp/ is resolved to the
folder it names and checked against these rules (a layer is a folder of
cpp/engine, e.g. ``backend``; ``ffi`` and ``bindings`` are folders of cpp/):

  ===============  ====================================  ========================
  files in         may include (of cpp/engine and cpp/)  why
  ===============  ====================================  ========================
  engine/core      core                                  the base every layer uses
  engine/backend   core, backend                         primitives (kernels,
                                                         storage) below the
                                                         algorithms
  engine/*         any engine layer but device and       the engine knows nothing
                   dist (each of those: itself too);     of JAX or Python; MPI
                   never ffi, bindings                   stays in jaxamg_dist,
                                                         CUDA in jaxamg_cuda
  ffi, bindings,   anything                              the front ends and tests
   tests, fuzz
  ===============  ====================================  ========================

An include is resolved first against the including file's folder (so
``"../solvers/x.h"`` counts as solvers), then against cpp/engine (the
engine's include root); ``"ffi/..."`` and ``"bindings/..."`` name those
folders of cpp/. Any other include (a third-party header such as
``"xla/ffi/api/ffi.h"``) is not checked, nor are angle includes (system and
third-party headers).

Usage: ``python tools/check_layers.py [CPP_DIR]`` (default: the cpp/ of this
repository). Prints ``file:line: rule`` per violation and exits 1 if any.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

SOURCE_SUFFIXES = {".h", ".hh", ".hpp", ".cc", ".cpp", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')

# Engine layers whose includes are limited, and the layers each may include.
ALLOWED = {
    "core": {"core"},
    "backend": {"core", "backend"},
}
# Engine layers only they themselves may include: MPI lives in dist alone,
# and the engine on the GPU (device, built with nvcc into jaxamg_cuda) is
# used by the front ends, never by the CPU engine.
PRIVATE = {"dist", "device"}
# Folders of cpp/ outside the engine that the engine never includes.
FRONT_ENDS = {"ffi", "bindings"}


def _folder(path: Path, cpp: Path) -> tuple[str, str] | None:
    """(area, layer) of a path under cpp/: ("engine", "solvers"), ("ffi", "").

    None for a path outside cpp/.
    """
    try:
        parts = path.relative_to(cpp).parts
    except ValueError:
        return None
    if not parts:
        return None
    if parts[0] == "engine":
        return ("engine", parts[1]) if len(parts) > 2 else ("engine", "")
    return (parts[0], "")


def _target(include: str, source: Path, cpp: Path) -> tuple[str, str] | None:
    """The folder an include names, or None for a third-party header."""
    local = Path(os.path.normpath(source.parent / include))
    if include.startswith(("./", "../")) or local.exists():
        return _folder(local, cpp)
    first = Path(include).parts[0] if Path(include).parts else ""
    if (cpp / "engine" / first).is_dir():
        return _folder(Path(os.path.normpath(cpp / "engine" / include)), cpp)
    if first in FRONT_ENDS:
        return (first, "")
    return None


def violation(source: tuple[str, str], target: tuple[str, str]) -> str | None:
    """The rule an include from folder `source` of folder `target` breaks."""
    area, layer = source
    if area != "engine":
        return None  # front ends and tests may include anything
    t_area, t_layer = target
    if t_area in FRONT_ENDS:
        return f"engine/{layer} includes {t_area}/: the engine never includes the front ends"
    if t_area != "engine" or not t_layer or t_layer == layer:
        return None
    if t_layer in PRIVATE:
        return f"engine/{layer} includes {t_layer}/: only {t_layer}/ itself may"
    if layer in ALLOWED and t_layer not in ALLOWED[layer]:
        allowed = ", ".join(sorted(ALLOWED[layer]))
        return f"engine/{layer} includes {t_layer}/: {layer}/ may include only {allowed}"
    return None


def check(cpp: Path) -> list[str]:
    """Every violation under the folder cpp, as 'file:line: rule' lines."""
    cpp = Path(os.path.normpath(cpp.resolve()))
    problems = []
    for source in sorted(cpp.rglob("*")):
        if source.suffix not in SOURCE_SUFFIXES or not source.is_file():
            continue
        where = _folder(source, cpp)
        text = source.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            match = INCLUDE.match(line)
            if not match:
                continue
            target = _target(match.group(1), source, cpp)
            rule = violation(where, target) if where and target else None
            if rule:
                problems.append(
                    f'{source.relative_to(cpp.parent)}:{number}: "{match.group(1)}": {rule}'
                )
    return problems


def main(argv: list[str]) -> int:
    cpp = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent / "cpp"
    problems = check(cpp)
    for p in problems:
        print(p)
    if problems:
        print(
            f"check_layers: {len(problems)} include(s) break the layering "
            "(tools/check_layers.py lists the rules)",
            file=sys.stderr,
        )
        return 1
    print("check_layers: the includes under cpp/ follow the layering")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
