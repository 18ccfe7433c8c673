"""Benchmarks of the JAX layer (`jaxamg.solve`) against the engine itself.

Measures, in one run:
  1. overhead: a jitted, cached solve of a 10^4-unknown tridiagonal system
     (CG), minus the engine's own solve time for the same matrix and config
     (the two timed alternately), and the same as a ratio for the tuned AMG
     config on 3-D Poisson at --overhead-sizes (32^3 and 64^3); the same for
     the adjoint (A^T) solve;
  2. gradient cost: jit(grad) of a 3-D Poisson solve over jit(forward),
     symmetric (is_symmetric=True) and nonsymmetric, with the cache warm
     (no setup in either) and cold (a new setup per call);
  3. batching: jax.vmap over 8 right-hand sides against one solve.

Usage: .venv/bin/python bench/jax_solve.py [--n3d 64] [--repeat 5]
       [--overhead-sizes 32 64] [--only-overhead]
Prints a markdown table; keep it, with the header lines, as the next report in
bench/results/history/, and its figures in bench/results/latest/jax_layer.json
(bench/report.py says how; make bench-report regenerates BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

from jax.experimental import sparse as jsparse  # noqa: E402

import jaxamg  # noqa: E402
from jaxamg import matrices  # noqa: E402
from jaxamg._core.native import engine as _load_engine  # noqa: E402  (applies the OpenMP settings)
from jaxamg.config import prepare_config  # noqa: E402

PCG_AMG = {
    "solver": "PCG",
    "tolerance": 1e-8,
    "max_iters": 100,
    "preconditioner": {
        "solver": "AMG",
        "interp_max_elements": 4,
        "strength_threshold": 0.25,
        "smoother": {"scope": "amg_smoother", "solver": "JACOBI_L1"},
        "dense_lu_num_rows": 128,
    },
}
FGMRES_AMG = dict(PCG_AMG, solver="FGMRES", gmres_n_restart=30)


def best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


# The tuned config the 3-D Poisson overhead rows run (shipped, by name).
TUNED = "PCG_CLASSICAL_AGG1_CHEBY2"


def overhead_problem(name):
    """(A, b, config) of an overhead row: "tridiagonal" (CG, 10^4 unknowns)
    or "poisson3d-N" (the tuned AMG config on the 7-point N^3 Poisson)."""
    if name == "tridiagonal":
        n = 10_000
        A = matrices.tridiagonal_matrix(n, 2.5, dtype=jnp.float64)
        cfg = {"solver": "CG", "tolerance": 1e-8, "max_iters": 200}
    else:
        n3d = int(name.split("-")[1])
        n = n3d**3
        A = matrices.poisson3d_matrix(n3d, dtype=jnp.float64)
        cfg = TUNED
    b = matrices.rhs_random(n, seed=0, dtype=jnp.float64)
    return A, b, cfg


def engine_reference(name, calls):
    """The engine's own solve times (forward, adjoint) for an overhead row's
    problem, printed as two minima in seconds. Run in a child process: the
    CPU handler solves on its own engine thread, which owns the process's
    OpenMP team, so engine calls from this thread would start a second team
    and slow both down (libgomp stops spinning when it manages more threads
    than cores)."""
    A, b, cfg = overhead_problem(name)
    es = _load_engine().EngineSolver(prepare_config(cfg), "float64")
    es.setup(np.asarray(A.indptr), np.asarray(A.indices), np.asarray(A.data))
    bn = np.asarray(b)
    fwd = min(es.solve(bn)[1]["solve_seconds"] for _ in range(calls))
    adj = min(es.solve(bn, transpose=True)[1]["solve_seconds"] for _ in range(calls))
    print(fwd, adj)


def overhead(repeat, names):
    """A jitted, cached solve against the engine's own solve time, forward
    and adjoint (the A^T solve of jax.grad on the forward setup), for each
    problem of `names` (overhead_problem). The tridiagonal system's target
    is an absolute overhead (≤ 100 µs); the AMG ones' a ratio (≤ 1.1)."""
    rows = []
    for name in names:
        rows += _overhead_rows(name, repeat)
    return rows


def _overhead_rows(name, repeat):
    A, b, cfg = overhead_problem(name)
    f = jax.jit(
        lambda d, r: jaxamg.solve(
            jsparse.BCSR((d, A.indices, A.indptr), shape=A.shape), r, config=cfg
        )[0]
    )
    # The adjoint alone: the transpose of the solve, jitted (its setup is the
    # forward's; A is not declared symmetric, so the engine solves with A^T).
    adjoint = jax.jit(
        lambda ct: jax.linear_transpose(lambda r: jaxamg.solve(A, r, config=cfg)[0], b)(ct)[0]
    )
    f(A.data, b).block_until_ready()
    adjoint(b).block_until_ready()
    times = {"jit": [], "engine": [], "jit_adjoint": [], "engine_adjoint": []}
    calls = 40 if name == "tridiagonal" else 10
    # Blocks of jitted calls alternate with blocks of engine calls (in a
    # child process, see engine_reference), so that both minima see the same
    # machine load.
    for _ in range(repeat):
        for _ in range(calls):
            t = time.perf_counter()
            f(A.data, b).block_until_ready()
            times["jit"].append(time.perf_counter() - t)
            t = time.perf_counter()
            adjoint(b).block_until_ready()
            times["jit_adjoint"].append(time.perf_counter() - t)
        out = subprocess.run(
            [sys.executable, __file__, "--engine-reference", str(calls), "--problem", name],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        times["engine"].append(float(out[-2]))
        times["engine_adjoint"].append(float(out[-1]))
    rows = []
    what = (
        "CG, tridiagonal 10^4" if name == "tridiagonal" else f"{TUNED}, 3-D Poisson {name[10:]}^3"
    )
    # The target is set for the forward solve; the adjoint's overhead is reported.
    for label, jit_key, engine_key, target in (
        ("", "jit", "engine", True),
        (" adjoint (A^T)", "jit_adjoint", "engine_adjoint", False),
    ):
        t_jax, t_eng = min(times[jit_key]), min(times[engine_key])
        if name == "tridiagonal":
            extra, goal, met = (
                f"{(t_jax - t_eng) * 1e6:.0f} µs",
                "≤ 100 µs",
                t_jax - t_eng <= 100e-6,
            )
        else:
            extra, goal, met = f"{t_jax / t_eng:.2f}×", "≤ 1.1×", t_jax / t_eng <= 1.1
        rows.append(
            (
                f"overhead: jitted cached {what}{label}",
                f"{t_jax * 1e6:.0f} µs",
                f"engine solve {t_eng * 1e6:.0f} µs",
                extra,
                goal if target else "(reported)",
                ("yes" if met else "no") if target else "—",
            )
        )
    return rows


def gradient(n3d, repeat):
    rows = []
    for name, skew, cfg in (("symmetric", 0.0, PCG_AMG), ("nonsymmetric", 0.3, FGMRES_AMG)):
        A = matrices.poisson3d_matrix(n3d, skew=skew, dtype=jnp.float64)
        if skew == 0.0:
            jaxamg.with_cache(A, is_symmetric=True)
        b = matrices.rhs_random(n3d**3, seed=1, dtype=jnp.float64)

        def build(d):
            M = jsparse.BCSR((d, A.indices, A.indptr), shape=A.shape)
            if skew == 0.0:
                jaxamg.with_cache(M, is_symmetric=True)
            return M

        fwd = jax.jit(lambda d, r: jaxamg.solve(build(d), r, config=cfg)[0])
        grad = jax.jit(
            jax.grad(
                lambda d, r: jnp.sum(jaxamg.solve(build(d), r, config=cfg)[0] ** 2), argnums=(0, 1)
            )
        )
        fwd(A.data, b).block_until_ready()
        jax.block_until_ready(grad(A.data, b))
        warm_f, _ = best(lambda: fwd(A.data, b), repeat)
        warm_g, _ = best(lambda: grad(A.data, b), repeat)

        def cold(fn):
            def run():
                jaxamg.clear_solver_cache()
                return fn(A.data, b)

            return run

        cold_f, _ = best(cold(fwd), repeat)
        cold_g, _ = best(cold(grad), repeat)
        target = 1.3 if skew == 0.0 else 2.0
        for label, f_t, g_t in (
            ("warm cache", warm_f, warm_g),
            ("cold cache (setup each call)", cold_f, cold_g),
        ):
            ratio = g_t / f_t
            rows.append(
                (
                    f"grad/forward, {name} 3-D Poisson {n3d}^3, {label}",
                    f"{g_t:.3f} s",
                    f"forward {f_t:.3f} s",
                    f"{ratio:.2f}×",
                    f"≤ {target}×",
                    "yes" if ratio <= target else "no",
                )
            )
    return rows


def batching(n3d, repeat):
    A = matrices.poisson3d_matrix(n3d, dtype=jnp.float64)
    B = jnp.stack([matrices.rhs_random(n3d**3, seed=s, dtype=jnp.float64) for s in range(8)])
    one = jax.jit(lambda r: jaxamg.solve(A, r, config=PCG_AMG)[0])
    many = jax.jit(jax.vmap(lambda r: jaxamg.solve(A, r, config=PCG_AMG)[0]))

    def cold(fn, arg):
        def run():
            jaxamg.clear_solver_cache()
            return fn(arg)

        return run

    one(B[0]).block_until_ready()
    many(B).block_until_ready()
    t1, _ = best(cold(one, B[0]), repeat)
    t8, _ = best(cold(many, B), repeat)
    ratio = t8 / t1
    return [
        (
            f"vmap over 8 right-hand sides, 3-D Poisson {n3d}^3 (setup included)",
            f"{t8:.3f} s",
            f"one rhs {t1:.3f} s",
            f"{ratio:.2f}×",
            "≤ 4×",
            "yes" if ratio <= 4 else "no",
        )
    ]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n3d", type=int, default=64)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument(
        "--overhead-sizes",
        type=int,
        nargs="*",
        default=[32, 64],
        help="3-D Poisson sizes of the AMG overhead rows (the tuned config)",
    )
    p.add_argument("--only-overhead", action="store_true", help="the overhead rows only (item 1)")
    p.add_argument(
        "--engine-reference", type=int, default=0, metavar="CALLS", help=argparse.SUPPRESS
    )
    p.add_argument("--problem", default="tridiagonal", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.engine_reference:
        engine_reference(args.problem, args.engine_reference)
        return
    names = ["tridiagonal"] + [f"poisson3d-{n}" for n in args.overhead_sizes]
    rows = overhead(args.repeat, names)
    if not args.only_overhead:
        rows += gradient(args.n3d, args.repeat) + batching(args.n3d, args.repeat)
    cpu = next(
        (l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")),
        platform.processor(),
    )
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        commit = "?"
    print(f"\n## JAX layer — {datetime.date.today()}\n")
    print(f"- machine: {os.cpu_count()} cores, {cpu}; jax {jax.__version__}; commit {commit}")
    print(f"- command: `.venv/bin/python bench/jax_solve.py {' '.join(sys.argv[1:])}`")
    print(f"- load average at end: {os.getloadavg()[0]:.2f}\n")
    print("| measurement | time | reference | ratio / overhead | target | met? |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print("| " + " | ".join(r) + " |")


if __name__ == "__main__":
    main()
