"""Helpers JAX-AMG users import from ``jaxamg.utils``: matrix conversion, the
precision rule, the statistics file and 64-bit integer arrays.

Each one is a thin public face of the code the solver itself runs, so that
what a user computes with it is what ``jaxamg.solve`` does:

- :func:`to_scipy`: a JAX sparse matrix (or any matrix ``solve`` accepts) as
  a SciPy sparse matrix, through the solver's own CSR conversion;
- :func:`get_preferred_dtype`: the dtype rule of ``solve`` (float64 if `A`
  or `b` is float64, else float32);
- :func:`to_bcsr_matrix`: any accepted `A` (BCSR, BCOO, SciPy, dense, a
  callable operator) as a BCSR with int32 row pointers and int32 (or int64)
  column indices, the values in the preferred dtype;
- :func:`format_amgx_stats`: the statistics file ``save_stats_file`` writes,
  from the engine's printed text;
- :func:`temp_enable_x64`, :func:`ensure_int64_array`: int64 arrays while
  JAX's default 32-bit mode is on;
- :func:`deep_merge`: the config merge ``solve`` applies to `config` and
  keyword arguments.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._core.checks import check_dtype, preferred_dtype
from ._core.config_rules import deep_merge
from ._core.matrix import as_csr, is_concrete
from ._core.stats import write_stats_file
from .sparsity import materialize_operator

__all__ = [
    "to_scipy",
    "get_preferred_dtype",
    "to_bcsr_matrix",
    "format_amgx_stats",
    "deep_merge",
    "temp_enable_x64",
    "ensure_int64_array",
]

# SciPy formats `to_scipy` converts to, by the name SciPy gives them.
SCIPY_FORMATS = ("csr", "csc", "coo", "lil", "dok", "bsr")


def to_scipy(A: Any, format: str = "csr") -> Any:
    """`A` as a SciPy sparse matrix in `format` (``"csr"``, ``"csc"``,
    ``"coo"``, ``"lil"``, ``"dok"`` or ``"bsr"``), with `A`'s values and dtype.

    `A` is a ``jax.experimental.sparse`` BCSR or BCOO matrix, or any other
    matrix :func:`jaxamg.solve` accepts; its values must be concrete (not
    inside ``jax.jit``). Another `format` raises ValueError.
    """
    if format not in SCIPY_FORMATS:
        raise ValueError(
            f"`jaxamg.utils.to_scipy`: unsupported `format` {format!r}; pass one of "
            f"{', '.join(repr(f) for f in SCIPY_FORMATS)}."
        )
    import scipy.sparse as sp

    csr = as_csr(A, "jaxamg.utils.to_scipy")
    if not is_concrete(csr.indptr, csr.indices, csr.data):
        raise ValueError(
            "`jaxamg.utils.to_scipy`: `A` holds traced values (inside jax.jit or another "
            "transformation); call to_scipy on concrete arrays, outside the transformation."
        )
    M = sp.csr_matrix(
        (np.asarray(csr.data).ravel(), np.asarray(csr.indices), np.asarray(csr.indptr)),
        shape=csr.shape,
    )
    return M if format == "csr" else M.asformat(format)


def get_preferred_dtype(A: Any, b: Any):
    """The dtype :func:`jaxamg.solve` computes in for `A` and `b`:
    ``jnp.float64`` if `b` or `A` (its ``dtype``, e.g. a BCSR's values) is
    float64, else ``jnp.float32`` (also for integer or boolean input and for
    a callable `A`, which has no dtype). As in ``solve``, float64 needs
    ``jax_enable_x64``; without it JAX has no float64 arrays and the answer is
    float32.
    """
    return preferred_dtype(A, b)


def to_bcsr_matrix(A: Any, b: Any, use_int64_indices: bool = False) -> Any:
    """`A` as a ``jax.experimental.sparse.BCSR`` the way :func:`jaxamg.solve`
    reads it: values cast to :func:`get_preferred_dtype` ``(A, b)``, row
    pointers int32, column indices int32 (int64 with
    ``use_int64_indices=True``, the global columns of an MPI row block).

    `A` is a BCSR or BCOO matrix, a SciPy sparse matrix (csr, csc, coo, bsr,
    lil, dok), a dense 2-D array or a callable operator ``A(x)``; a callable
    is materialised with its cached coloring (``jaxamg.cache_coloring``) or,
    outside ``jax.jit``, a coloring computed now for a square operator with
    ``len(b)`` rows. A batched BCSR raises ValueError (use ``jax.vmap``).
    """
    import jax.numpy as jnp
    from jax.experimental import sparse as jsparse

    if not isinstance(use_int64_indices, (bool, np.bool_)):
        raise TypeError(
            f"`jaxamg.utils.to_bcsr_matrix`: `use_int64_indices` must be True or False, got "
            f"{use_int64_indices!r}; pass a bool."
        )
    if b is not None and not hasattr(b, "shape"):
        b = np.asarray(b)
    if callable(A) and not hasattr(A, "shape"):
        if b is None or len(b.shape) != 1:
            shape = None if b is None else tuple(b.shape)
            raise ValueError(
                "`jaxamg.utils.to_bcsr_matrix`: a callable `A` needs the right-hand side `b` "
                f"(a 1-D vector, one entry per row) to know its size, got b of shape {shape}."
            )
        A = materialize_operator(A, int(b.shape[0]), where="jaxamg.utils.to_bcsr_matrix")
    csr = as_csr(A, "jaxamg.utils.to_bcsr_matrix")
    check_dtype("A", csr.data.dtype)
    dtype = preferred_dtype(csr.data, b)
    data = jnp.asarray(csr.data, dtype=dtype)
    indptr = jnp.asarray(csr.indptr, dtype=jnp.int32)
    if use_int64_indices:
        indices = ensure_int64_array(csr.indices)
        # BCSR's constructor keeps the arrays; build it where int64 exists.
        with temp_enable_x64():
            return jsparse.BCSR((data, indices, indptr), shape=csr.shape)
    return jsparse.BCSR((data, jnp.asarray(csr.indices, dtype=jnp.int32), indptr), shape=csr.shape)


def format_amgx_stats(stats_str: str, filepath: Any, rank: int | None = None) -> None:
    """Writes the statistics file of ``save_stats_file`` to `filepath` from
    `stats_str`, the engine's printed statistics text (AmgX layout: the AMG
    grid table and the iteration table). With `rank` (MPI), only rank 0
    writes. Prints where the file went, as ``solve`` does.
    """
    if not isinstance(stats_str, str):
        raise TypeError(
            f"`jaxamg.utils.format_amgx_stats`: `stats_str` must be the statistics text (str), "
            f"got {type(stats_str).__name__}; pass the captured output as a string."
        )
    try:
        path = os.fspath(filepath)
    except TypeError:
        raise TypeError(
            f"`jaxamg.utils.format_amgx_stats`: `filepath` must be a path (str or "
            f"os.PathLike), got {type(filepath).__name__} {filepath!r}; pass a file name such "
            "as 'stats.txt'."
        ) from None
    if rank is not None and (
        isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or rank < 0
    ):
        raise ValueError(
            f"`jaxamg.utils.format_amgx_stats`: `rank` must be None or an MPI rank (an int "
            f">= 0), got {rank!r}; pass comm.Get_rank() or leave it out."
        )
    write_stats_file(stats_str, path, None if rank is None else int(rank))


@contextlib.contextmanager
def temp_enable_x64() -> Iterator[None]:
    """Turns ``jax_enable_x64`` on inside the ``with`` block and restores the
    previous setting after it (also when the block raises). Arrays created
    inside keep their 64-bit dtype afterwards."""
    import jax

    previous = bool(jax.config.read("jax_enable_x64"))
    if not previous:
        jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        if not previous:
            jax.config.update("jax_enable_x64", False)


def ensure_int64_array(data: Any) -> Any:
    """`data` (integer values: an array, a list, a scalar) as an int64 JAX
    array, also while JAX's default 32-bit mode is on (where ``jnp.asarray``
    would silently give int32). Non-integer values raise ValueError."""
    import jax.numpy as jnp

    if not is_concrete(data):
        with temp_enable_x64():
            return jnp.asarray(data).astype(jnp.int64)
    values = np.asarray(data)
    if values.dtype.kind not in "iub":
        if (
            values.dtype.kind != "f"
            or not np.all(np.isfinite(values))
            or np.any(values != np.round(values))
        ):
            raise ValueError(
                f"`jaxamg.utils.ensure_int64_array`: `data` must hold integers, got dtype "
                f"{values.dtype} with non-integer values; pass integer indices."
            )
    if values.dtype.kind == "u" and values.size and int(values.max()) > np.iinfo(np.int64).max:
        raise ValueError(
            "`jaxamg.utils.ensure_int64_array`: `data` holds values above the int64 range; "
            "pass indices below 2**63."
        )
    with temp_enable_x64():
        return jnp.asarray(values.astype(np.int64))
