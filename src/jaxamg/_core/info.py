"""`info`, the second result of a solve: from the statistics vector of the
native call to Python scalars (direct calls) or arrays (under a transformation).

``residual_history`` is a ``jax.Array`` in every case, as JAX-AMG returns it
(trimmed to ``iterations + 1`` entries in a direct call, NaN-padded to
``max_iters + 1`` under a transformation), so code that slices it or calls
``jnp`` on it works the same eagerly and under ``jax.jit``.

``setup_on_device`` and ``solve_on_device`` say where the hierarchy was built
and where the solve ran: True only on a GPU where the device path covers the
configuration (a CPU, MPI or sharded solve runs the host engine)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .ffi import PLACE_SETUP_ON_DEVICE, PLACE_SOLVE_ON_DEVICE, STATS_HEAD
from .matrix import is_concrete
from .status import AMGXStatus


def place_flags(place) -> dict:
    """``setup_on_device`` and ``solve_on_device`` from the stats row's place
    entry (an int gives bools, an integer array bool arrays)."""
    return {
        "setup_on_device": (place & PLACE_SETUP_ON_DEVICE) != 0,
        "solve_on_device": (place & PLACE_SOLVE_ON_DEVICE) != 0,
    }


def make_info(stats, history_len: int) -> dict:
    """`info` from the stats vector: Python scalars when concrete, arrays when
    traced; the history a JAX array either way."""
    import jax.numpy as jnp

    if not is_concrete(stats):
        return {
            "iterations": stats[..., 0],
            "residual": stats[..., 1],
            "status": stats[..., 2],
            "residual_history": stats[..., STATS_HEAD:],
            **place_flags(stats[..., 3].astype(jnp.int32)),
        }
    s = np.asarray(stats)
    if s.ndim > 1:  # a batch computed eagerly: keep arrays
        return {
            "iterations": s[..., 0].astype(int),
            "residual": s[..., 1],
            "status": s[..., 2].astype(int),
            "residual_history": jnp.asarray(s[..., STATS_HEAD:]),
            **place_flags(s[..., 3].astype(int)),
        }
    iterations = int(s[0])
    history = s[STATS_HEAD : STATS_HEAD + iterations + 1]
    history = history[~np.isnan(history)]
    return {
        "iterations": iterations,
        "residual": float(s[1]),
        "status": AMGXStatus(int(s[2])),
        "residual_history": jnp.asarray(history),
        **place_flags(int(s[3])),
    }


def add_inconsistency(info: dict, inconsistency: Any) -> None:
    """``info["rhs_inconsistency"]``: a float (or array) when concrete, the
    traced value under a transformation."""
    if is_concrete(inconsistency):
        value = np.asarray(inconsistency)
        info["rhs_inconsistency"] = float(value) if value.ndim == 0 else value
    else:
        info["rhs_inconsistency"] = inconsistency


# Where a distributed solve of GPU arrays runs (cpp/ffi/mpi_cuda/): said in
# info as a single-process solve on a GPU says it, never a silent host solve.
DISTRIBUTED_SETUP_REASON = (
    "a distributed hierarchy is set up by the host engine: the matrix is copied to host "
    "memory for its setup and the cache's value check"
)
DISTRIBUTED_HOST_REASON = "the distributed solve runs on the host engine with copies of b and x: "


def add_distributed_host_reason(info: dict, x, device_reason: str | None) -> None:
    """``setup_reason``, and ``host_reason`` when the solve ran on the host,
    of a direct ``jaxamg.solve(..., comm=)`` whose arrays are on a GPU
    (`device_reason`: why not on the device, from the handler); nothing on a
    CPU, where the host is the place asked for. (A sharded solve's info holds
    global arrays only: its ``setup_on_device``/``solve_on_device`` say it.)"""
    devices = getattr(x, "devices", None)
    if devices is None or next(iter(devices())).platform != "gpu":
        return
    info["setup_reason"] = DISTRIBUTED_SETUP_REASON
    if not info["solve_on_device"]:
        info["host_reason"] = DISTRIBUTED_HOST_REASON + (device_reason or "unknown")
