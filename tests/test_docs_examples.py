"""Every ```python block of README.md and docs/*.md runs.

Conventions for writing examples:

* The blocks of one page run in order in one namespace (later blocks use
  names from earlier ones), with the repository root as the working
  directory; each page starts from a fresh namespace.
* A block that needs something a single CPU process does not have carries a
  marker comment on a line of its own and is only compiled:
  ``# docs: skip-mpi`` (runs under mpirun), ``# docs: skip-gpu`` (needs a GPU).
  Its names are not available to later blocks.
* ``jax_enable_x64`` is restored after each page, so a page may turn it on.
* A gradient whose adjoint solve did not converge fails the example
  (AdjointConvergenceWarning is an error here): examples must be accurate.
* Sizes stay small: the whole file runs in well under a minute.
"""

from __future__ import annotations

import pathlib
import re
import warnings

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", flags=re.S | re.M)
SKIP_MARKERS = ("# docs: skip-mpi", "# docs: skip-gpu")


def blocks(page: pathlib.Path) -> list[str]:
    return BLOCK.findall(page.read_text())


def is_compile_only(block: str) -> bool:
    return any(line.strip().startswith(SKIP_MARKERS) for line in block.splitlines())


def test_pages_have_examples():
    with_examples = [p.name for p in PAGES if blocks(p)]
    for name in ("README.md", "quickstart.md", "configuration.md", "gradients.md"):
        assert name in with_examples, f"{name} lost its python examples"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(REPO)) for p in PAGES])
def test_page_examples_run(page, monkeypatch):
    page_blocks = blocks(page)
    if not page_blocks:
        pytest.skip(f"{page.name} has no python blocks")
    import jax

    import jaxamg

    monkeypatch.chdir(REPO)
    x64 = jax.config.jax_enable_x64
    namespace: dict = {"__name__": "__docs_example__"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", jaxamg.AdjointConvergenceWarning)
            for index, block in enumerate(page_blocks):
                code = compile(block, f"{page.relative_to(REPO)} python block {index}", "exec")
                if not is_compile_only(block):
                    exec(code, namespace)
    finally:
        jax.config.update("jax_enable_x64", x64)


def test_compile_only_blocks_are_marked_for_a_reason():
    # Every marked block names the launcher it needs; a marker is not a way to
    # hide a broken example that could run here.
    for page in PAGES:
        for block in blocks(page):
            if is_compile_only(block):
                assert (
                    "mpi" in block.lower() or "gpu" in block.lower() or "cuda" in block.lower()
                ), f"{page.name}: a block marked compile-only does not use MPI or a GPU"
