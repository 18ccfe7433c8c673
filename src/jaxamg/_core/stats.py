"""The statistics file written by ``save_stats_file``: the engine's
AmgX-layout grid table and the outer solver's iteration table under two
headings, as JAX-AMG writes them (no grid heading without an AMG grid)."""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from . import ffi

# The engine's statistics text is one process-wide buffer: solves that write
# a stats file take it in turn, so that no thread takes (or drops) another's.
stats_lock = threading.Lock()


def take_stats_text(distributed: bool = False) -> str:
    """The engine's recorded statistics, emptying its buffers (a distributed
    solve's: the MPI modules', else the single-process modules'). Each
    compiled module keeps its own buffer: a solve on the CPU writes the CPU
    module's, a solve on a GPU the CUDA module's (distributed: _mpi's and
    _mpi_cuda's)."""
    if distributed:
        text = ffi.mpi_native().take_stats_text()
        cuda = sys.modules.get("jaxamg._mpi_cuda")
        if cuda is not None:
            text += cuda.take_stats_text()
        return text
    text = ffi.native().take_stats_text()
    cuda = ffi.cuda_native()
    if cuda is not None:
        text += cuda.take_stats_text()
    return text


def split_stats(text: str) -> tuple[str, str]:
    """(grid statistics, solver iterations) from the engine's printed text."""
    grid, iterations = [], []
    in_grid = False
    dashes_seen = 0
    for line in text.splitlines():
        if line.strip().startswith("AMG Grid:"):
            in_grid, dashes_seen = True, 0
        if in_grid:
            grid.append(line)
            if set(line.strip()) == {"-"}:
                dashes_seen += 1
                if dashes_seen == 3:  # header rule, table end, summary end
                    in_grid = False
        else:
            iterations.append(line)
    return "\n".join(grid).strip("\n"), "\n".join(iterations).strip("\n")


def _outer_table(iterations: str) -> str:
    """The outer solver's table: a solver tree whose inner solvers print
    their own tables (print_solve_stats in their scopes) prints them during
    the outer solve, so the outer table comes last. A file in JAX-AMG's
    layout holds one table."""
    lines = iterations.splitlines()
    headers = [i for i, line in enumerate(lines) if _is_table_header(line)]
    if len(headers) < 2:
        return iterations
    return "\n".join(lines[headers[-1] :])


def _is_table_header(line: str) -> bool:
    words = line.split()
    return bool(words) and words[0] == "iter" and "residual" in words


def format_stats(text: str, amg: bool = True) -> str:
    """JAX-AMG's statistics-file layout: the grid section and the outer
    solver's iteration table, each under a =-underlined heading. `amg`:
    whether the solver tree has AMG; without it there is no grid section."""
    grid, iterations = split_stats(text)
    parts = []
    if grid or amg:
        parts += ["AMG GRID STATISTICS", "===================", grid or "(no AMG grid printed)", ""]
    parts += [
        "SOLVER ITERATIONS",
        "=================",
        _outer_table(iterations) or "(no iteration statistics)",
        "",
    ]
    return "\n".join(parts)


def check_writable(path: Any, where: str) -> str:
    """``path`` as a string, checked before a solve so that a path that
    cannot be written fails at once, not after the solve's work: TypeError for
    a value that is not a path, OSError when its directory is missing or not
    writable."""
    try:
        text = os.fspath(path)
    except TypeError:
        raise TypeError(
            f"`{where}`: `save_stats_file` must be a path (str or os.PathLike), got "
            f"{type(path).__name__} {path!r}; pass a file name such as 'stats.txt'."
        ) from None
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    folder = os.path.dirname(os.path.abspath(text))
    if os.path.isdir(text):
        problem = "is a directory"
    elif not os.path.isdir(folder):
        problem = f"is in the directory {folder!r}, which does not exist"
    elif not os.access(folder, os.W_OK) or (os.path.exists(text) and not os.access(text, os.W_OK)):
        problem = "is not writable"
    else:
        return text
    raise OSError(
        f"`{where}`: `save_stats_file` {text!r} {problem}; pass a path in an existing, "
        "writable directory."
    )


def write_stats_file(text: str, path: Any, rank: int | None = None, amg: bool = True) -> None:
    """Writes the formatted statistics (only on rank 0 when rank is given);
    `amg` as for format_stats."""
    if rank not in (None, 0):
        return
    path = os.fspath(path)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(format_stats(text, amg))
    except OSError as e:
        raise OSError(
            e.errno,
            f"`save_stats_file` {path!r} cannot be written ({e.strerror}); pass a path in an "
            "existing, writable directory",
        ) from None
    print(f"Stats saved to {path}")
