"""The engine's OpenMP threads spin briefly, then sleep, on every way in:
also when a script imports the native module directly (`import
jaxamg._engine`, as bench/engine_runner.py does). Without the brief spin,
each parallel region pays a futex wake-up, and a 32^3 AMG solve took twice
as long as through `jaxamg.solve`."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = (
    "import os, {module}; "
    "print(os.environ.get('OMP_WAIT_POLICY'), os.environ.get('GOMP_SPINCOUNT'))"
)


def _settings(module: str, **env) -> list[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    clean.update(env)
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(module=module)],
        env=clean,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return out.stdout.split()


@pytest.mark.parametrize("module", ["jaxamg", "jaxamg._engine", "jaxamg._cpu"])
def test_every_entry_sets_the_wait_policy_before_the_runtime_starts(module):
    assert _settings(module) == ["passive", "10000"]


def test_the_users_own_settings_are_kept():
    assert _settings("jaxamg._engine", OMP_WAIT_POLICY="active", GOMP_SPINCOUNT="5") == [
        "active",
        "5",
    ]
