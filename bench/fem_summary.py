"""The finite-element problem set's summary from one `bench/run.py --fem` run:
one row per problem (config="auto", the fastest shipped config, the default
config, PyAMG and the best hypre, with auto's ratios to the peers) and the
performance issue's targets, measured on those rows.

    python bench/fem_summary.py bench/results/STAMP.json            # Markdown
    python bench/fem_summary.py bench/results/STAMP.json --json     # rows and
        targets of the larger size of each family, for bench/results/latest/

The Markdown goes into the run's history report (its Summary and Targets
sections); the JSON, with the report's title, date and command added, is
the family's file in bench/results/latest/.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from run_report import best_peer, fastest  # noqa: E402

AUTO_WITHIN = 1.3  # auto's time over the best shipped config's
PEER_RATIO = 0.7  # the best shipped config's time over hypre's
COLUMNS = [
    "problem",
    "N",
    "auto",
    "best shipped",
    "default",
    "PyAMG RS",
    "PyAMG SA",
    "best hypre",
    "auto / hypre",
    "auto / PyAMG RS",
    "auto / PyAMG SA",
]


def cell(r: dict | None) -> str:
    """setup + solve seconds (iterations), ✗ and the true relres if missed."""
    if not r or not r.get("total_seconds"):
        return "–"
    text = f"{r['total_seconds']:.3f} ({r.get('iterations', '?')})"
    if not r.get("converged"):
        text += f" ✗ {r.get('true_relres', float('nan')):.1e}"
    return text


def shipped_name(r: dict) -> str:
    return r["settings"].removesuffix(".json").upper()


def problem_rows(out: dict) -> list[dict]:
    """Per problem: the runs the summary compares."""
    rows = []
    for pid, prob in out["problems"].items():
        runs = [r for r in out["results"] if r["problem"] == pid]
        engine = [r for r in runs if r["kind"] == "engine"]
        shipped = [r for r in engine if r.get("class") not in ("auto", "default")]
        hypre_prefix = "hypre-sys" if prob.get("block_dim", 1) > 1 else "hypre-t"
        rows.append(
            {
                "pid": pid,
                "prob": prob,
                "auto": fastest([r for r in engine if r.get("class") == "auto"]),
                "shipped": fastest(shipped),
                "default": fastest([r for r in engine if r.get("class") == "default"]),
                "pyamg-rs": fastest([r for r in runs if r["solver"] == "pyamg-rs"]),
                "pyamg-sa": fastest([r for r in runs if r["solver"] == "pyamg-sa"]),
                "hypre": best_peer(out["results"], pid, hypre_prefix),
            }
        )
    return rows


def ratio(a: dict | None, b: dict | None) -> float | None:
    if not a or not b or not a.get("total_seconds") or not b.get("total_seconds"):
        return None
    return a["total_seconds"] / b["total_seconds"]


def table_row(row: dict) -> list[str]:
    shipped, hypre = row["shipped"], row["hypre"]
    theta = hypre["solver"].rsplit("-t", 1)[-1] if hypre else ""
    fmt = lambda v: "–" if v is None else f"{v:.2f}"  # noqa: E731
    return [
        row["pid"],
        f"{row['prob']['rows']:,}",
        cell(row["auto"]),
        cell(shipped) + (f" {shipped_name(shipped)}" if shipped else ""),
        cell(row["default"]),
        cell(row["pyamg-rs"]),
        cell(row["pyamg-sa"]),
        cell(hypre) + (f" θ {theta}" if hypre else ""),
        fmt(ratio(row["auto"], hypre)),
        fmt(ratio(row["auto"], row["pyamg-rs"])),
        fmt(ratio(row["auto"], row["pyamg-sa"])),
    ]


def peer_target(rows: list[dict], blocked: bool) -> tuple[bool, str]:
    """The best shipped config ≤ PEER_RATIO × the best hypre, per problem."""
    parts, met = [], 0
    for row in (r for r in rows if (r["prob"].get("block_dim", 1) > 1) == blocked):
        shipped = ratio(row["shipped"], row["hypre"])
        auto = ratio(row["auto"], row["hypre"])
        if shipped is None:
            parts.append(f"{row['pid']} not measured")
            continue
        met += shipped <= PEER_RATIO
        text = f"{row['pid']} {shipped:.2f}"
        if auto is not None and f"{auto:.2f}" != f"{shipped:.2f}":
            text += f" (auto {auto:.2f})"
        parts.append(text)
    return met == len(parts), f"{met} of {len(parts)} ({', '.join(parts)})"


def targets(rows: list[dict]) -> list[dict]:
    autos = [r for r in rows if r["auto"]]
    converged = sum(bool(r["auto"].get("converged")) for r in autos)
    within = sum(
        (ratio(r["auto"], r["shipped"]) or float("inf")) <= AUTO_WITHIN
        for r in autos
        if r["auto"].get("converged")
    )
    scalar_met, scalar = peer_target(rows, blocked=False)
    blocked_met, blocked = peer_target(rows, blocked=True)
    missed = [r["default"] for r in rows if r["default"] and not r["default"].get("converged")]
    silent = [
        d
        for d in missed
        if d.get("true_relres", 0) > 1 and not str(d.get("status", "")).startswith("DIVERGED")
    ]
    default_text = f"{len(missed)} default-config solves missed the tolerance"
    if missed:
        default_text += "; " + ", ".join(
            f"{d['problem']} {str(d.get('status', '?')).split(' ')[0]} after "
            f"{d.get('iterations', '?')} iterations at true relres {d.get('true_relres', 0):.2g}"
            for d in missed
        )
    return [
        {
            "target": f'config="auto" converges on every problem, each within {AUTO_WITHIN}× '
            "of the best shipped config's time",
            "measured": f"converged on {converged} of {len(autos)}; within {AUTO_WITHIN}× on "
            f"{within} of {len(autos)}",
            "met": converged == len(autos) and within == len(autos),
        },
        {
            "target": f"the best shipped config ≤ {PEER_RATIO}× hypre's best time at equal "
            "cores on every scalar problem",
            "measured": scalar,
            "met": scalar_met,
        },
        {
            "target": f"on elasticity, the best shipped config ≤ {PEER_RATIO}× hypre's systems "
            "AMG at equal cores",
            "measured": blocked,
            "met": blocked_met,
        },
        {
            "target": "the default config never ends with a residual above the initial one "
            "without saying DIVERGED",
            "measured": default_text,
            "met": not silent,
        },
    ]


def markdown(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|---|" + "--:|" * (len(COLUMNS) - 1)]
    lines += ["| " + " | ".join(table_row(r)) + " |" for r in rows]
    lines += ["", "### Targets (from the summary table above)", ""]
    for t in targets(rows):
        lines += [f"- Target: {t['target']}.", f"  Measured: {t['measured']}."]
    return "\n".join(lines)


def larger_sizes(rows: list[dict]) -> list[dict]:
    """The larger size of each family (the page shows one row per family)."""
    best: dict[str, dict] = {}
    for r in rows:
        fam = r["prob"]["family"]
        if fam not in best or r["prob"]["rows"] > best[fam]["prob"]["rows"]:
            best[fam] = r
    return list(best.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", help="raw results of bench/run.py --fem")
    ap.add_argument("--json", action="store_true", help="the latest/ family's rows and targets")
    args = ap.parse_args()
    with open(args.results, encoding="utf-8") as f:
        rows = problem_rows(json.load(f))
    if args.json:
        family = {"rows": [table_row(r) for r in larger_sizes(rows)], "targets": targets(rows)}
        print(json.dumps(family, ensure_ascii=False, indent=1))
    else:
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
