"""The statistics file written by ``save_stats_file``: the engine's
AmgX-layout grid table and iteration table under two headings."""

from __future__ import annotations

import os
from typing import Any


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


def format_stats(text: str) -> str:
    grid, iterations = split_stats(text)
    parts = [
        "AMG GRID STATISTICS",
        "===================",
        grid or "(no AMG hierarchy in this solver)",
        "",
        "SOLVER ITERATIONS",
        "=================",
        iterations or "(no iteration statistics)",
        "",
    ]
    return "\n".join(parts)


def write_stats_file(text: str, path: Any, rank: int | None = None) -> None:
    """Writes the formatted statistics (only on rank 0 when rank is given)."""
    if rank not in (None, 0):
        return
    path = os.fspath(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write(format_stats(text))
    print(f"Stats saved to {path}")
