"""BENCHMARKS.md and the per-run reports, generated from bench/results/.

    python bench/report.py                  # print the page BENCHMARKS.md would get
    python bench/report.py --write          # rewrite BENCHMARKS.md (make bench-report)
    python bench/report.py RESULTS.json     # print the report of one bench/run.py run
                                            # (bench/run_report.py renders it)
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
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)

# bench/ is a folder of scripts, not a package: run_report sits beside this
# one, also when this file is loaded by path (tests/test_bench_report.py).
sys.path.insert(0, HERE)
from run_report import (  # noqa: E402
    RATIO_PEERS,
    SOLVE_COLUMNS,
    best_peer,
    fmt_e,
    fmt_s,
    render,
    row_targets,
    targets_table,
)

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
    head = ["problem", "N"] + SOLVE_COLUMNS + [f"ours / {name}" for _, name in peers]
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
            relres = fmt_e(r.get("true_relres")) + ("" if r.get("converged") else " ✗")
            cells = [
                pid,
                f"{prob['rows']:,}",
                _short(r),
                str(r.get("threads", "")),
                fmt_s(r["setup_seconds"]),
                fmt_s(r["solve_seconds"]),
                fmt_s(r["total_seconds"]),
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
        "singular solves on 1 and 2 threads, IDR on the vmap lanes, the one engine's device "
        "solve against the tree before it on one H100 after the one-pass sweeps (equal "
        "times), the one-kernel CG's block count) are in the reports of "
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
