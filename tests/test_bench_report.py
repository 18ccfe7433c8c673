"""BENCHMARKS.md is generated: it must equal bench/report.py's output.

The page is rebuilt from bench/results/ (raw JSON of bench/run.py and the
transcribed summaries in bench/results/latest/), so a figure edited by hand,
or a result added without `make bench-report`, fails here. The history
files cut from the former page are checked against its hash, so nothing
measured there can be lost or changed.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HISTORY = os.path.join(REPO, "bench", "results", "history")
# SHA-256 of BENCHMARKS.md at commit 1fe1bb6, the last appended-to page.
FORMER_PAGE_SHA256 = "8620fe3487291946927063ed809fdbcdfe96b3c9a8b7294c22611d070e61a370"


@pytest.fixture(scope="module")
def report():
    # bench/ is not a package: load the script by path (stdlib only, no engine).
    spec = importlib.util.spec_from_file_location(
        "bench_report", os.path.join(REPO, "bench", "report.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_files_are_up_to_date(report):
    for path, text in report.generated().items():
        with open(path, encoding="utf-8") as f:
            committed = f.read()
        rel = os.path.relpath(path, REPO)
        assert committed == text, (
            f"{rel} differs from bench/report.py's output: run `make bench-report`"
        )


def test_page_is_short(report):
    assert report.render_page().count("\n") < 250


def test_page_links_resolve(report):
    for target in re.findall(r"\]\(([^)#]+)\)", report.render_page()):
        if not target.startswith("http"):
            assert os.path.exists(os.path.join(REPO, target)), (
                f"BENCHMARKS.md links to missing {target}"
            )


def test_history_keeps_the_former_page_verbatim(report):
    names = sorted(
        n for n in os.listdir(HISTORY) if n[:2].isdigit() and int(n[:2]) <= report.FORMER_PAGE_LAST
    )
    text = b"".join(open(os.path.join(HISTORY, n), "rb").read() for n in names)
    assert hashlib.sha256(text).hexdigest() == FORMER_PAGE_SHA256


def test_run_report_renders_as_recorded(report):
    """The CPU tables come from the raw JSON through the same formatting that
    wrote the run's history report: rendering it again gives that report."""
    import json

    raw = "bench/results/20261203T082545Z.json"
    with open(os.path.join(REPO, raw)) as f:
        out = json.load(f)
    with open(os.path.join(REPO, report.history_report(raw)), encoding="utf-8") as f:
        recorded = f.read()
    assert report.render(out, raw_path=raw) + "\n" == recorded


def _table_rows(markdown: str) -> set[tuple[str, ...]]:
    """Every Markdown table row of a report as a tuple of its cells (bold
    marks dropped: the page does not carry them)."""
    return {
        tuple(c.strip().replace("**", "") for c in line.strip().strip("|").split("|"))
        for line in markdown.splitlines()
        if line.startswith("|")
    }


def test_transcribed_figures_appear_in_their_reports(report):
    """Each row, target value and note of bench/results/latest/ is found as
    written in the history report it names: nothing invented or re-rounded."""

    def flat(text: str) -> str:
        return " ".join(text.split())

    for runs in report.load_summaries().values():
        for s in runs:
            with open(os.path.join(REPO, s["source"]), encoding="utf-8") as f:
                source = f.read()
            rows = _table_rows(source)
            for row in s["rows"]:
                assert tuple(row) in rows, f"{s['file']}: row {row} not in {s['source']}"
            texts = [t[k] for t in s.get("targets", []) for k in ("target", "measured")]
            for text in texts + s.get("notes", []):
                assert flat(text) in flat(source), f"{s['file']}: {text!r} not in {s['source']}"
            for p in s.get("points", []):  # the plots' numbers, as the report prints them
                for key in ("solve_s", "solve_ms", "iterations"):
                    if key in p:
                        assert f"{p[key]:g}" in source, (
                            f"{s['file']}: {key} {p[key]} not in {s['source']}"
                        )
