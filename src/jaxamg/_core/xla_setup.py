"""Process-wide JAX/XLA settings that the sharded interface depends on,
applied when ``jaxamg`` is imported (before the user's first device call).

1. ``--xla_gpu_shard_autotuning=false`` in ``XLA_FLAGS``. XLA's cross-process
   sharded autotuning assumes every process compiles the identical program;
   a sharded solve compiles each rank's local CSR structure into that
   process's program, so a multi-process GPU compile would deadlock under it.
   XLA reads ``XLA_FLAGS`` once, when its backend initialises, so the flag is
   only added while no backend exists yet, and never when the user already
   mentions the flag. The flag is known to the CPU-only jaxlib as well, so
   adding it is harmless there.
2. JAX's CPU cross-process collectives. Multi-process JAX on CPU devices
   needs ``jax_cpu_collectives_implementation`` (``"gloo"`` is JAX's default
   since 0.5.1, so the seed's code runs as it stands); if JAX is already
   imported with the setting cleared and no backend exists yet, ``"gloo"`` is
   selected here. :func:`cpu_collectives_problem` reports a job that runs
   without them anyway.

Nothing here imports JAX: ``import jaxamg`` stays cheap.
"""

from __future__ import annotations

import os
import sys

FLAG = "xla_gpu_shard_autotuning"

# How the shard-autotuning flag was handled at import time:
#   "applied"       jaxamg added --xla_gpu_shard_autotuning=false
#   "user-disabled" XLA_FLAGS already set it to false
#   "user-enabled"  XLA_FLAGS already set it to something else (left alone)
#   "too-late"      an XLA backend was already initialised; nothing changed
_autotuning_state = "unset"


def _backends_initialized() -> bool:
    """True when JAX has already created an XLA backend (XLA_FLAGS are then
    read and settings that need a fresh backend can no longer change)."""
    bridge = sys.modules.get("jax._src.xla_bridge")
    if bridge is None:  # JAX not imported yet, so certainly no backend
        return False
    check = getattr(bridge, "backends_are_initialized", None)
    if check is not None:
        return bool(check())
    return bool(getattr(bridge, "_backends", {}))


def _flag_value(flags: str) -> str | None:
    """The value the last ``--xla_gpu_shard_autotuning[=v]`` in `flags` sets."""
    value = None
    for token in flags.split():
        name, _, given = token.lstrip("-").partition("=")
        if name == FLAG:
            value = given or "true"
        elif name == "no" + FLAG:
            value = "false"
    return value


def disable_shard_autotuning(environ=os.environ) -> str:
    """Adds ``--xla_gpu_shard_autotuning=false`` to ``XLA_FLAGS`` when the
    user has not set it and no backend is initialised; returns the state."""
    global _autotuning_state
    flags = environ.get("XLA_FLAGS", "")
    if FLAG in flags:
        value = _flag_value(flags)
        disabled = value is not None and value.lower() in ("false", "0")
        _autotuning_state = "user-disabled" if disabled else "user-enabled"
    elif _backends_initialized():
        _autotuning_state = "too-late"
    else:
        environ["XLA_FLAGS"] = f"{flags} --{FLAG}=false" if flags.strip() else f"--{FLAG}=false"
        _autotuning_state = "applied"
    return _autotuning_state


def shard_autotuning_disabled() -> bool:
    """Whether the running backend has shard autotuning off (as far as the
    flag handling at import time can tell)."""
    return _autotuning_state in ("applied", "user-disabled")


def autotuning_state() -> str:
    return _autotuning_state


def arrange_cpu_collectives() -> None:
    """Selects JAX's gloo CPU collectives when JAX is imported with them
    cleared and no backend exists yet (JAX's default already is gloo)."""
    if "JAX_CPU_COLLECTIVES_IMPLEMENTATION" in os.environ:
        return  # the user's explicit choice
    jax = sys.modules.get("jax")
    if jax is None or _backends_initialized():
        return
    try:
        if jax.config.jax_cpu_collectives_implementation is None:
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except AttributeError:  # a JAX without the option (or a partial import)
        return


def cpu_collectives_problem(jax, where: str) -> str | None:
    """A message when this multi-process job runs on CPU devices without
    cross-process CPU collectives, else None."""
    if jax.process_count() <= 1 or jax.local_devices()[0].platform != "cpu":
        return None
    impl = getattr(jax.config, "jax_cpu_collectives_implementation", "gloo")
    if impl in ("gloo", "mpi", "megascale"):
        return None
    return (
        f"`{where}`: this job runs {jax.process_count()} JAX processes on CPU devices, but JAX's "
        f"cross-process CPU collectives are off (jax_cpu_collectives_implementation={impl!r}). "
        "Set JAX_CPU_COLLECTIVES_IMPLEMENTATION=gloo in the environment, or call "
        "jax.config.update('jax_cpu_collectives_implementation', 'gloo') before "
        "jax.distributed.initialize()."
    )
