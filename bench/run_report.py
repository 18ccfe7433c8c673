"""The Markdown report of one bench/run.py run: its tables, per problem
family, with the ratios to the peers of the same run and the targets each
row is held to. bench/report.py files it in the history and builds
BENCHMARKS.md's CPU families from the same functions.
"""

from __future__ import annotations

import math

RATIO_PEERS = [
    ("pyamg-rs", "PyAMG RS"),
    ("pyamg-sa", "PyAMG SA"),
    ("hypre", "best hypre"),
    ("scipy", "SciPy"),
]
# The leading columns of a solve row, in a run's tables and the page's.
SOLVE_COLUMNS = [
    "solver",
    "thr",
    "setup s",
    "solve s",
    "setup+solve s",
    "iters",
    "true relres",
]


# ---- formatting helpers -----------------------------------------------------------


def fmt_s(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_e(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.2e}"


def fmt_mib(b) -> str:
    return "–" if b is None or b < 0 else f"{b / 2**20:.1f}"


def fmt_ok(flag) -> str:
    return "yes" if flag else "**no**"


# ---- targets ---------------------------------------------------------------------


def fastest(runs: list[dict]) -> dict | None:
    """The fastest converged run; the fastest run if none converged."""
    runs = [r for r in runs if r.get("total_seconds")]
    conv = [r for r in runs if r.get("converged")]
    return min(conv or runs, key=lambda r: r["total_seconds"]) if runs else None


def best_peer(results: list[dict], pid: str, prefix: str) -> dict | None:
    """The fastest converged run of a peer (all runs whose id starts with
    prefix, e.g. every hypre strength threshold); the fastest run if none
    converged."""
    return fastest([r for r in results if r["problem"] == pid and r["solver"].startswith(prefix)])


def row_targets(
    rec: dict, prob: dict, by_key: dict, tol: float, results: list[dict]
) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for one engine row; [] for peers."""
    if rec["kind"] != "engine" or "setup_seconds" not in rec:
        return []
    fam, n, cls = prob["family"], prob["n"], rec.get("class")
    it = rec.get("iterations")
    out = [(f"true relres ≤ {tol:g}", fmt_e(rec.get("true_relres")), bool(rec.get("converged")))]
    mem = rec.get("setup_peak_increase_bytes")
    if mem is not None and mem >= 0:
        ratio = mem / prob["csr_bytes"]
        out.append(("setup peak memory ≤ 3× CSR", f"{ratio:.2f}×", ratio <= 3.0))
    if fam == "poisson3d" and cls == "classical":
        out.append(("iterations ≤ 12", str(it), it is not None and 0 <= it <= 12))
        oc = rec.get("operator_complexity")
        out.append(("operator complexity ≤ 2.5", fmt_s(oc), oc is not None and oc <= 2.5))
        small = by_key.get(("poisson3d-32", rec["solver"]))
        if n == 100 and small and small.get("iterations") is not None and it is not None:
            out.append(
                (
                    "iterations(n=100) − iterations(n=32) ≤ 2",
                    f"{it} − {small['iterations']}",
                    it - small["iterations"] <= 2,
                )
            )
        if n == 100:
            out.append(("setup ≤ 0.8 s", fmt_s(rec["setup_seconds"]), rec["setup_seconds"] <= 0.8))
            out.append(("solve ≤ 0.8 s", fmt_s(rec["solve_seconds"]), rec["solve_seconds"] <= 0.8))
            for peer, limit in (("pyamg-rs", 0.5), ("hypre", 1.0)):
                p = best_peer(results, prob["pid"], peer)
                if p:
                    r = rec["total_seconds"] / p["total_seconds"]
                    name = "PyAMG RS+CG" if peer == "pyamg-rs" else "hypre+PCG"
                    out.append((f"setup+solve ≤ {limit:g}× {name}", f"{r:.2f}×", r <= limit))
    elif fam == "poisson3d" and cls == "aggregation":
        out.append(("iterations ≤ 25", str(it), it is not None and 0 <= it <= 25))
    elif fam in ("jump3d", "aniso2d") and cls == "classical":
        out.append(("iterations ≤ 20", str(it), it is not None and 0 <= it <= 20))
    elif fam == "convdiff2d" and cls == "nonsym":
        out.append(("GMRES iterations ≤ 20", str(it), it is not None and 0 <= it <= 20))
    return out


# ---- rendering ---------------------------------------------------------------------


def render(out: dict, raw_path: str | None = None) -> str:
    meta, problems, results = out["meta"], out["problems"], out["results"]
    tol = meta.get("tol", 1e-8)
    by_key = {(r["problem"], r["solver"]): r for r in results}
    m = meta["machine"]
    lines = []
    kind = "quick run" if meta.get("quick") else "run"
    lines.append(f"## {meta['date']} — {kind}")
    lines.append("")
    cores = f"{m.get('nproc')} cores"
    if m.get("nproc_available") and m.get("nproc_available") != m.get("nproc"):
        cores += f" ({m['nproc_available']} available to the run)"
    lines.append(
        f"- Machine: {m.get('cpu', '?')}, {cores}, {m.get('mem_gib', '?')} GiB, {m.get('os', '?')}"
    )
    lines.append(f"- Command: `{meta['command']}`")
    g = meta.get("git", {})
    lines.append(
        f"- Commit: `{g.get('commit') or '?'}`"
        + (" with uncommitted changes" if g.get("dirty") else "")
    )
    lines.append(
        f"- Load average (1/5/15 min) at start: {meta.get('loadavg_start')}; at end: "
        f"{meta.get('loadavg_end')}; run took {meta.get('elapsed_seconds', 0):.0f} s"
    )
    lines.append(
        f"- Tolerance: ||b − A x|| / ||b|| ≤ {tol:g} from x0 = 0; fastest of up to "
        f"{meta.get('repeat')} repetitions per solver; engine threads "
        f"{', '.join(map(str, meta.get('engine_threads', [])))}; hypre ranks {meta.get('hypre_np')}; "
        f"SciPy capped at {meta['scipy_caps'][0]} iterations or {meta['scipy_caps'][1]:g} s"
    )
    if meta.get("omp_env"):
        lines.append(
            "- OpenMP environment: " + ", ".join(f"`{k}={v}`" for k, v in meta["omp_env"].items())
        )
    versions = sorted({r["version"] for r in results if r.get("version")})
    if versions:
        lines.append(f"- Versions: {'; '.join(versions)}")
    if not meta.get("engine_available", True):
        lines.append(
            "- **The engine's Python binding was not importable: engine rows were not run.**"
        )
    if raw_path:
        lines.append(f"- Raw results: `{raw_path}`")
    if meta.get("note"):
        lines.append(f"- Note: {meta['note']}")
    lines.append("")

    ratio_heads = [f"ours / {name}" for _, name in RATIO_PEERS]
    head = (
        SOLVE_COLUMNS
        + [
            "op. cx",
            "levels",
            "setup mem MiB (×CSR)",
        ]
        + ratio_heads
        + ["target met?"]
    )
    all_targets = []
    for pid, prob in problems.items():
        rows = [r for r in results if r["problem"] == pid]
        lines.append(f"### {pid}: {prob['description']}")
        lines.append("")
        lines.append(
            f"N = {prob['rows']:,}, nnz = {prob['nnz']:,}, input CSR {prob['csr_bytes'] / 2**20:.1f} MiB"
            f"{'' if prob['symmetric'] else ', nonsymmetric'}."
        )
        lines.append("")
        lines.append("| " + " | ".join(head) + " |")
        lines.append(
            "|" + "|".join("---" if i == 0 else "--:" for i in range(len(head) - 1)) + "|---|"
        )
        for r in rows:
            label = r["label"]
            if "setup_seconds" not in r:
                cells = (
                    [label] + ["–"] * (len(head) - 2) + [r.get("status", "?").replace("|", "\\|")]
                )
                lines.append("| " + " | ".join(cells) + " |")
                continue
            status = r.get("status", "")
            conv = r.get("converged")
            relres = fmt_e(r.get("true_relres")) + ("" if conv else " ✗")
            mem = r.get("setup_peak_increase_bytes")
            memcell = (
                "–"
                if mem is None or mem < 0 or r["kind"] == "scipy"
                else (f"{fmt_mib(mem)} ({mem / prob['csr_bytes']:.2f}×)")
            )
            levels = r.get("levels") or []
            ratios = []
            for peer, _ in RATIO_PEERS:
                p = best_peer(results, pid, peer)
                if r["kind"] != "engine" or not p:
                    ratios.append("")
                else:
                    ratios.append(
                        f"{r['total_seconds'] / p['total_seconds']:.2f}"
                        + ("" if p.get("converged") else " †")
                    )
            tg = row_targets(r, prob, by_key, tol, results)
            all_targets += [(pid, label, r.get("threads"), *t) for t in tg]
            if tg:
                missed = [f"{t[0]} ({t[1]})" for t in tg if not t[2]]
                tcell = "yes" if not missed else "no: " + "; ".join(missed)
            else:
                tcell = ""
            iters = str(r.get("iterations", "–"))
            if not conv and status and status != "SUCCESS":
                iters += f" ({status.split(' ')[0].lower()})"
            cells = [
                label,
                str(r.get("threads", "")),
                fmt_s(r["setup_seconds"]),
                fmt_s(r["solve_seconds"]),
                fmt_s(r["total_seconds"]),
                iters,
                relres,
                fmt_s(r.get("operator_complexity")),
                str(len(levels)) if levels else "–",
                memcell,
                *ratios,
                tcell,
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")

    if meta.get("report_version", 1) >= 2:
        lines += per_unknown_table(problems, results)
    if all_targets:
        lines.append("### Targets (engine rows)")
        lines.append("")
        lines += targets_table(all_targets)
    return "\n".join(lines).rstrip() + "\n"


def per_unknown_table(problems: dict, results: list[dict]) -> list[str]:
    """Setup in µs and one iteration in ns, per unknown and per core (setup
    or solve seconds x thr / N), for every converged engine row and the
    fastest converged hypre run: the scale on which single-core figures of
    other codes are published."""
    rows = []
    for pid, prob in problems.items():
        n = prob["rows"]
        runs = [r for r in results if r["problem"] == pid and r["kind"] == "engine"]
        hypre = best_peer(results, pid, "hypre")
        for r in runs + ([hypre] if hypre else []):
            if not r.get("converged") or not r.get("iterations") or not r.get("threads"):
                continue
            cores = r["threads"]
            rows.append(
                [
                    pid,
                    r["label"],
                    str(cores),
                    f"{r['setup_seconds'] * cores / n * 1e6:.2f}",
                    f"{r['solve_seconds'] * cores / (n * r['iterations']) * 1e9:.0f}",
                ]
            )
    if not rows:
        return []
    head = [
        "problem",
        "solver",
        "thr",
        "setup µs / unknown / core",
        "ns / unknown / iteration / core",
    ]
    return (
        ["### Cost per unknown and core", ""]
        + ["| " + " | ".join(head) + " |", "|---|---|--:|--:|--:|"]
        + ["| " + " | ".join(r) + " |" for r in rows]
        + [""]
    )


def targets_table(all_targets: list[tuple]) -> list[str]:
    """Markdown lines of the grouped targets table: one row per (solver,
    target) with every measured value, then the count of checks met."""
    lines = ["| solver | target | met | measured (problem, threads: value) |", "|---|---|--:|---|"]
    groups: dict = {}
    for pid, label, thr, name, measured, met in all_targets:
        groups.setdefault((label, name), []).append((pid, thr, measured, met))
    for (label, name), items in groups.items():
        k = sum(1 for it in items if it[3])
        vals = "; ".join(
            f"{pid} ×{thr}: {val}" + ("" if met else " ✗") for pid, thr, val, met in items
        )
        lines.append(f"| {label} | {name} | {k} of {len(items)} | {vals} |")
    met = sum(1 for t in all_targets if t[-1])
    lines += ["", f"{met} of {len(all_targets)} target checks met.", ""]
    return lines
