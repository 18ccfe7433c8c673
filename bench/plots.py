"""PNG plots of the benchmark results, for the documentation (docs/images/).

    python bench/plots.py                       # newest bench/results/*.json
    python bench/plots.py bench/results/<stamp>.json --out docs/images

Writes three pictures:

* ``cpu_time_vs_n.png``: setup+solve and solve time against the number of
  unknowns on the 3-D Poisson problems of one bench/run.py results file,
  the engine against its peers (PyAMG, hypre), one line per solver;
* ``gpu_solve_vs_n.png``: solve time against unknowns on the H200, from the
  JSON lines of bench/gpu/results_h200.txt (jaxamg against jax.scipy CG and
  CuPy CG);
* ``residual_history.png``: relative residual against iteration for a fresh
  2-D Poisson solve: jaxamg's default, jaxamg's PCG with the tuned classical
  config, and SciPy's unpreconditioned CG (independent reference).

Only stored results are read for the first two; nothing is re-measured.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DPI = 100  # keeps each PNG well under 200 KB


def _finish(fig, axes, out_dir: str, name: str) -> str:
    """Grid and legend on `axes` (the last one carries the legend), tight
    layout, and the PNG `name` written to `out_dir`; returns its path."""
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
    axes[-1].legend(fontsize=8)
    fig.tight_layout()
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=DPI)
    _pyplot().close(fig)
    return path


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def newest_results() -> str:
    files = sorted(glob.glob(os.path.join(HERE, "results", "*.json")))
    if not files:
        raise SystemExit("bench/plots.py: no bench/results/*.json; run bench/run.py first.")
    return files[-1]


def _short_label(record: dict) -> str:
    if record["kind"] == "engine":
        return f"jaxamg ({record['settings'].removesuffix('.json')}, {record['threads']} thr)"
    return record["label"].split(" (")[0] + (" θ " + record["solver"].split("-t")[1]
                                              if record["solver"].startswith("hypre-t") else "")


def plot_cpu_time_vs_n(results_path: str, out_dir: str, family: str = "poisson3d") -> str:
    """Time against unknowns for every solver of `results_path` on `family`."""
    plt = _pyplot()
    with open(results_path) as f:
        data = json.load(f)
    problems = {pid: p for pid, p in data["problems"].items() if p["family"] == family}
    if not problems:
        raise SystemExit(f"bench/plots.py: {results_path} has no {family} problems.")
    series: dict[str, list[tuple[int, float, float]]] = {}
    for r in data["results"]:
        if r["problem"] in problems and r.get("converged"):
            series.setdefault(_short_label(r), []).append(
                (problems[r["problem"]]["rows"], r["total_seconds"], r["solve_seconds"]))
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for label, points in sorted(series.items()):
        points.sort()
        rows = [p[0] for p in points]
        style = dict(marker="o", linewidth=2.2 if label.startswith("jaxamg") else 1.2)
        axes[0].loglog(rows, [p[1] for p in points], label=label, **style)
        axes[1].loglog(rows, [p[2] for p in points], label=label, **style)
    for ax, title in zip(axes, ("setup + solve", "solve")):
        ax.set_title(title)
        ax.set_xlabel("unknowns")
    axes[0].set_ylabel("seconds")
    meta = data["meta"]
    fig.suptitle(f"3-D Poisson to relative residual 1e-8, {meta['machine']['cpu']}, "
                 f"{meta['machine']['nproc']} cores ({meta['date']})", fontsize=10)
    return _finish(fig, axes, out_dir, "cpu_time_vs_n.png")


def _gpu_records(path: str) -> list[dict]:
    records = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                records.append(json.loads(line))
    return records


def plot_gpu_solve_vs_n(results_txt: str, out_dir: str) -> str:
    """Solve time against unknowns per method from the H200 JSON lines."""
    plt = _pyplot()
    series: dict[str, dict[int, float]] = {}
    for r in _gpu_records(results_txt):
        if "solve_s" in r:
            series.setdefault(r["method"], {})[r["n"]] = r["solve_s"]  # later runs win
    if not series:
        raise SystemExit(f"bench/plots.py: no JSON result lines in {results_txt}.")
    fig, ax = plt.subplots(figsize=(6.4, 4))
    for method, points in sorted(series.items()):
        ns = sorted(points)
        ax.loglog(ns, [points[n] for n in ns], marker="o", label=method,
                  linewidth=2.2 if method.startswith("jaxamg") else 1.2)
    ax.set_xlabel("unknowns")
    ax.set_ylabel("solve seconds (warm cache)")
    ax.set_title("3-D Poisson on one NVIDIA H200, float64, relative residual 1e-8", fontsize=10)
    return _finish(fig, [ax], out_dir, "gpu_solve_vs_n.png")


def residual_histories(n: int = 64) -> dict[str, list[float]]:
    """Relative residual histories on the 2-D Poisson problem of side `n`."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import numpy as np
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    import jaxamg
    from jaxamg import matrices

    A = matrices.poisson_matrix(n)
    b = matrices.rhs_random(n * n, dtype=jnp.float64)
    with open(os.path.join(HERE, "configs", "pcg_classical_agg1_cheby2.json")) as f:
        tuned = json.load(f)
    histories = {}
    for label, kwargs in (
        ("jaxamg default (PBICGSTAB + classical AMG)", {"tolerance": 1e-8}),
        ("jaxamg PCG + tuned classical AMG", {"config": tuned}),
    ):
        _, info = jaxamg.solve(A, b, **kwargs)
        h = np.asarray(info["residual_history"], dtype=float)
        histories[label] = list(h / h[0])
    # SciPy's CG from x0 = 0: the true residual after every iteration.
    A_sp = sp.csr_matrix((np.asarray(A.data, float), np.asarray(A.indices),
                          np.asarray(A.indptr)), shape=A.shape)
    b_np = np.asarray(b)
    scipy_history = [1.0]

    def record(xk):
        scipy_history.append(np.linalg.norm(b_np - A_sp @ xk) / np.linalg.norm(b_np))

    spla.cg(A_sp, b_np, rtol=1e-8, maxiter=2000, callback=record)
    histories["SciPy CG (no preconditioner)"] = scipy_history
    return histories


def plot_residual_history(out_dir: str, n: int = 64) -> str:
    """The histories of :func:`residual_histories` on a log scale."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4))
    shown = 40  # the AMG solves end long before; SciPy's count goes in its label
    for label, h in residual_histories(n).items():
        ax.semilogy(range(min(len(h), shown + 1)), h[: shown + 1],
                    label=f"{label}: {len(h) - 1} iterations",
                    linewidth=2.2 if label.startswith("jaxamg") else 1.2)
    ax.set_xlim(0, shown)
    ax.set_xlabel("iteration")
    ax.set_ylabel("||b - A x|| / ||b||")
    ax.set_title(f"2-D Poisson {n}×{n}, float64", fontsize=10)
    return _finish(fig, [ax], out_dir, "residual_history.png")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", help="bench/run.py results JSON (default: newest)")
    parser.add_argument("--gpu-results", default=os.path.join(HERE, "gpu", "results_h200.txt"))
    parser.add_argument("--out", default=os.path.join(REPO, "docs", "images"))
    parser.add_argument("--grid", type=int, default=64, help="side of the residual-history grid")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    written = [plot_cpu_time_vs_n(args.results or newest_results(), args.out)]
    if os.path.exists(args.gpu_results):
        written.append(plot_gpu_solve_vs_n(args.gpu_results, args.out))
    written.append(plot_residual_history(args.out, args.grid))
    for path in written:
        print(f"{os.path.relpath(path, REPO)}: {os.path.getsize(path) / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
