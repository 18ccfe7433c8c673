"""BENCHMARKS.md and the per-run reports, generated from bench/results/.

    python bench/report.py                  # print the page BENCHMARKS.md would get
    python bench/report.py --write          # rewrite BENCHMARKS.md (make bench-report)
    python bench/report.py RESULTS.json     # print the report of one bench/run.py run
    python bench/report.py RESULTS.json --record   # keep it in the history, then
                                                   # rewrite BENCHMARKS.md

The page is one current view, regenerated from data so that it cannot drift
(tests/test_bench_report.py compares it with this script's output):

* CPU families (poisson3d, jump3d, aniso2d, convdiff2d): per family, the
  newest raw results bench/results/<stamp>.json in which the engine and at
  least one peer ran, so that every ratio compares solvers of the same run.
  Ratio columns are (our setup + solve) / (peer setup + solve) on the same
  problem in the same run: below 1 means the engine is faster.
* Families measured by other scripts, whose runs exist only as Markdown:
  bench/results/latest/*.json, figures transcribed as printed (strings, so
  nothing is re-rounded) with the run's date, machine, command and the
  history report they come from. Per "family" the newest "date" is shown;
  a new run (e.g. a GPU run on another card) is one more JSON file.

Every past report, verbatim, is in bench/results/history/ (NN_date_..._topic.md).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

RATIO_PEERS = [
    ("pyamg-rs", "PyAMG RS"),
    ("pyamg-sa", "PyAMG SA"),
    ("hypre", "best hypre"),
    ("scipy", "SciPy"),
]

RESULTS = os.path.join(HERE, "results")
HISTORY = os.path.join(RESULTS, "history")
LATEST = os.path.join(RESULTS, "latest")
PAGE = os.path.join(REPO, "BENCHMARKS.md")
# The last history file cut from the former, appended-to BENCHMARKS.md.
FORMER_PAGE_LAST = 30
CPU_FAMILIES = ["poisson3d", "jump3d", "aniso2d", "convdiff2d"]
# Page order of the transcribed families; others follow in name order.
SUMMARY_ORDER = [
    "gpu-poisson3d-h200",
    "jax-layer",
    "batched-rhs",
    "mpi",
    "sharded",
    "fem-problems",
    "operator-materialize",
]
SUMMARY_KEYS = ["family", "title", "date", "machine", "command", "source", "columns", "rows"]
PLOTS = [
    ("docs/images/cpu_time_vs_n.png", "CPU time against unknowns, 3-D Poisson"),
    ("docs/images/iterations_vs_n.png", "iterations against unknowns, 3-D Poisson"),
    ("docs/images/gpu_solve_vs_n.png", "GPU solve time against unknowns"),
]


# ---- formatting helpers -----------------------------------------------------------


def _s(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def _e(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    return f"{v:.2e}"


def _mib(b) -> str:
    return "–" if b is None or b < 0 else f"{b / 2**20:.1f}"


def _ok(flag) -> str:
    return "yes" if flag else "**no**"


# ---- targets ---------------------------------------------------------------------


def best_peer(results: list[dict], pid: str, prefix: str) -> dict | None:
    """The fastest converged run of a peer (all runs whose id starts with
    prefix, e.g. every hypre strength threshold); the fastest run if none
    converged."""
    runs = [
        r
        for r in results
        if r["problem"] == pid and r["solver"].startswith(prefix) and r.get("total_seconds")
    ]
    if not runs:
        return None
    conv = [r for r in runs if r.get("converged")]
    return min(conv or runs, key=lambda r: r["total_seconds"])


def row_targets(
    rec: dict, prob: dict, by_key: dict, tol: float, results: list[dict]
) -> list[tuple[str, str, bool]]:
    """(target, measured, met) for one engine row; [] for peers."""
    if rec["kind"] != "engine" or "setup_seconds" not in rec:
        return []
    fam, n, cls = prob["family"], prob["n"], rec.get("class")
    it = rec.get("iterations")
    out = [(f"true relres ≤ {tol:g}", _e(rec.get("true_relres")), bool(rec.get("converged")))]
    mem = rec.get("setup_peak_increase_bytes")
    if mem is not None and mem >= 0:
        ratio = mem / prob["csr_bytes"]
        out.append(("setup peak memory ≤ 3× CSR", f"{ratio:.2f}×", ratio <= 3.0))
    if fam == "poisson3d" and cls == "classical":
        out.append(("iterations ≤ 12", str(it), it is not None and 0 <= it <= 12))
        oc = rec.get("operator_complexity")
        out.append(("operator complexity ≤ 2.5", _s(oc), oc is not None and oc <= 2.5))
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
            out.append(("setup ≤ 0.8 s", _s(rec["setup_seconds"]), rec["setup_seconds"] <= 0.8))
            out.append(("solve ≤ 0.8 s", _s(rec["solve_seconds"]), rec["solve_seconds"] <= 0.8))
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
        [
            "solver",
            "thr",
            "setup s",
            "solve s",
            "setup+solve s",
            "iters",
            "true relres",
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
            relres = _e(r.get("true_relres")) + ("" if conv else " ✗")
            mem = r.get("setup_peak_increase_bytes")
            memcell = (
                "–"
                if mem is None or mem < 0 or r["kind"] == "scipy"
                else (f"{_mib(mem)} ({mem / prob['csr_bytes']:.2f}×)")
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
                _s(r["setup_seconds"]),
                _s(r["solve_seconds"]),
                _s(r["total_seconds"]),
                iters,
                relres,
                _s(r.get("operator_complexity")),
                str(len(levels)) if levels else "–",
                memcell,
                *ratios,
                tcell,
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")

    if all_targets:
        lines.append("### Targets (engine rows)")
        lines.append("")
        lines += targets_table(all_targets)
    return "\n".join(lines).rstrip() + "\n"


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


# ---- the history: one Markdown report per run -------------------------------------


def record(section: str, out: dict) -> str:
    """Write `section` (the report of one bench/run.py run) as the next
    numbered file of bench/results/history/; returns its path."""
    numbers = [int(f.split("_")[0]) for f in os.listdir(HISTORY) if f[:2].isdigit()]
    date = out["meta"]["date"]  # "YYYY-MM-DD HH:MM UTC"
    name = f"{max(numbers, default=0) + 1:02d}_{date[:10]}_{date[11:13]}{date[14:16]}_run.md"
    path = os.path.join(HISTORY, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(section)
    return path


def history_report(raw_rel: str) -> str | None:
    """The history file that reports the raw results `raw_rel`, if any."""
    for name in sorted(os.listdir(HISTORY)):
        with open(os.path.join(HISTORY, name), encoding="utf-8") as f:
            if f"Raw results: `{raw_rel}`" in f.read():
                return f"bench/results/history/{name}"
    return None


# ---- the page: CPU families from the raw results ---------------------------------


def results_files() -> list[str]:
    """Raw results of full runs, newest first (the names are UTC stamps)."""
    names = [f for f in os.listdir(RESULTS) if f.endswith(".json")]
    return [os.path.join(RESULTS, f) for f in sorted(names, reverse=True)]


def latest_run(family: str) -> tuple[str, dict] | None:
    """The newest results file in which the engine and a peer both ran on a
    problem of `family`: ratios need the peer of the same run."""
    for path in results_files():
        with open(path) as f:
            out = json.load(f)
        if out["meta"].get("quick"):
            continue
        pids = {pid for pid, p in out["problems"].items() if p["family"] == family}
        kinds = {r["kind"] for r in out["results"] if r["problem"] in pids and "setup_seconds" in r}
        if "engine" in kinds and len(kinds) > 1:
            return path, out
    return None


def _short(rec: dict) -> str:
    """A row label short enough for a table; the full labels are listed."""
    if rec["kind"] == "engine":
        return f"jaxamg `{rec['settings'].removesuffix('.json')}`"
    label = rec["label"]
    if rec["solver"].startswith("hypre-t") and ")" in label:  # keep θ and the Krylov method
        return f"{label.split(' (')[0]} θ {rec['solver'][len('hypre-t') :]}{label[label.index(')', label.index(' (')) + 1 :]}"
    return label.split(" (")[0]


def run_lines(path: str, out: dict) -> list[str]:
    """Where a CPU family's figures come from: date, machine, command."""
    meta, m = out["meta"], out["meta"]["machine"]
    rel = os.path.relpath(path, REPO)
    report = history_report(rel)
    commit = meta.get("git", {}).get("commit") or "?"
    return [
        f"- Run: {meta['date']}, {m.get('cpu', '?')}, {m.get('nproc')} cores, "
        f"{m.get('mem_gib', '?')} GiB, {m.get('os', '?')}; load average "
        f"{meta.get('loadavg_start')} at start, {meta.get('loadavg_end')} at end; commit `{commit}`"
        + (" with uncommitted changes" if meta.get("git", {}).get("dirty") else ""),
        f"- Command: `{meta['command']}`",
        f"- Raw results: [`{rel}`]({rel})"
        + (f"; full report: [`{report}`]({report})" if report else ""),
    ]


def cpu_family(family: str, out: dict) -> tuple[list[str], list[tuple], dict]:
    """The table of one CPU family (every problem of it in that run, every
    solver measured), its target checks, and the full label of each short one."""
    problems, results = out["problems"], out["results"]
    tol = out["meta"].get("tol", 1e-8)
    by_key = {(r["problem"], r["solver"]): r for r in results}
    pids = [pid for pid, p in problems.items() if p["family"] == family]
    peers = [
        (peer, name)
        for peer, name in RATIO_PEERS
        if any(best_peer(results, pid, peer) for pid in pids)
    ]
    head = [
        "problem",
        "N",
        "solver",
        "thr",
        "setup s",
        "solve s",
        "setup+solve s",
        "iters",
        "true relres",
    ] + [f"ours / {name}" for _, name in peers]
    lines = [
        "| " + " | ".join(head) + " |",
        "|" + "|".join("---" if i in (0, 2) else "--:" for i in range(len(head))) + "|",
    ]
    targets, labels = [], {}
    for pid in pids:
        prob = problems[pid]
        for r in (r for r in results if r["problem"] == pid):
            labels[_short(r)] = r["label"]
            if "setup_seconds" not in r:
                lines.append(
                    f"| {pid} | {prob['rows']:,} | {_short(r)} | "
                    + " | ".join(["–"] * (len(head) - 3))
                    + " |"
                )
                continue
            ratios = []
            for peer, _ in peers:
                p = best_peer(results, pid, peer)
                ratios.append(
                    ""
                    if r["kind"] != "engine" or not p
                    else f"{r['total_seconds'] / p['total_seconds']:.2f}"
                    + ("" if p.get("converged") else " †")
                )
            relres = _e(r.get("true_relres")) + ("" if r.get("converged") else " ✗")
            cells = [
                pid,
                f"{prob['rows']:,}",
                _short(r),
                str(r.get("threads", "")),
                _s(r["setup_seconds"]),
                _s(r["solve_seconds"]),
                _s(r["total_seconds"]),
                str(r.get("iterations", "–")),
                relres,
                *ratios,
            ]
            lines.append("| " + " | ".join(cells) + " |")
            targets += [
                (pid, r["label"], r.get("threads"), *t)
                for t in row_targets(r, prob, by_key, tol, results)
            ]
    return lines, targets, labels


def cpu_section() -> list[str]:
    lines = [
        "## CPU: the engine against PyAMG and hypre",
        "",
        "Setup and solve in seconds (fastest repetition, each solver in its own process); "
        "true relres = ||b − A x|| / ||b|| computed with SciPy; ours / peer = engine "
        "setup+solve over the peer's on the same problem in the same run (< 1: the engine is "
        "faster; † a peer that missed the tolerance); thr = threads. "
        "[bench/README.md](bench/README.md) says how each is measured.",
        "",
    ]
    runs: dict[str, list[str]] = {}
    for fam in CPU_FAMILIES:
        found = latest_run(fam)
        if found:
            runs.setdefault(found[0], []).append(fam)
    for path, fams in runs.items():
        with open(path) as f:
            out = json.load(f)
        lines += run_lines(path, out) + [""]
        all_targets, labels = [], {}
        for fam in fams:
            table, targets, fam_labels = cpu_family(fam, out)
            all_targets += targets
            labels.update(fam_labels)
            desc = next(p["description"] for p in out["problems"].values() if p["family"] == fam)
            lines += [f"### {fam}: {desc.split(', n = ')[0]}", ""] + table + [""]
        lines += [
            "Solvers: " + "; ".join(f"{k} = {v}" for k, v in labels.items() if k != v) + ".",
            "",
        ]
        if all_targets:
            lines += [f"### Targets of the run of {out['meta']['date']} (engine rows)", ""]
            lines += targets_table(all_targets)
    return lines


# ---- the page: transcribed families --------------------------------------------


def load_summaries() -> dict[str, list[dict]]:
    """bench/results/latest/*.json by family, newest date first."""
    fams: dict[str, list[dict]] = {}
    for name in sorted(os.listdir(LATEST)):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(LATEST, name), encoding="utf-8") as f:
            s = json.load(f)
        missing = [k for k in SUMMARY_KEYS if k not in s]
        if missing or any(len(r) != len(s["columns"]) for r in s["rows"]):
            raise ValueError(
                f"bench/results/latest/{name}: missing {missing} or a row "
                "whose length differs from the columns'"
            )
        s["file"] = f"bench/results/latest/{name}"
        fams.setdefault(s["family"], []).append(s)
    for runs in fams.values():
        runs.sort(key=lambda s: s["date"], reverse=True)
    order = {f: i for i, f in enumerate(SUMMARY_ORDER)}
    return dict(sorted(fams.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))


def _met(flag) -> str:
    return {True: "met", False: "**not met**", None: "not measured"}[flag]


def summary_section(runs: list[dict]) -> list[str]:
    s = runs[0]
    lines = [
        f"## {s['title']}",
        "",
        f"- Run: {s['date']}, {s['machine']}"
        + (
            f"; device: {s['device']}"
            if s.get("device") and s["device"] not in s["machine"]
            else ""
        ),
        f"- Command: {s['command']}",
        f"- Transcribed in [`{s['file']}`]({s['file']}) from the report "
        f"[`{s['source']}`]({s['source']})",
    ]
    if s.get("method"):
        lines.append(f"- What: {s['method']}")
    lines += [
        "",
        "| " + " | ".join(s["columns"]) + " |",
        "|" + "|".join("---" if i == 0 else "--:" for i in range(len(s["columns"]))) + "|",
    ]
    lines += ["| " + " | ".join(row) + " |" for row in s["rows"]]
    lines.append("")
    if s.get("targets"):
        lines += [
            f"- Target {t['target']}: {_met(t['met'])} ({t['measured']})" for t in s["targets"]
        ]
        lines.append("")
    for note in s.get("notes", []):
        lines += [note, ""]
    if len(runs) > 1:
        lines += [
            "Earlier runs of this family: "
            + "; ".join(f"[{r['date']}]({r['file']})" for r in runs[1:])
            + ".",
            "",
        ]
    return lines


# ---- the page ------------------------------------------------------------------


def render_page() -> str:
    lines = [
        "# Benchmarks",
        "",
        "<!-- Generated by bench/report.py (make bench-report) from bench/results/; "
        "edit those, not this page. -->",
        "",
        "The current figures of jaxamg and of each peer measured in the same run, per "
        "problem family, with the targets met or not. Each section names its run (date, "
        "machine, command); compare timings only within a section. Every earlier run, "
        "verbatim, is in [bench/results/history/](bench/results/history/README.md), with "
        "the raw JSON of `bench/run.py` in [bench/results/](bench/results/).",
        "",
        "Plots (`bench/plots.py`, from the same data): "
        + " · ".join(f"[{title}]({path})" for path, title in PLOTS)
        + ".",
        "",
        f"![{PLOTS[0][1]}]({PLOTS[0][0]})",
        "",
    ]
    lines += cpu_section()
    for runs in load_summaries().values():
        lines += summary_section(runs)
    lines += [
        "## Not on this page",
        "",
        "Measurements without a current family here (GPU kernel timings, setup phases, "
        "512³ on the H200, call times, the H100's value_and_grad of a nonsymmetric system, "
        "the CPU solve's traffic model, distributed "
        "smoothers' iteration counts, the GPU's Krylov methods on the one engine and FGMRES "
        "on the GPU against the tree before, the multicolour smoothers and IDR on the GPU "
        "against the host engine, H100, 2026-12-06, classical AMG on elasticity, elasticity "
        "against PyAMG SA from 8³ to 32³, elasticity against hypre's systems AMG, small "
        "singular solves on 1 and 2 threads, IDR on the vmap lanes) are in the reports of "
        "[bench/results/history/](bench/results/history/README.md).",
        "",
    ]
    return "\n".join(lines).rstrip() + "\n"


def render_history_index() -> str:
    """bench/results/history/README.md: one line per report, by number."""
    lines = [
        "# Benchmark history",
        "",
        "<!-- Generated by bench/report.py (make bench-report). -->",
        "",
        "One Markdown report per run or measurement session, oldest first; the "
        "current figures are in [BENCHMARKS.md](../../../BENCHMARKS.md). "
        f"Files 00–{FORMER_PAGE_LAST:02d} are the former BENCHMARKS.md (up to commit "
        "`1fe1bb6`) cut at its `## ` headings, verbatim: concatenated in order they give "
        "it back byte for byte (tests/test_bench_report.py checks its SHA-256). "
        "Newer reports of `bench/run.py` are added by `bench/report.py --record`. "
        "How to read a run report's columns: "
        "[00_how_to_read.md](00_how_to_read.md).",
        "",
    ]
    for name in sorted(os.listdir(HISTORY)):
        if not name[:2].isdigit() or name.startswith("00_"):
            continue
        with open(os.path.join(HISTORY, name), encoding="utf-8") as f:
            heading = f.readline().removeprefix("## ").strip()
        lines.append(f"- [{name[:2]}: {heading}]({name})")
    return "\n".join(lines) + "\n"


def generated() -> dict[str, str]:
    """Every generated file (path: text), as --write writes them."""
    return {PAGE: render_page(), os.path.join(HISTORY, "README.md"): render_history_index()}


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("results", nargs="?", help="JSON written by bench/run.py (else: the page)")
    ap.add_argument(
        "--record",
        action="store_true",
        help="keep the run's report in bench/results/history/ and rewrite BENCHMARKS.md",
    )
    ap.add_argument("--write", action="store_true", help="rewrite BENCHMARKS.md")
    a = ap.parse_args()
    if a.results:
        with open(a.results) as f:
            out = json.load(f)
        raw = os.path.relpath(os.path.abspath(a.results), REPO)
        md = render(out, raw_path=raw if not raw.startswith("..") else os.path.abspath(a.results))
        sys.stdout.write(md)
        if a.record:
            print(f"report: {os.path.relpath(record(md, out), REPO)}", file=sys.stderr)
            a.write = True
        if not a.write:
            return 0
    if not a.write:
        sys.stdout.write(render_page())
        return 0
    for path, text in generated().items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        print(
            f"report: {os.path.relpath(path, REPO)}, {text.count(chr(10))} lines", file=sys.stderr
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
