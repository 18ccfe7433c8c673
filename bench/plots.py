"""PNG plots of the benchmark results, linked from BENCHMARKS.md and the README.

    python bench/plots.py                       # from bench/results/ (make bench-plots)
    python bench/plots.py --results bench/results/<stamp>.json --out docs/images
    python bench/plots.py --residual-history    # also the fresh-solve plot (needs the engine)

Reads the same data as bench/report.py, so the plots show the page's runs:

* ``cpu_time_vs_n.png``: setup+solve and solve time against the number of
  unknowns on the 3-D Poisson problems of the newest bench/run.py results
  with peers (bench/report.py's choice), ours against PyAMG and hypre;
* ``iterations_vs_n.png``: iterations against unknowns on 3-D Poisson, the
  same CPU run and the GPU runs of bench/results/latest/ (ours, CuPy CG);
* ``gpu_solve_vs_n.png``: solve time against unknowns from the "points" of
  the GPU summaries in bench/results/latest/ (ours, jax.scipy CG, CuPy CG),
  one line per solver and card;
* ``residual_history.png`` (only with --residual-history): relative residual
  against iteration for a fresh 2-D Poisson solve: jaxamg's default,
  jaxamg's PCG with the tuned classical config, and SciPy's CG.

Only stored results are read for the first three; nothing is re-measured.
Needs matplotlib (the dev extra of pyproject.toml, installed by `make venv`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import report  # noqa: E402  (bench/ is a folder of scripts, not a package)

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
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(
            "bench/plots.py needs the package matplotlib: `make venv` installs it "
            "(dev extra of pyproject.toml), or `pip install matplotlib`."
        ) from None

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def page_results() -> str:
    """The results file of the page's 3-D Poisson table."""
    found = report.latest_run("poisson3d")
    if not found:
        raise SystemExit(
            "bench/plots.py: no bench/results/*.json with poisson3d and a peer; "
            "run bench/run.py first."
        )
    return found[0]


def gpu_points() -> list[tuple[str, dict]]:
    """(legend suffix, point) of the newest summary of every gpu-* family."""
    points = []
    for fam, runs in report.load_summaries().items():
        if fam.startswith("gpu-"):
            s = runs[0]
            tag = f"{s.get('device', fam)}, {s['date'][:10]}"
            points += [(tag, p) for p in s.get("points", [])]
    return points


def _series(points: list[tuple[str, dict]], value) -> dict[str, list[tuple[int, float]]]:
    series: dict[str, list[tuple[int, float]]] = {}
    for tag, p in points:
        v = value(p)
        if v is not None:
            series.setdefault(f"{p['solver']} ({tag})", []).append((p["unknowns"], v))
    return series


def _solve_seconds(p: dict) -> float | None:
    if "solve_s" in p:
        return p["solve_s"]
    return p["solve_ms"] / 1000 if "solve_ms" in p else None


def _short_label(record: dict) -> str:
    if record["kind"] == "engine":
        return f"jaxamg ({record['settings'].removesuffix('.json')}, {record['threads']} thr)"
    return record["label"].split(" (")[0] + (
        " θ " + record["solver"].split("-t")[1] if record["solver"].startswith("hypre-t") else ""
    )


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
                (problems[r["problem"]]["rows"], r["total_seconds"], r["solve_seconds"])
            )
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
    fig.suptitle(
        f"3-D Poisson to relative residual 1e-8, {meta['machine']['cpu']}, "
        f"{meta['machine']['nproc']} cores ({meta['date']})",
        fontsize=10,
    )
    return _finish(fig, axes, out_dir, "cpu_time_vs_n.png")


def plot_gpu_solve_vs_n(out_dir: str) -> str | None:
    """Solve time against unknowns per solver and card, from the summaries."""
    series = _series(gpu_points(), _solve_seconds)
    if not series:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for label, points in sorted(series.items()):
        points.sort()
        ax.loglog(
            [p[0] for p in points],
            [p[1] for p in points],
            marker="o",
            label=label,
            linewidth=2.2 if label.startswith("jaxamg") else 1.2,
        )
    ax.set_xlabel("unknowns")
    ax.set_ylabel("solve seconds")
    ax.set_title("3-D Poisson on one GPU, float64 solve to relative residual 1e-8", fontsize=10)
    return _finish(fig, [ax], out_dir, "gpu_solve_vs_n.png")


def plot_iterations_vs_n(results_path: str, out_dir: str) -> str:
    """Iterations against unknowns on 3-D Poisson: the CPU run and the GPU runs."""
    plt = _pyplot()
    with open(results_path) as f:
        data = json.load(f)
    problems = {pid: p for pid, p in data["problems"].items() if p["family"] == "poisson3d"}
    cpu: dict[str, list[tuple[int, float]]] = {}
    for r in data["results"]:
        if r["problem"] in problems and r.get("converged") and r.get("iterations") is not None:
            cpu.setdefault(f"{_short_label(r)} (CPU)", []).append(
                (problems[r["problem"]]["rows"], r["iterations"])
            )
    gpu = _series(gpu_points(), lambda p: p.get("iterations"))
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for label, points in sorted(cpu.items()) + sorted(gpu.items()):
        points.sort()
        ax.semilogx(
            [p[0] for p in points],
            [p[1] for p in points],
            marker="o",
            label=label,
            linestyle="-" if label.endswith("(CPU)") else "--",
            linewidth=2.2 if label.startswith("jaxamg") else 1.2,
        )
    ax.set_yscale("log")
    ax.set_xlabel("unknowns")
    ax.set_ylabel("Krylov iterations to 1e-8")
    ax.set_title(
        f"3-D Poisson: CPU run of {data['meta']['date']}; GPU runs of bench/results/latest",
        fontsize=10,
    )
    return _finish(fig, [ax], out_dir, "iterations_vs_n.png")


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
    tuned = jaxamg.config.load("PCG_CLASSICAL_AGG1_CHEBY2")
    histories = {}
    for label, kwargs in (
        ("jaxamg default (PBICGSTAB + classical AMG)", {"tolerance": 1e-8}),
        ("jaxamg PCG + tuned classical AMG", {"config": tuned}),
    ):
        _, info = jaxamg.solve(A, b, **kwargs)
        h = np.asarray(info["residual_history"], dtype=float)
        histories[label] = list(h / h[0])
    # SciPy's CG from x0 = 0: the true residual after every iteration.
    A_sp = sp.csr_matrix(
        (np.asarray(A.data, float), np.asarray(A.indices), np.asarray(A.indptr)), shape=A.shape
    )
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
        ax.semilogy(
            range(min(len(h), shown + 1)),
            h[: shown + 1],
            label=f"{label}: {len(h) - 1} iterations",
            linewidth=2.2 if label.startswith("jaxamg") else 1.2,
        )
    ax.set_xlim(0, shown)
    ax.set_xlabel("iteration")
    ax.set_ylabel("||b - A x|| / ||b||")
    ax.set_title(f"2-D Poisson {n}×{n}, float64", fontsize=10)
    return _finish(fig, [ax], out_dir, "residual_history.png")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", help="bench/run.py results JSON (default: the page's run)")
    parser.add_argument("--out", default=os.path.join(REPO, "docs", "images"))
    parser.add_argument(
        "--residual-history",
        action="store_true",
        help="also solve afresh for residual_history.png (needs the built engine)",
    )
    parser.add_argument("--grid", type=int, default=64, help="side of the residual-history grid")
    args = parser.parse_args(argv)
    _pyplot()  # a missing matplotlib stops here, before anything is written
    os.makedirs(args.out, exist_ok=True)
    results = args.results or page_results()
    written = [
        plot_cpu_time_vs_n(results, args.out),
        plot_iterations_vs_n(results, args.out),
        plot_gpu_solve_vs_n(args.out),
    ]
    if args.residual_history:
        written.append(plot_residual_history(args.out, args.grid))
    for path in filter(None, written):
        print(f"{os.path.relpath(path, REPO)}: {os.path.getsize(path) / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
