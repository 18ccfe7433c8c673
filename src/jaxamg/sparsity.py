"""Matrix-free operators to sparse matrices.

A linear operator ``A(x)`` (a JAX function from a length-``n_global`` vector to
a length-``n_local`` vector) is turned into a :class:`jax.experimental.sparse.BCSR`
matrix in three steps:

1. *Detection* of the sparsity pattern, by interpreting the operator's jaxpr
   (:func:`trace_sparsity_pattern`), or, when that is not possible, by
   applying it to one-hot vectors (:func:`probe_sparsity_pattern`).
2. *Colouring* of the columns so that no two columns of one colour share a
   row (:func:`get_column_coloring`).
3. *Materialisation*: one operator application per colour
   (:func:`materialize_sparse_matrix`); differentiable with respect to
   whatever the operator closes over.

:func:`cache_coloring` runs steps 1-2 once, checks the result, and attaches it
to the operator, so that later materialisations (for example inside
``jax.jit``, where detection is impossible) cost only step 3.

``shape`` is an int ``n`` (square) or a pair ``(n_local, n_global)`` for the
row block of a distributed operator.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np

from ._operators.coloring import column_coloring
from ._operators.materialize import drop_zeros, materialize, verify_recovery
from ._operators.probing import PROBE_BATCH_BYTES, probe_batch_size, probe_pattern
from ._operators.tracing import trace_pattern

__all__ = [
    "trace_sparsity_pattern",
    "probe_sparsity_pattern",
    "get_column_coloring",
    "materialize_sparse_matrix",
    "cache_coloring",
    "materialize_operator",
]

_log = logging.getLogger("jaxamg.sparsity")

# Materialised values at or below this magnitude are dropped from a traced
# pattern (structural entries whose coefficient is zero at these parameters).
_ZERO_TOL = 1e-9

_PRESCAN_HINT = (
    "call jaxamg.cache_coloring(op, shape) or jaxamg.with_cache(op, coloring=...) outside jit"
)

# Names kept for code and tests that reach them by their short names.
_probe_batch_size = probe_batch_size
_PROBE_BATCH_BYTES = PROBE_BATCH_BYTES


def _as_shape(shape: Any, where: str) -> tuple[int, int]:
    def ok(v):
        return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0

    if ok(shape):
        return int(shape), int(shape)
    if isinstance(shape, (tuple, list)) and len(shape) == 2 and all(ok(v) for v in shape):
        return int(shape[0]), int(shape[1])
    raise ValueError(
        f"`jaxamg.{where}`: `shape` must be an int n or a pair (n_local, n_global) of "
        f"non-negative ints, got {shape!r}; pass e.g. {where}(op, 100) or (50, 100)."
    )


def trace_sparsity_pattern(operator: Callable, shape: Any, dtype: Any = None):
    """The operator's sparsity pattern from its jaxpr, or None when it cannot be
    traced structurally (opaque callbacks, indices computed from the input,
    unsupported non-local primitives).

    Returns ``(rows, cols)``, int64 arrays sorted row-major. The pattern is a
    superset of the nonzeros: coefficients that are zero only numerically
    stay in it (constant zeros known at trace time are removed).
    """
    return trace_pattern(operator, _as_shape(shape, "trace_sparsity_pattern"), dtype)


def probe_sparsity_pattern(operator: Callable, shape: Any, tol: float = 1e-10, dtype: Any = None):
    """The sparsity pattern from one-hot probes: entry (i, j) is kept when
    ``|operator(e_j)[i]| > tol``. Exact for linear operators; costs
    ``n_global`` applications (vectorised in memory-bounded blocks, or one at
    a time when the operator cannot be vmapped). Returns ``(rows, cols)``
    sorted row-major."""
    return probe_pattern(operator, _as_shape(shape, "probe_sparsity_pattern"), tol, dtype)


def get_column_coloring(rows, cols, shape: Any):
    """A distance-2 colouring of the columns: ``(colors, n_colors)`` with
    ``colors[j]`` in ``0..n_colors-1`` for every column with an entry, -1 for
    the others, and no two columns of one colour in a common row. Empty
    pattern: all -1 and 0 colours."""
    rows, cols = np.asarray(rows), np.asarray(cols)
    return column_coloring(rows, cols, _as_shape(shape, "get_column_coloring"))


def materialize_sparse_matrix(
    operator: Callable, shape: Any, rows, cols, colors, n_colors: int, dtype: Any = None
):
    """The operator as a BCSR matrix on the given pattern, from ``n_colors``
    applications (the operator is assumed linear). Works under ``jax.jit`` and
    is differentiable with respect to anything the operator closes over."""
    where = "jaxamg.materialize_sparse_matrix"
    return materialize(
        operator,
        _as_shape(shape, "materialize_sparse_matrix"),
        rows,
        cols,
        colors,
        n_colors,
        dtype,
        where,
    )


def _verify_recovery(operator: Callable, matrix, n_global: int) -> bool:
    return verify_recovery(operator, matrix, n_global)


def _drop_zeros(rows, cols, values, tol: float = _ZERO_TOL):
    return drop_zeros(rows, cols, values, tol)


def _traced_coloring(operator, shape, dtype):
    """Trace, colour, materialise, drop zeros, verify; None on any failure."""
    import jax.numpy as jnp
    from jax.experimental import sparse as jsparse

    pattern = trace_pattern(operator, shape, dtype)
    if pattern is None:
        return None
    try:
        rows, cols = pattern
        colors, n_colors = column_coloring(rows, cols, shape)
        A = materialize(operator, shape, rows, cols, colors, n_colors, dtype, "cache_coloring")
        rows, cols, values = drop_zeros(rows, cols, np.asarray(A.data), _ZERO_TOL)
        indptr = np.zeros(shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
        kept = jsparse.BCSR(
            (
                jnp.asarray(values),
                jnp.asarray(cols.astype(np.int32)),
                jnp.asarray(indptr.astype(np.int32)),
            ),
            shape=shape,
        )
        if not verify_recovery(operator, kept, shape[1]):
            _log.debug("the traced pattern does not reproduce the operator; probing instead")
            return None
    except Exception as e:  # a failure of any step means: probe instead
        _log.debug("materialising the traced pattern failed (%r); probing instead", e)
        return None
    return rows, cols


def _operator_name(operator) -> str:
    return getattr(operator, "__name__", type(operator).__name__)


def _check_operator(operator, shape, dtype, where: str) -> None:
    """Evaluates the operator abstractly on a length-``n_global`` vector, so
    that an operator JAX cannot trace, or one with the wrong output, is
    reported by name before any detection work (not as a reshape error deep
    inside the probing)."""
    import jax
    import jax.numpy as jnp

    n_local, n_global = shape
    dt = jnp.result_type(float) if dtype is None else jnp.dtype(dtype)
    name = _operator_name(operator)
    untraceable = (
        jax.errors.ConcretizationTypeError,
        jax.errors.TracerArrayConversionError,
        jax.errors.TracerIntegerConversionError,
    )
    try:
        # Wrapped: eval_shape caches on the function, and callable objects
        # with __slots__ cannot be weakly referenced.
        out = jax.eval_shape(lambda v: operator(v), jax.ShapeDtypeStruct((n_global,), dt))
    except untraceable as e:
        raise ValueError(
            f"`jaxamg.{where}`: the operator {name!r} cannot be traced by JAX: it converts its "
            f"input to a Python value ({type(e).__name__}), e.g. data-dependent control flow "
            "such as `if x[0] > 0`; write it with jnp.where or jax.lax.cond, or pass the "
            "matrix itself."
        ) from e
    except TypeError as e:
        raise TypeError(
            f"`jaxamg.{where}`: applying the operator {name!r} to a vector of shape "
            f"({n_global},) failed ({e}); the operator must map one JAX vector of length "
            f"{n_global} to a JAX vector of length {n_local}."
        ) from e
    out_shape = tuple(getattr(out, "shape", ()))
    # (n_local, 1) and the like are accepted: the detection reshapes them.
    if not hasattr(out, "shape") or not out_shape or int(np.prod(out_shape)) != n_local:
        raise ValueError(
            f"`jaxamg.{where}`: the operator {name!r} returns shape {out_shape} for an input "
            f"of shape ({n_global},); it must return a vector of shape ({n_local},), one "
            "entry per row."
        )
    if np.dtype(out.dtype).kind == "c":
        raise TypeError(
            f"`jaxamg.{where}`: the operator {name!r} returns complex values ({out.dtype}); "
            "complex systems are not supported, write the real 2x2 block form."
        )


def _compute_coloring(operator, shape, dtype=None, where: str = "cache_coloring"):
    _check_operator(operator, shape, dtype, where)
    pattern = _traced_coloring(operator, shape, dtype)
    if pattern is None:
        pattern = probe_pattern(operator, shape, dtype=dtype)
        _check_probed_linear(operator, shape, pattern, dtype, where)
    rows, cols = pattern
    colors, n_colors = column_coloring(rows, cols, shape)
    return (rows, cols, colors, n_colors, shape)


def _check_probed_linear(operator, shape, pattern, dtype, where: str) -> None:
    """A probed pattern reproduces the operator unless the operator is not
    linear (probing applies it to unit vectors only): an affine or nonlinear
    operator would otherwise be replaced by a different matrix, silently."""
    rows, cols = pattern
    if len(rows) == 0:
        return
    colors, n_colors = column_coloring(rows, cols, shape)
    matrix = materialize(operator, shape, rows, cols, colors, n_colors, dtype, where)
    if not verify_recovery(operator, matrix, shape[1]):
        raise ValueError(
            f"`jaxamg.{where}`: the operator {_operator_name(operator)!r} is not linear: "
            "A(x) differs from the matrix of its responses to unit vectors on random vectors "
            "(an added constant, a nonlinearity, or randomness); pass a linear operator "
            "A(x) = M @ x."
        )


def cache_coloring(operator: Callable, shape: Any):
    """Detects the operator's pattern, colours it, attaches the result to the
    operator as ``_coloring_info`` and returns it:
    ``(rows, cols, column_colors, n_colors, shape)``.

    Tracing is tried first; its pattern is materialised, entries with
    |value| <= 1e-9 are dropped (so compute the colouring at parameters where
    no structural coefficient is zero), and the matrix is checked against the
    operator on 5 random vectors. If any step fails, the pattern is probed.
    A second call with the same shape returns the same object; a different
    shape raises ValueError.
    """
    shape = _as_shape(shape, "cache_coloring")
    cached = getattr(operator, "_coloring_info", None)
    if cached is not None:
        cached_shape = tuple(cached[4])
        if cached_shape != shape:
            raise ValueError(
                f"`jaxamg.cache_coloring`: `shape` {shape} does not match the cached "
                f"coloring's {cached_shape}; use a new operator object for another size, or "
                "delete its `_coloring_info` attribute first."
            )
        return cached
    info = _compute_coloring(operator, shape)
    _attach(operator, info, "cache_coloring")
    return info


def _attach(operator, info, where):
    try:
        operator._coloring_info = info
    except (AttributeError, TypeError) as e:
        raise TypeError(
            f"`jaxamg.{where}`: cannot attach the coloring to an object of type "
            f"{type(operator).__name__} ({e}); wrap it in a Python function."
        ) from None


def _under_jit() -> bool:
    """True while a jit trace is being built (operations on constants are
    staged instead of computed)."""
    import jax
    import jax.numpy as jnp

    return isinstance(jnp.zeros(()) + 0, jax.core.Tracer)


def materialize_operator(
    operator: Callable, n_rows: int, coloring: Any = None, *, where: str = "jaxamg.solve"
):
    """The BCSR matrix of a callable operator for a system with ``n_rows`` rows.

    Uses `coloring` if given, else the operator's cached ``_coloring_info``;
    outside jit an operator without either is colored (square) and cached on
    first use. Under jit the operator must have been colored beforehand.
    """
    info = coloring if coloring is not None else getattr(operator, "_coloring_info", None)
    if info is None:
        name = getattr(operator, "__name__", type(operator).__name__)
        message = (
            f"`{where}`: the operator {name!r} must be pre-scanned before JIT: {_PRESCAN_HINT}."
        )
        if _under_jit():
            raise ValueError(message)
        info = _compute_coloring(
            operator, (int(n_rows), int(n_rows)), where=where.removeprefix("jaxamg.")
        )
        try:
            _attach(operator, info, "materialize_operator")
        except TypeError:
            pass  # still usable now; only the reuse is lost
    if not (isinstance(info, (tuple, list)) and len(info) == 5):
        raise ValueError(
            f"`{where}`: the coloring must be the 5-tuple (rows, cols, colors, n_colors, shape) "
            f"returned by jaxamg.cache_coloring, got {type(info).__name__}; {_PRESCAN_HINT}."
        )
    rows, cols, colors, n_colors, shape = info
    shape = _as_shape(tuple(shape), "materialize_operator")
    if shape[0] != n_rows:
        raise ValueError(
            f"`{where}`: the operator's cached coloring has {shape[0]} rows but `b` has "
            f"{n_rows}; pass a `b` of length {shape[0]}, or color the operator for this size "
            "with jaxamg.cache_coloring on a new operator object."
        )
    return materialize(operator, shape, rows, cols, colors, n_colors, None, where)
