"""Importing jaxamg turns XLA's cross-process GPU autotuning off (for the
sharded interface) without touching a user's own setting, in a fresh
process, before JAX starts a backend."""

import os
import subprocess
import sys

import pytest

SCRIPT = (
    "import os, sys, jaxamg; from jaxamg._core import xla_setup as _xla_setup; "
    "print(repr(os.environ.get('XLA_FLAGS'))); print(_xla_setup.autotuning_state()); "
    "print('jax' in sys.modules)"
)


def _run(xla_flags, script=SCRIPT):
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    if xla_flags is not None:
        env["XLA_FLAGS"] = xla_flags
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    return out.stdout.split("\n")


@pytest.mark.parametrize(
    "given, expected, state",
    [
        (None, "--xla_gpu_shard_autotuning=false", "applied"),
        (
            "--xla_cpu_use_thunk_runtime=true",
            "--xla_cpu_use_thunk_runtime=true --xla_gpu_shard_autotuning=false",
            "applied",
        ),
        ("--xla_gpu_shard_autotuning=false", "--xla_gpu_shard_autotuning=false", "user-disabled"),
        ("--xla_gpu_shard_autotuning=true", "--xla_gpu_shard_autotuning=true", "user-enabled"),
    ],
)
def test_import_sets_flag_unless_user_did(given, expected, state):
    flags, got_state, jax_imported = _run(given)[:3]
    assert flags == repr(expected)
    assert got_state == state
    assert jax_imported == "False"  # importing jaxamg stays cheap


def test_too_late_after_backend_start():
    script = "import jax; jax.numpy.zeros(1); " + SCRIPT
    flags, state = _run(None, script)[:2]
    assert flags == "None" and state == "too-late"


def test_flag_is_accepted_by_this_jaxlib():
    # An unknown XLA flag aborts the process at backend start.
    script = "import jaxamg, jax; print(float(jax.numpy.ones(2).sum()))"
    assert _run(None, script)[0] == "2.0"
