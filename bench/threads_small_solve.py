"""Are 2 engine threads ever slower than 1 on a small system, through JAX?

The issue's case: a 4*10^4-unknown pure-Neumann Poisson problem (2-D,
5-point, 200 x 200), the tuned config ``PCG_CLASSICAL_MCGS_T025``, a
declared constant null space, and a fresh setup on every call (the values
change) as well as a cached one. Each thread count runs in its own process
(OMP_NUM_THREADS is read once per process); the rounds alternate 1 and 2
threads so that drift in the machine's speed hits both. Every call's
solution is copied to the host, so nothing can be skipped.

    .venv/bin/python bench/threads_small_solve.py [--n 200] [--rounds 3] [--calls 10]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time


def _problem(n: int):
    import numpy as np
    import scipy.sparse as sp

    one = np.ones(n)
    T = sp.diags([-one[:-1], 2 * one, -one[:-1]], [-1, 0, 1]).tolil()
    T[0, 0] = T[-1, -1] = 1.0  # Neumann ends: the constants are the null space
    T = T.tocsr()
    eye = sp.identity(n)
    A = (sp.kron(T, eye) + sp.kron(eye, T)).tocsr()
    b = np.random.default_rng(0).standard_normal(n * n)
    return A, b - b.mean()


def _child(n: int, calls: int) -> None:
    import jax
    import numpy as np

    jax.config.update("jax_enable_x64", True)
    from jax.experimental import sparse as jsparse

    import jaxamg

    A, b = _problem(n)

    def call(scale: float) -> int:
        M = jaxamg.with_cache(jsparse.BCSR.from_scipy_sparse(A * scale), is_symmetric=True)
        x, info = jaxamg.solve(M, b, config="PCG_CLASSICAL_MCGS_T025", nullspace="constant")
        np.asarray(x)
        return int(info["iterations"])

    call(1.0)  # compile
    fresh, cached = [], []
    for i in range(calls):
        t0 = time.perf_counter()
        its = call(1.0 + 1e-3 * (i + 1))
        fresh.append(time.perf_counter() - t0)
    for _ in range(calls):
        t0 = time.perf_counter()
        call(1.0 + 1e-3 * calls)
        cached.append(time.perf_counter() - t0)
    print(
        json.dumps(
            {
                "fresh": sorted(fresh)[calls // 2],
                "cached": sorted(cached)[calls // 2],
                "iterations": its,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="grid side (n^2 unknowns)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=10, help="timed calls per kind")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.n, args.calls)
        return
    best: dict[int, dict[str, float]] = {}
    for _ in range(args.rounds):
        for threads in (1, 2):
            env = dict(os.environ, OMP_NUM_THREADS=str(threads))
            out = (
                subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--child",
                        "--n",
                        str(args.n),
                        "--calls",
                        str(args.calls),
                    ],
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                .stdout.strip()
                .splitlines()[-1]
            )
            got = json.loads(out)
            mine = best.setdefault(threads, got)
            for kind in ("fresh", "cached"):
                mine[kind] = min(mine[kind], got[kind])
    print(
        f"pure-Neumann Poisson {args.n}x{args.n} ({args.n**2} unknowns), "
        f"PCG_CLASSICAL_MCGS_T025, {best[1]['iterations']} iterations; "
        f"median of {args.calls} calls, best of {args.rounds} processes"
    )
    for kind in ("fresh", "cached"):
        t1, t2 = best[1][kind], best[2][kind]
        print(
            f"  {kind:6s} setup: 1 thread {t1 * 1e3:7.1f} ms, 2 threads {t2 * 1e3:7.1f} ms, "
            f"2/1 = {t2 / t1:.2f}"
        )


if __name__ == "__main__":
    main()
