#!/usr/bin/env python3
"""Benchmark jaxamg's engine against PyAMG, hypre BoomerAMG and SciPy.

Usage (from the repository root):

    python bench/run.py                 # the full matrix; its report goes to the history
    python bench/run.py --quick         # smoke run (a minute or two); records nothing
    python bench/run.py --problems poisson3d-64 jump3d-64 --solvers engine hypre
    python bench/run.py --fem --no-append   # the finite-element set (bench/fem_problems.py)

Each solver runs in its own process on the same matrix and right-hand side
(bench/problems.py); the true relative residual ||b - A x|| / ||b|| of every
returned x is computed here with scipy.  See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from machine import git_state, loadavg, machine_info  # noqa: E402
from solver_plan import (  # noqa: E402
    PEERS,
    SPECIAL_CONFIGS,
    config_path,
    default_configs,
    solver_plan,
)

FULL_PROBLEMS = [
    "poisson3d-32",
    "poisson3d-48",
    "poisson3d-64",
    "poisson3d-100",
    "aniso2d-1000",
    "jump3d-64",
    "convdiff2d-512",
]
QUICK_PROBLEMS = ["poisson3d-32", "aniso2d-256", "jump3d-32", "convdiff2d-128"]
# The finite-element set (bench/fem_problems.py), two sizes each, at sizes
# that run in minutes.
FEM_PROBLEMS = [
    f"{family}-{n}"
    for family, sizes in (
        ("elast3d-nu030", (12, 16)),
        ("elast3d-nu045", (12, 16)),
        ("elast3d-nu049", (12, 16)),
        ("jumpfem3d", (32, 40)),
        ("anisofem2d", (256, 512)),
        ("supg2d", (256, 512)),
        ("neumann3d", (32, 40)),
    )
    for n in sizes
]


def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ---- interpreters ------------------------------------------------------------


def _has_modules(python: str, modules: str) -> bool:
    try:
        r = subprocess.run([python, "-c", f"import {modules}"], capture_output=True, timeout=120)
        return r.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def peer_python(requested: str | None) -> str:
    """An interpreter with numpy, scipy and pyamg: --peer-python, this one, or
    bench/.venv (created on first use)."""
    if requested:
        if not _has_modules(requested, "numpy, scipy, pyamg"):
            sys.exit(f"--peer-python {requested} cannot import numpy, scipy and pyamg")
        return requested
    if _has_modules(sys.executable, "numpy, scipy, pyamg"):
        return sys.executable
    venv = os.path.join(HERE, ".venv")
    py = os.path.join(venv, "bin", "python")
    if not (os.path.exists(py) and _has_modules(py, "numpy, scipy, pyamg")):
        log(f"creating {venv} with numpy, scipy and pyamg for the peer solvers")
        base = shutil.which("python3") or sys.executable
        subprocess.run([base, "-m", "venv", venv], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "numpy", "scipy", "pyamg"], check=True)
    return py


def engine_python(requested: str | None) -> tuple[str | None, str]:
    import engine_runner

    candidates = (
        [requested] if requested else [os.path.join(REPO, ".venv", "bin", "python"), sys.executable]
    )
    msg = ""
    for py in candidates:
        if py and os.path.exists(py):
            ok, msg = engine_runner.engine_available(py)
            if ok:
                return py, ""
    return None, msg or "no interpreter found"


# ---- one solver run ------------------------------------------------------------


def true_relres(A, b, x) -> float:
    import numpy as np

    r = b - A @ x
    return float(np.linalg.norm(r) / np.linalg.norm(b))


def run_runner(cmd: list[str], env: dict, timeout: float) -> dict:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("RESULT ")]
    if r.returncode != 0 or not lines:
        lines = [ln.strip() for ln in (r.stderr or r.stdout).strip().splitlines() if ln.strip()]
        raise RuntimeError(f"exit code {r.returncode}: " + (lines[-1] if lines else "no output"))
    return json.loads(lines[-1][len("RESULT ") :])


def run_one(spec: dict, prob: dict, args, ctx: dict) -> dict:
    import numpy as np

    xout = os.path.join(args.workdir, f"x-{prob['pid']}-{spec['id'].replace(':', '_')}")
    env = dict(os.environ)
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    common = [
        "--npz",
        prob["npz"],
        "--xout",
        xout + ".npy",
        "--tol",
        repr(args.tol),
        "--repeat",
        str(args.repeat),
        "--repeat-budget",
        str(args.repeat_budget),
    ]
    t0 = time.perf_counter()
    rec = {
        "problem": prob["pid"],
        "solver": spec["id"],
        "kind": spec["kind"],
        "label": spec["label"],
        "class": spec.get("class", "peer"),
    }
    if "not_run" in spec:
        rec.update(status=f"NOT RUN ({spec['not_run']})")
        return rec
    try:
        if spec["kind"] == "engine":
            if ctx["engine_python"] is None:
                rec.update(status="NOT RUN (engine binding unavailable)")
                return rec
            env["OMP_NUM_THREADS"] = str(spec["threads"])
            env.setdefault("OMP_PROC_BIND", "false")
            # Idle OpenMP threads must not spin long between parallel regions:
            # on two cores a spinning worker steals the time of the serial
            # parts. The package adds its brief spin (GOMP_SPINCOUNT) on import.
            env.setdefault("OMP_WAIT_POLICY", "passive")
            cmd = [
                ctx["engine_python"],
                os.path.join(HERE, "engine_runner.py"),
                *common,
                "--config",
                config_path(spec["config"]),
            ]
            res = run_runner(cmd, env, args.timeout)
            xfile = xout + ".npy"
        elif spec["kind"] == "pyamg":
            env["OMP_NUM_THREADS"] = "1"
            cmd = [
                ctx["peer_python"],
                os.path.join(HERE, "peers", "pyamg_runner.py"),
                *common,
                "--method",
                spec["method"],
                "--accel",
                spec["accel"],
                "--maxiter",
                "500",
            ]
            if not prob["symmetric"]:
                cmd.append("--nonsymmetric")
            res = run_runner(cmd, env, args.timeout)
            xfile = xout + ".npy"
        elif spec["kind"] == "scipy":
            env["OMP_NUM_THREADS"] = "1"
            cmd = [
                ctx["peer_python"],
                os.path.join(HERE, "peers", "scipy_runner.py"),
                *common,
                "--method",
                spec["method"],
                "--maxiter",
                str(args.scipy_maxiter),
                "--time-cap",
                str(args.scipy_time_cap),
            ]
            res = run_runner(cmd, env, args.timeout)
            xfile = xout + ".npy"
        elif spec["kind"] == "hypre":
            from peers import hypre_runner

            if ctx.get("hypre_exe") is None:
                rec.update(status=f"NOT RUN ({ctx.get('hypre_error', 'hypre unavailable')})")
                return rec
            runs = []
            for i in range(max(1, args.repeat)):
                runs.append(
                    hypre_runner.run(
                        ctx["hypre_exe"],
                        prob["bin"],
                        xout + ".bin",
                        krylov=spec["krylov"],
                        theta=spec["theta"],
                        coarsen=spec["coarsen"],
                        relax=args.hypre_relax,
                        tol=args.tol,
                        maxit=500,
                        np_ranks=args.hypre_np,
                        timeout=args.timeout,
                        extra=[
                            "-agg_levels",
                            str(args.hypre_agg_levels),
                            "-num_functions",
                            str(spec.get("num_functions", 1)),
                        ],
                    )
                )
                if i == 0:
                    first_x = np.fromfile(xout + ".bin", dtype=np.float64)
                if sum(r["setup_seconds"] + r["solve_seconds"] for r in runs) > args.repeat_budget:
                    break
            best = min(runs, key=lambda r: r["setup_seconds"] + r["solve_seconds"])
            res = dict(runs[0])
            res.update(
                setup_seconds=best["setup_seconds"],
                solve_seconds=best["solve_seconds"],
                setup_seconds_all=[r["setup_seconds"] for r in runs],
                solve_seconds_all=[r["solve_seconds"] for r in runs],
                threads=args.hypre_np,
                version=f"hypre {res.get('version')} (Debian {ctx.get('hypre_deb', '?')})",
                setup_peak_increase_bytes=res.pop("setup_peak_increase_kib") * 1024,
                solve_peak_increase_bytes=res.pop("solve_peak_increase_kib") * 1024,
                reported_residual=res.pop("reported_relres"),
                status="SUCCESS"
                if res.get("hypre_status") == 0
                else f"NOT_CONVERGED (hypre error {res.get('hypre_status')})",
            )
            levels = res.pop("levels")
            import runner_common

            res.update(runner_common.hierarchy_stats(levels))
            np.save(xout + ".npy", first_x)
            xfile = xout + ".npy"
        else:
            raise ValueError(spec["kind"])
    except subprocess.TimeoutExpired:
        rec.update(status=f"TIMEOUT (> {args.timeout:g} s)", wall_seconds=time.perf_counter() - t0)
        return rec
    except Exception as e:  # recorded in the results, the run goes on
        rec.update(status=f"ERROR: {e}"[:600], wall_seconds=time.perf_counter() - t0)
        return rec

    A, b = ctx["A"], ctx["b"]
    x = np.load(xfile)
    rec.update(res)
    rec["true_relres"] = (
        true_relres(A, b, x) if x.shape == b.shape and np.all(np.isfinite(x)) else float("nan")
    )
    rec["converged"] = bool(rec["true_relres"] <= args.tol)
    rec["total_seconds"] = rec["setup_seconds"] + rec["solve_seconds"]
    rec["wall_seconds"] = time.perf_counter() - t0
    if not args.keep_logs:
        rec.pop("engine_log_tail", None)
    for f in (xout + ".npy", xout + ".bin"):
        if os.path.exists(f):
            os.remove(f)
    return rec


# ---- main ------------------------------------------------------------------------


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {' '.join(QUICK_PROBLEMS)}, one repetition, short SciPy caps; "
        "nothing is recorded unless --append is given",
    )
    ap.add_argument(
        "--fem",
        action="store_true",
        help=f"the finite-element problem set: {' '.join(FEM_PROBLEMS)}",
    )
    ap.add_argument(
        "--problems",
        nargs="+",
        metavar="ID",
        help=f"problem ids family-n (default: {' '.join(FULL_PROBLEMS)})",
    )
    ap.add_argument(
        "--solvers",
        nargs="+",
        default=["engine"] + PEERS,
        choices=["engine"] + PEERS,
        help="which solvers to run (default: all)",
    )
    ap.add_argument(
        "--engine-configs",
        nargs="+",
        metavar="FILE",
        default=default_configs(),
        help="shipped configs (by name), JSON files, 'auto' or 'default' to run (default: those "
        "of ENGINE_CONFIGS in bench/solver_plan.py, "
        "each on its problem families)",
    )
    ap.add_argument(
        "--all-configs",
        action="store_true",
        help="run every engine config on every problem, not only its families",
    )
    ap.add_argument(
        "--engine-threads",
        default=None,
        help="comma-separated OMP_NUM_THREADS values for the engine "
        "(default: 1 and the number of cores)",
    )
    ap.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="time each solver this many times in its process and keep the fastest "
        "setup+solve (default 3; 1 with --quick)",
    )
    ap.add_argument(
        "--repeat-budget",
        type=float,
        default=30.0,
        help="stop repeating a solver once it has used this many seconds",
    )
    ap.add_argument("--tol", type=float, default=1e-8, help="relative residual tolerance")
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds per solver process")
    ap.add_argument(
        "--scipy-maxiter",
        type=int,
        default=None,
        help="iteration cap for SciPy CG/GMRES (default 5000; 2000 with --quick)",
    )
    ap.add_argument(
        "--scipy-time-cap",
        type=float,
        default=None,
        help="wall-clock cap for SciPy CG/GMRES in seconds (default 60; 10 with --quick)",
    )
    ap.add_argument("--hypre-np", type=int, default=1, help="MPI ranks for hypre (default 1)")
    ap.add_argument("--hypre-coarsen", choices=["hmis", "pmis"], default="hmis")
    ap.add_argument("--hypre-relax", choices=["l1gs", "l1jacobi"], default="l1gs")
    ap.add_argument(
        "--hypre-agg-levels",
        type=int,
        default=0,
        help="levels of aggressive coarsening in BoomerAMG (default 0)",
    )
    ap.add_argument(
        "--hypre-thetas-2d",
        default="0.25",
        help="comma-separated strength thresholds for hypre on 2D problems",
    )
    ap.add_argument(
        "--hypre-thetas-3d",
        default="0.25,0.5",
        help="comma-separated strength thresholds for hypre on 3D problems "
        "(one hypre row each; ratios use the fastest)",
    )
    ap.add_argument(
        "--engine-python",
        help="interpreter that can import jaxamg._engine "
        "(default: .venv/bin/python, then this one)",
    )
    ap.add_argument(
        "--peer-python",
        help="interpreter with numpy, scipy and pyamg "
        "(default: this one, else bench/.venv is created)",
    )
    ap.add_argument(
        "--workdir",
        default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "jaxamg-bench"),
        help="scratch folder for matrices and solutions",
    )
    ap.add_argument(
        "--results",
        default=None,
        help="raw results JSON (default bench/results/<UTC time>.json; "
        "in the work folder with --quick)",
    )
    ap.add_argument(
        "--append",
        dest="append",
        action="store_true",
        default=None,
        help="keep the report in bench/results/history/ and regenerate "
        "BENCHMARKS.md from bench/results/ (default for full runs)",
    )
    ap.add_argument("--no-append", dest="append", action="store_false")
    ap.add_argument(
        "--keep-logs", action="store_true", help="keep the engine's log in the raw JSON"
    )
    ap.add_argument("--note", default="", help="free text added to the report section")
    args = ap.parse_args(argv)

    args.problems = args.problems or (
        FEM_PROBLEMS if args.fem else QUICK_PROBLEMS if args.quick else FULL_PROBLEMS
    )
    args.repeat = args.repeat if args.repeat is not None else (1 if args.quick else 3)
    args.scipy_maxiter = args.scipy_maxiter or (2000 if args.quick else 5000)
    args.scipy_time_cap = args.scipy_time_cap or (10.0 if args.quick else 60.0)
    if args.append is None:
        args.append = not args.quick
    ncores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    args.hypre_thetas_2d = [float(t) for t in args.hypre_thetas_2d.split(",")]
    args.hypre_thetas_3d = [float(t) for t in args.hypre_thetas_3d.split(",")]
    if args.engine_threads:
        args.engine_threads = [int(t) for t in args.engine_threads.split(",")]
    else:
        args.engine_threads = sorted({1, ncores})
    for cfg in args.engine_configs:
        if cfg not in SPECIAL_CONFIGS and not os.path.exists(config_path(cfg)):
            ap.error(f"no config {cfg} (neither a file nor a shipped config)")
    from problems import parse_pid

    for pid in args.problems:
        try:
            parse_pid(pid)
        except ValueError as e:
            ap.error(str(e))
    return args


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not _has_modules(sys.executable, "numpy, scipy"):
        py = peer_python(None)
        log(f"{sys.executable} lacks numpy/scipy; re-running under {py}")
        os.execv(py, [py, os.path.abspath(__file__), *argv])
    args = parse_args(argv)
    started = time.perf_counter()
    os.makedirs(args.workdir, exist_ok=True)

    ctx: dict = {}
    ctx["peer_python"] = (
        peer_python(args.peer_python)
        if {"pyamg-rs", "pyamg-sa", "scipy"} & set(args.solvers)
        else None
    )
    if "engine" in args.solvers:
        ctx["engine_python"], why = engine_python(args.engine_python)
        if ctx["engine_python"] is None:
            log(f"engine binding not importable ({why}); engine rows are marked NOT RUN")
        else:
            log(f"engine: {ctx['engine_python']}")
    else:
        ctx["engine_python"] = None
    args.engine_available = ctx["engine_python"] is not None
    if "hypre" in args.solvers:
        from peers import hypre_runner

        try:
            hypre_runner.ensure_installed(log)
            ctx["hypre_exe"] = hypre_runner.build_driver(args.workdir)
            ctx["hypre_deb"] = hypre_runner.installed_version()
        except Exception as e:
            ctx["hypre_exe"] = None
            ctx["hypre_error"] = str(e).splitlines()[0][:200]
            log(f"hypre unavailable: {e}")

    import problems as P

    meta = {
        # The report's layout: bench/run_report.py renders an older run as it
        # was recorded (2: with the cost per unknown and core).
        "report_version": 2,
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine_info(),
        "command": "python bench/run.py " + " ".join(argv),
        "git": git_state(),
        "loadavg_start": loadavg(),
        "tol": args.tol,
        "repeat": args.repeat,
        "engine_threads": args.engine_threads,
        "omp_env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(("OMP_", "GOMP_"))},
        "hypre_np": args.hypre_np,
        # Only a requested engine can be missing.
        "engine_available": "engine" not in args.solvers or ctx.get("engine_python") is not None,
        "scipy_caps": [args.scipy_maxiter, args.scipy_time_cap],
        "note": args.note,
        "quick": args.quick,
    }
    results: list[dict] = []
    problems_meta: dict = {}
    for pid in args.problems:
        log(f"problem {pid}: building")
        prob = P.materialize(pid, args.workdir)
        problems_meta[pid] = {k: v for k, v in prob.items() if k not in ("npz", "bin")}
        A, b = P.load_npz(prob["npz"])
        ctx["A"], ctx["b"] = A, b
        for spec in solver_plan(prob, args):
            log(f"  {spec['id']} ...")
            rec = run_one(spec, prob, args, ctx)
            results.append(rec)
            if "setup_seconds" in rec:
                log(
                    f"  {spec['id']}: setup {rec['setup_seconds']:.3f} s, solve {rec['solve_seconds']:.3f} s, "
                    f"{rec.get('iterations')} it, true relres {rec['true_relres']:.2e}, {rec.get('status')}"
                )
            else:
                log(f"  {spec['id']}: {rec['status']}")
        for f in (prob["npz"], prob["bin"]):
            os.remove(f)
    meta["loadavg_end"] = loadavg()
    meta["elapsed_seconds"] = time.perf_counter() - started

    out = {"meta": meta, "problems": problems_meta, "results": results}
    stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = args.results or (
        os.path.join(args.workdir, f"results-{stamp}-quick.json")
        if args.quick
        else os.path.join(HERE, "results", f"{stamp}.json")
    )
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(out, f, indent=1, default=float)
    raw = os.path.relpath(os.path.abspath(path), REPO)
    raw = raw if not raw.startswith("..") else os.path.abspath(path)
    log(f"raw results: {raw}")

    import report

    md = report.render(out, raw_path=raw)
    print(md)
    if args.append:
        log(f"report: {os.path.relpath(report.record(md, out), REPO)}")
        for page, text in report.generated().items():
            with open(page, "w", encoding="utf-8") as f:
                f.write(text)
            log(f"regenerated {os.path.relpath(page, REPO)}")
    log(f"done in {meta['elapsed_seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
