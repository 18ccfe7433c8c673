"""Every benchmark script of bench/ still starts: imported and run with
--help (argparse's usage, then exit 0) in one child process, so that a
renamed or moved package name fails here and not when someone benchmarks.

bench/gpu/ is left out: its scripts need a GPU to import.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"

RUN_ALL = r"""
import contextlib, io, runpy, sys
bench, scripts = sys.argv[1], sys.argv[2:]
sys.path.insert(0, bench)
failed = []
for path in scripts:
    sys.argv = [path, "--help"]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            runpy.run_path(path, run_name="__main__")
    except SystemExit as e:
        if e.code not in (0, None):
            failed.append(f"{path}: exit {e.code}")
    except Exception as e:  # noqa: BLE001 (reported with the script's name)
        failed.append(f"{path}: {type(e).__name__}: {e}")
print("\n".join(failed))
"""


def test_every_bench_script_starts():
    scripts = sorted(str(p) for p in BENCH.glob("*.py"))
    assert len(scripts) >= 10, scripts
    out = subprocess.run(
        [sys.executable, "-c", RUN_ALL, str(BENCH), *scripts],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "", out.stdout
