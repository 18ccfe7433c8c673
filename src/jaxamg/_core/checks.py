"""Checks of a solve's input shared by the single-process, MPI and sharded
paths: dtypes, vector shapes, the dtype rule, the config parsed by the engine."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .errors import ConfigError
from .native import engine


def preferred_dtype(data: Any, b: Any):
    """float64 if A or b is float64 (and x64 is on), else float32."""
    import jax.numpy as jnp

    def is64(x):
        return np.dtype(getattr(x, "dtype", np.float32)) == np.float64

    if (is64(data) or is64(b)) and jnp.zeros((), jnp.float64).dtype == np.float64:
        return jnp.float64
    return jnp.float32


def check_vector(name: str, v: Any, n: int) -> None:
    shape = tuple(getattr(v, "shape", ()))
    if len(shape) != 1:
        raise ValueError(
            f"`jaxamg.solve`: `{name}` must be a 1-D vector of length {n}, got shape {shape}; "
            "use jax.vmap for several right-hand sides."
        )
    if shape[0] != n:
        raise ValueError(
            f"`jaxamg.solve`: `{name}` has {shape[0]} entries but `A` has {n} rows; "
            "pass one entry per row."
        )


def check_dtype(name: str, dtype: Any) -> None:
    kind = np.dtype(dtype).kind
    if kind == "c":
        raise TypeError(
            f"`jaxamg.solve`: `{name}` is complex ({np.dtype(dtype)}); complex systems are not "
            "supported. Solve the real 2x2 block form instead."
        )
    if kind not in "fiub":
        raise TypeError(
            f"`jaxamg.solve`: `{name}` has unsupported dtype {np.dtype(dtype)}; pass a "
            "numeric (float, int or bool) array."
        )


@functools.lru_cache(maxsize=256)
def validate_with_engine(config_text: str) -> None:
    """Parses the config with the engine once per distinct text, so unknown
    keys and values fail here, in Python, naming the key."""
    try:
        engine().canonical_config(config_text)
    except ConfigError:
        raise
    except ValueError as e:
        raise ConfigError(f"`jaxamg.solve`: invalid config: {e}") from None
