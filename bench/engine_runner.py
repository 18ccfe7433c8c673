"""jaxamg engine runner: one AmgX-style JSON config on one problem.

Uses the C++ engine directly through ``jaxamg._engine.EngineSolver`` (no
JAX), so the numbers are the engine's own: setup is ``EngineSolver(...)`` +
``.setup(indptr, indices, data, copy=False)`` (the engine reads the loaded
arrays in place, which live for the whole process, as PyAMG keeps the SciPy
matrix it is given) and solve is ``.solve(b)`` from x0 = 0,
both timed with a wall clock around the Python call.  The engine's own
timers are kept in the raw results as ``engine_setup_seconds`` and
``engine_solve_seconds``.  Threads: OMP_NUM_THREADS (set by bench/run.py).

A problem with a block size, a near null space or a constant null space
(bench/problems.py's npz) runs as ``jaxamg.solve`` would run it: the config
text is ``jaxamg.config.prepare_config`` of the config with that block size
and singularity; the near null space goes to ``setup`` when the config uses
smoothed aggregation; for a singular system b and x are projected onto the
constants' complement around the solve (counted in the solve time).
``--config auto`` and ``--config default`` are the configs that
``jaxamg.solve`` picks with ``config="auto"`` (``jaxamg.config.auto_config``,
computed before the timed setup) and with no config, with the run's tolerance.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import runner_common as rc  # noqa: E402


def engine_available(python: str | None = None) -> tuple[bool, str]:
    """Can ``python`` import jaxamg._engine?  Returns (ok, message)."""
    import subprocess

    python = python or sys.executable
    try:
        r = subprocess.run(
            [python, "-c", "import jaxamg._engine"], capture_output=True, text=True, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    return r.returncode == 0, (r.stderr.strip().splitlines() or [""])[-1]


def _make_solver(mod, cfg: str, np):
    last = None
    for dtype in ("float64", np.float64, np.dtype("float64")):
        try:
            return mod.EngineSolver(cfg, dtype)
        except TypeError as e:  # dtype spelled differently by the binding
            last = e
    raise last


def _uses_smoothed_aggregation(tree) -> bool:
    if isinstance(tree, dict):
        if tree.get("x_smoothed_aggregation") == 2:
            return True
        return any(_uses_smoothed_aggregation(v) for v in tree.values())
    return False


def config_text(config: str, A, structure: dict, tol: float) -> tuple[str, str | None]:
    """The engine's config text for this problem, and the "auto" choice's
    description (None for other configs).  A prepared config gets the run's
    tolerance, as ``jaxamg.solve(..., tolerance=tol)`` would (the default
    config's own is 1e-6)."""
    block_dim, singular = structure["block_dim"], structure["singular"]
    plain = block_dim == 1 and not singular
    if config not in ("auto", "default"):
        with open(config) as f:
            text = f.read()
        json.loads(text)  # fail early on a malformed file
        if plain:
            return text, None  # the shipped file exactly, as for the other problems
    from jaxamg.config import auto_config, prepare_config

    choice = None
    if config == "auto":
        cfg, choice = auto_config(
            A,
            block_dim,
            singular=singular,
            near_nullspace=structure["near_nullspace"] is not None,
        )
    elif config == "default":
        cfg = None
    else:
        cfg = json.loads(text)
    text = prepare_config(cfg, block_dim=block_dim, singular=singular, tolerance=tol)
    return text, choice


def main() -> None:
    p = rc.base_parser(__doc__)
    p.add_argument("--config", required=True, help="AmgX-style JSON file, or 'auto' or 'default'")
    args = p.parse_args()

    import numpy as np

    import jaxamg._engine as eng

    A, b = rc.load_problem(args.npz)
    structure = rc.load_structure(args.npz)
    indptr, indices, data = A.indptr, A.indices, A.data
    cfg, choice = config_text(args.config, A, structure, args.tol)
    block_dim = structure["block_dim"]
    near_nullspace = (
        structure["near_nullspace"] if _uses_smoothed_aggregation(json.loads(cfg)) else None
    )
    singular = structure["singular"]

    Aw, bw = rc.warmup_problem()
    w = _make_solver(eng, cfg, np)
    w.setup(Aw.indptr, Aw.indices, Aw.data, copy=False)
    w.solve(bw)
    del w, Aw, bw

    def run_once(first: bool) -> dict:
        setup_mem = rc.PhaseMemory()
        solve_mem = rc.PhaseMemory()
        with setup_mem:
            t0 = rc.now()
            s = _make_solver(eng, cfg, np)
            s.setup(
                indptr,
                indices,
                data,
                block_dim=block_dim,
                near_nullspace=near_nullspace,
                copy=False,
            )
            t1 = rc.now()
        with solve_mem:
            t2 = rc.now()
            if singular:  # the constant null space, as jaxamg.solve projects it
                x, info = s.solve(b - b.mean())
                x = x - x.mean()
            else:
                x, info = s.solve(b)
            t3 = rc.now()
        out = {"setup_seconds": t1 - t0, "solve_seconds": t3 - t2}
        if first:
            info = dict(info)
            hist = [float(v) for v in np.ravel(info.get("residual_history", []))]
            out.update(rc.hierarchy_stats(s.hierarchy()))
            log = ""
            if hasattr(s, "take_log"):
                try:
                    log = str(s.take_log())
                except Exception as e:  # the log is informative only
                    log = f"take_log failed: {e}"
            out.update(
                {
                    "x": np.array(x, dtype=np.float64, copy=True),
                    "iterations": int(info.get("iterations", -1)),
                    "reported_residual": (hist[-1] / hist[0])
                    if len(hist) > 1 and hist[0]
                    else (float(info["residual"]) if "residual" in info else None),
                    "status": str(info.get("status_name", info.get("status", "?"))),
                    "engine_setup_seconds": info.get("setup_seconds"),
                    "engine_solve_seconds": info.get("solve_seconds"),
                    "setup_peak_increase_bytes": setup_mem.increase,
                    "solve_peak_increase_bytes": solve_mem.increase,
                    "hwm_reset": setup_mem.hwm_reset,
                    # False when the engine had to copy (a matrix it reordered).
                    "borrows_matrix": bool(getattr(s, "borrows_matrix", False)),
                    "engine_log_tail": log[-4000:],
                }
            )
        del s
        return out

    res = rc.timed_repeats(run_once, args.repeat, args.repeat_budget)
    x = res.pop("x")
    threads = os.environ.get("OMP_NUM_THREADS") or str(os.cpu_count())
    version = getattr(eng, "__version__", None)
    if version is None:
        try:
            import jaxamg

            version = getattr(jaxamg, "__version__", "unknown")
        except Exception:
            version = "unknown"
    res.update(
        {
            "threads": int(threads),
            "version": f"jaxamg {version}",
            "settings": os.path.basename(args.config),
            "block_dim": block_dim,
            "near_nullspace_vectors": 0 if near_nullspace is None else near_nullspace.shape[1],
            "singular": singular,
        }
    )
    if choice is not None:
        res["config_choice"] = choice
    rc.emit(res, x, args.xout)


if __name__ == "__main__":
    main()
