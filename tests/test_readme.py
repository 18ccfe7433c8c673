"""Every Python code block of README.md runs."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_python_blocks():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_block_runs(index):
    namespace: dict = {}
    for block in BLOCKS[: index + 1]:  # later blocks use names from earlier ones
        exec(compile(block, f"README.md block {index}", "exec"), namespace)
