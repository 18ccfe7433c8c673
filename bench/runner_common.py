"""Helpers shared by the solver runners (each runner is its own process).

A runner loads the problem, then measures setup and solve with wall-clock
timers and peak resident memory, writes x to a .npy file and prints one line
``RESULT {json}``.  The caller (bench/run.py) computes the true residual.

Peak memory: before each phase the kernel's high-water mark is reset to the
current RSS (``echo 5 > /proc/self/clear_refs``, Linux >= 4.0), so VmHWM after
the phase minus VmRSS before it is the phase's peak increase.  Where the reset
is not allowed, the increase is measured against the previous VmHWM, which
can under-report (the flag ``hwm_reset`` says which one was used).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time

import numpy as np


def status_bytes(key: str) -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return -1


def reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class PhaseMemory:
    """Peak RSS increase of one phase (a ``with`` block)."""

    def __init__(self) -> None:
        self.increase = -1
        self.hwm_reset = False

    def __enter__(self) -> PhaseMemory:
        gc.collect()
        self.hwm_reset = reset_hwm()
        self._base = status_bytes("VmRSS") if self.hwm_reset else status_bytes("VmHWM")
        return self

    def __exit__(self, *exc) -> None:
        self.increase = max(0, status_bytes("VmHWM") - self._base)


def base_parser(description: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--npz", required=True, help="problem file written by bench/problems.py")
    p.add_argument("--xout", required=True, help="where to write the solution (.npy)")
    p.add_argument("--tol", type=float, default=1e-8)
    p.add_argument("--maxiter", type=int, default=500)
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="time setup+solve this many times and keep the fastest",
    )
    p.add_argument(
        "--repeat-budget",
        type=float,
        default=30.0,
        help="stop repeating once this many seconds have been spent",
    )
    return p


def load_problem(path: str):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from problems import load_npz

    A, b = load_npz(path)
    gc.collect()
    return A, b


def load_structure(path: str) -> dict:
    """block_dim, near_nullspace and singular of the problem file."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from problems import load_structure

    return load_structure(path)


def warmup_problem():
    """A small problem (3D Poisson, 8^3) solved once before measuring, so
    that lazily loaded code and one-time initialisation (imports, thread
    pools) are not counted as the measured problem's memory or time."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from problems import poisson3d

    A = poisson3d(8)
    return A, np.ones(A.shape[0])


def hierarchy_stats(levels) -> dict:
    levels = [[int(r), int(z)] for r, z in levels]
    if not levels:
        return {"levels": [], "operator_complexity": None, "grid_complexity": None}
    return {
        "levels": levels,
        "operator_complexity": sum(z for _, z in levels) / levels[0][1],
        "grid_complexity": sum(r for r, _ in levels) / levels[0][0],
    }


def timed_repeats(run_once, repeat: int, budget: float) -> dict:
    """run_once(first: bool) -> dict with setup_seconds, solve_seconds, ...

    The first call is measured for memory by the caller; further calls only
    add timings.  Returns the first call's dict with the fastest setup+solve
    timings and every measurement listed.
    """
    first = run_once(True)
    setups = [first["setup_seconds"]]
    solves = [first["solve_seconds"]]
    spent = setups[0] + solves[0]
    for _ in range(max(0, repeat - 1)):
        if spent > budget:
            break
        r = run_once(False)
        setups.append(r["setup_seconds"])
        solves.append(r["solve_seconds"])
        spent += r["setup_seconds"] + r["solve_seconds"]
    best = min(range(len(setups)), key=lambda i: setups[i] + solves[i])
    first["setup_seconds"] = setups[best]
    first["solve_seconds"] = solves[best]
    first["setup_seconds_all"] = setups
    first["solve_seconds_all"] = solves
    return first


def emit(result: dict, x: np.ndarray | None, xout: str) -> None:
    if x is not None:
        np.save(xout, np.asarray(x, dtype=np.float64))
    print("RESULT " + json.dumps(result, default=float), flush=True)


def now() -> float:
    return time.perf_counter()
