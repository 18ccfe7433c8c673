"""Where the CPU solve's time goes, and what a gradient must cost.

Measures, in one run on this machine:
  1. the bandwidth its cores reach for a += b split over the threads (numpy
     releases the GIL; three streams, none a write to memory not read
     first), on two arrays as large as the hierarchy and its vectors (which
     may then sit in the last-level cache) and on 2 x 512 MiB (memory);
  2. for 3-D Poisson at the given sizes with PCG + classical AMG, V(1,1)
     l1-Jacobi (bench/jax_solve.py's PCG_AMG): the time per PCG iteration
     of the engine's solve against a traffic model of one iteration, built
     from the hierarchy's level sizes and prolongation entries (below);
  3. the adjoint: iterations and time of the forward solve (A x = b) and the
     transposed solve (A^T y = g) on the same setup for three right-hand
     sides: b, 2x (the cotangent of sum(x**2)) and a random vector; for the
     symmetric problem (PCG) and the nonsymmetric one (FGMRES, skew 0.3).

The traffic model counts the streams of each pass of the kernels as they
are written: 8-byte values, 4-byte indices; x read once per SpMV, as a
7-point stencil's reuse allows; a write to an array the pass does not read
costs two streams (the cache line is read before it is written), an update
in place one. On level l < coarsest (n rows, m coarse rows):
    pre-smooth from x = 0 (x = D^-1 b):   D^-1, b read; x written
    b_c = P^T (b - A x), one pass:        A, P, x, b read; b_c and the
                                          threads' partial sums written
    x += P x_c:                           P, x_c read; x updated
    post-smooth (tmp = x + D^-1 (b - A x), then x = tmp):
                                          A, x, b, D^-1 read, tmp written;
                                          tmp read, x written
  coarsest: the dense LU factors read once (m^2 values);
  PCG: q = A p; <r, z>; p = z + beta p; <p, q>; x += alpha p; r -= alpha q;
  ||r||.

Usage: .venv/bin/python bench/cpu_solve_model.py [--sizes 48 64] [--repeat 5]
Prints markdown; keep it, with the header lines, as the next report in
bench/results/history/, and its current figures in bench/results/latest/
(bench/report.py says how; make bench-report regenerates BENCHMARKS.md).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from jax_solve import FGMRES_AMG, PCG_AMG  # noqa: E402

from jaxamg import matrices  # noqa: E402
from jaxamg._core.native import engine as _load_engine  # noqa: E402  (applies the OpenMP settings)
from jaxamg.config import prepare_config  # noqa: E402

VALUE, INDEX = 8, 4


def update_bandwidth(threads: int, repeat: int, total_bytes: int) -> float:
    """Bytes per second of a += b over `threads` slices (three streams), a
    and b together `total_bytes` long."""
    n = max(total_bytes // (2 * VALUE), 1 << 16)
    a, b = np.random.rand(n), np.random.rand(n)
    bounds = np.linspace(0, n, threads + 1).astype(int)

    def part(k):
        lo, hi = bounds[k], bounds[k + 1]
        np.add(a[lo:hi], b[lo:hi], out=a[lo:hi])

    best = float("inf")
    with ThreadPoolExecutor(threads) as pool:
        for _ in range(repeat):
            t = time.perf_counter()
            list(pool.map(part, range(threads)))
            best = min(best, time.perf_counter() - t)
    return 3 * VALUE * n / best


def matrix_bytes(rows: int, nnz: int) -> int:
    return nnz * (VALUE + INDEX) + (rows + 1) * INDEX


def working_set_bytes(levels, p_nnz) -> int:
    """The hierarchy's matrices (A and P on every level, R = P^T as large)
    and about eight vectors per level."""
    total = sum(matrix_bytes(n, nnz) + 8 * n * VALUE for n, nnz in levels)
    return total + sum(2 * matrix_bytes(n, p) for (n, _), p in zip(levels, p_nnz))


def pcg_iteration_bytes(levels, p_nnz, threads: int) -> int:
    """The model above for one PCG iteration preconditioned by one V(1,1)."""
    fresh = 2 * VALUE  # a value written where nothing was read first
    total = 0
    for l, ((n, nnz), p) in enumerate(zip(levels[:-1], p_nnz)):
        m = levels[l + 1][0]
        a, pm = matrix_bytes(n, nnz), matrix_bytes(n, p)
        partial = threads * m * (fresh + VALUE) if threads > 1 else 0
        total += 2 * n * VALUE + n * fresh  # pre-smooth from zero
        total += a + pm + 2 * n * VALUE + m * fresh + partial  # restrict the residual
        total += pm + m * VALUE + 2 * n * VALUE  # prolongate and add
        total += a + 4 * n * VALUE + 2 * n * fresh  # post-smooth
    m = levels[-1][0]
    total += m * m * VALUE  # coarsest: dense LU
    n, nnz = levels[0]
    total += matrix_bytes(n, nnz) + n * VALUE + n * fresh  # q = A p
    total += (2 + 3 + 2 + 3 + 3 + 1) * n * VALUE  # dots, norm, updates
    return total


def setup_solver(config, A):
    s = _load_engine().EngineSolver(prepare_config(config), "float64")
    s.setup(np.asarray(A.indptr), np.asarray(A.indices), np.asarray(A.data))
    return s


def timed(s, rhs, repeat, transpose=False):
    best, its = float("inf"), None
    for _ in range(repeat):
        x, info = s.solve(rhs, transpose=transpose)
        best = min(best, info["solve_seconds"])
        its = info["iterations"]
        assert info["status_name"] == "SUCCESS", info
    return x, best, its


def iteration_rows(sizes, repeat, threads):
    rows = []
    for n3d in sizes:
        A = matrices.poisson3d_matrix(n3d, dtype=np.float64)
        b = np.asarray(matrices.rhs_random(n3d**3, seed=1, dtype=np.float64))
        s = setup_solver(PCG_AMG, A)
        timed(s, b, 2)  # warm-up: first-touch of the work vectors
        _, t, its = timed(s, b, repeat)
        levels, p_nnz = s.hierarchy(), s.prolongation_nnz()
        model = pcg_iteration_bytes(levels, p_nnz, threads)
        working = working_set_bytes(levels, p_nnz)
        bandwidth = update_bandwidth(threads, max(repeat, 20), working)
        per_iter, floor = t / its, model / bandwidth
        complexity = sum(nnz for _, nnz in levels) / levels[0][1]
        rows.append(
            (
                f"{n3d}^3",
                len(levels),
                f"{complexity:.2f}",
                its,
                f"{t:.3f}",
                f"{working / 2**20:.0f}",
                f"{bandwidth / 1e9:.1f}",
                f"{model / 1e6:.0f}",
                f"{1e3 * floor:.2f}",
                f"{1e3 * per_iter:.2f}",
                f"{floor / per_iter:.0%}",
            )
        )
    return rows


def adjoint_rows(n3d, repeat):
    rows = []
    rng = np.random.default_rng(0)
    for name, skew, config in (
        ("symmetric, PCG", 0.0, PCG_AMG),
        ("nonsymmetric (skew 0.3), FGMRES", 0.3, FGMRES_AMG),
    ):
        A = matrices.poisson3d_matrix(n3d, skew=skew, dtype=np.float64)
        b = np.asarray(matrices.rhs_random(n3d**3, seed=1, dtype=np.float64))
        s = setup_solver(config, A)
        timed(s, b, 1, transpose=True)  # builds the transposed hierarchy once
        x, t_fwd, its_fwd = timed(s, b, repeat)
        for label, g in (
            ("b", b),
            ("2x (sum(x**2))", 2 * x),
            ("random", rng.standard_normal(b.size)),
        ):
            _, t, its = timed(s, g, repeat, transpose=True)
            rows.append(
                (name, label, its_fwd, f"{t_fwd:.3f}", its, f"{t:.3f}", f"{1 + t / t_fwd:.2f}")
            )
    return rows


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[48, 64])
    p.add_argument("--adjoint-size", type=int, default=64)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    threads = int(os.environ.get("OMP_NUM_THREADS", os.cpu_count() or 1))
    memory = update_bandwidth(threads, args.repeat, 1 << 30)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        cwd=os.path.dirname(__file__),
    ).stdout.strip()
    print(f"## CPU solve against its traffic model — {datetime.date.today()}\n")
    print(
        f"- machine: {os.cpu_count()} cores, {platform.processor() or platform.machine()}; "
        f"{threads} threads; commit {commit}"
    )
    print(
        f"- command: `.venv/bin/python bench/cpu_solve_model.py "
        f"--sizes {' '.join(map(str, args.sizes))} --adjoint-size {args.adjoint_size} "
        f"--repeat {args.repeat}`"
    )
    print(
        f"- bandwidth of a += b on 2 x 512 MiB ({threads} threads): {memory / 1e9:.1f} GB/s; "
        "the table's is that of the hierarchy's size\n"
    )
    print(
        table(
            [
                "problem",
                "levels",
                "op. cx",
                "iterations",
                "solve s",
                "working set MiB",
                "a += b at that size GB/s",
                "model MB/iter",
                "floor ms/iter",
                "measured ms/iter",
                "floor / measured",
            ],
            iteration_rows(args.sizes, args.repeat, threads),
        )
    )
    print(
        f"\nForward and transposed solves on one setup, {args.adjoint_size}^3 "
        "(a warm gradient costs about forward + transposed):\n"
    )
    print(
        table(
            [
                "problem",
                "adjoint rhs",
                "forward its",
                "forward s",
                "transposed its",
                "transposed s",
                "(forward + transposed) / forward",
            ],
            adjoint_rows(args.adjoint_size, args.repeat),
        )
    )


if __name__ == "__main__":
    main()
