"""Assembling a matrix from a linear operator, a pattern and a column colouring,
and checking the result against the operator.

One operator application per colour: applied to the 0/1 indicator of the
columns of colour c, the operator returns in row i the single entry of row i
whose column has colour c (a valid colouring gives each row at most one
column of each colour), so entry (i, j) is read as ``w[colour(j), i]``.
The CSR structure is computed on the host when the pattern is concrete, so
only the values are traced: the result is differentiable with respect to
anything the operator closes over, and XLA never sees index arithmetic.
"""

from __future__ import annotations

import numpy as np

from .._core import host_math
from .._core.structure import coo_to_csr_order

__all__ = ["materialize", "sweep_values", "verify_recovery", "drop_zeros", "host_csr_layout"]


def _full_precision():
    """Float32 products and convolutions at full precision while the operator is
    traced here: on GPUs the default may round operands to TF32 (about 3
    decimal digits), which would round the matrix coefficients; the indicator
    vectors are 0/1, so at full precision every entry is exact."""
    import jax

    return jax.default_matmul_precision("highest")


def _is_concrete(*xs) -> bool:
    import jax

    return not any(isinstance(x, jax.core.Tracer) for x in xs)


def host_csr_layout(rows, cols, colors, shape, where: str):
    """(indptr, indices, gather index into the flattened colour sweep) for a
    concrete pattern; duplicate entries are merged."""
    n_local, n_global = shape
    rows = np.asarray(rows, dtype=np.int64).ravel()
    cols = np.asarray(cols, dtype=np.int64).ravel()
    colors = np.asarray(colors).ravel()
    if rows.shape != cols.shape:
        raise ValueError(
            f"`{where}`: `rows` and `cols` must have the same length, got {rows.size} and "
            f"{cols.size}; pass the two arrays of one pattern."
        )
    if colors.size != n_global:
        raise ValueError(
            f"`{where}`: `colors` has {colors.size} entries but the operator has {n_global} "
            "columns; pass the colouring computed for this shape."
        )
    if rows.size and (
        rows.min() < 0 or rows.max() >= n_local or cols.min() < 0 or cols.max() >= n_global
    ):
        raise ValueError(
            f"`{where}`: the pattern has entries outside the shape {tuple(shape)}; pass "
            "rows < n_local and cols < n_global."
        )
    key = rows * max(n_global, 1) + cols
    if key.size > 1 and not np.all(key[1:] > key[:-1]):
        key = np.unique(key)  # sorts row-major and merges duplicates
        rows, cols = key // max(n_global, 1), key % max(n_global, 1)
    entry_colors = colors[cols].astype(np.int64)
    if entry_colors.size and entry_colors.min() < 0:
        j = int(cols[np.argmin(entry_colors)])
        raise ValueError(
            f"`{where}`: column {j} has entries but colour -1; pass a colouring of this "
            "pattern (jaxamg.sparsity.get_column_coloring)."
        )
    indptr = np.zeros(n_local + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_local), out=indptr[1:])
    gather = entry_colors * n_local + rows
    index_dtype = np.int32 if max(gather.max(initial=0), n_global) < 2**31 else np.int64
    return indptr.astype(index_dtype), cols.astype(index_dtype), gather.astype(index_dtype)


def _color_sweep(operator, colors, n_colors: int, n_local: int, dtype):
    """(n_colors, n_local): the operator applied to each colour's indicator, one
    application at a time (lax.map), so operators without batching rules work."""
    import jax.numpy as jnp
    from jax import lax

    def apply(c):
        return jnp.reshape(operator((colors == c).astype(dtype)), (n_local,))

    return lax.map(apply, jnp.arange(n_colors, dtype=colors.dtype))


def sweep_values(operator, colors, gather, n_colors: int, n_local: int, dtype):
    """The stored values: the colour sweep read out at ``gather``
    (= colour(col) * n_local + row for every entry)."""
    import jax.numpy as jnp

    sweep = _color_sweep(operator, jnp.asarray(colors), n_colors, n_local, dtype)
    return jnp.reshape(sweep, (-1,))[gather]


def materialize(operator, shape, rows, cols, colors, n_colors, dtype=None, where="materialize"):
    import jax
    import jax.numpy as jnp
    from jax.experimental import sparse as jsparse

    n_local, n_global = shape
    dtype = jnp.result_type(float) if dtype is None else jnp.dtype(dtype)
    try:
        n_colors = int(n_colors)
    except (TypeError, jax.errors.ConcretizationTypeError):
        raise ValueError(
            f"`{where}`: `n_colors` must be a concrete int, got {n_colors!r}; pass the "
            "count returned with the colouring."
        ) from None

    if _is_concrete(rows, cols, colors):
        indptr, indices, gather = host_csr_layout(rows, cols, colors, shape, where)
        if indices.size == 0 or n_colors == 0:
            data = jnp.zeros((indices.size,), dtype)
        else:
            # One compiled program for the sweep and the read-out (inlined when
            # called under an outer jit); only the values are computed by XLA.
            def values(colors, gather):
                return sweep_values(operator, colors, gather, n_colors, n_local, dtype)

            with _full_precision():
                data = jax.jit(values)(np.asarray(colors, dtype=np.int32), gather)
        return jsparse.BCSR(
            (data, jnp.asarray(indices), jnp.asarray(indptr)), shape=(n_local, n_global)
        )

    # Traced pattern: the same layout, computed by XLA.
    rows, cols = jnp.ravel(jnp.asarray(rows)), jnp.ravel(jnp.asarray(cols))
    order, indptr = coo_to_csr_order(rows, cols, n_local)
    rows, cols = rows[order], cols[order]
    colors = jnp.asarray(colors)
    if n_colors == 0:
        data = jnp.zeros(rows.shape, dtype)
    else:
        with _full_precision():
            sweep = _color_sweep(operator, colors, n_colors, n_local, dtype)
        data = sweep[colors[cols], rows]
    return jsparse.BCSR((data, cols, indptr), shape=(n_local, n_global))


def drop_zeros(rows, cols, values, tol: float = 1e-9):
    """The entries with |value| > tol (coefficients that vanished at the
    parameters the pattern was computed with are removed)."""
    keep = np.abs(np.asarray(values)) > tol
    return np.asarray(rows)[keep], np.asarray(cols)[keep], np.asarray(values)[keep]


def verify_recovery(operator, matrix, n_global: int, *, trials: int = 5, seed: int = 0) -> bool:
    """True when ``matrix @ v`` equals ``operator(v)`` for `trials` random vectors,
    to a relative tolerance of 1e-6 in float64 and 1e-4 in lower precision."""
    import jax
    import jax.numpy as jnp
    import scipy.sparse as sp

    data = np.asarray(matrix.data, dtype=np.float64)
    indices, indptr = np.asarray(matrix.indices), np.asarray(matrix.indptr)
    A = sp.csr_matrix((data, indices, indptr), shape=matrix.shape)
    dtype = jnp.dtype(matrix.data.dtype)
    rtol = 1e-6 if dtype == jnp.float64 else 1e-4
    rng = np.random.default_rng(seed)
    # Through a lambda: jax.jit of a callable object that cannot be weakly
    # referenced (``__slots__`` without ``__weakref__``) can crash the
    # interpreter (seen with jax 0.10) instead of raising TypeError.
    apply = jax.jit(lambda v: operator(v))
    for _ in range(trials):
        v = rng.standard_normal(n_global).astype(dtype)
        with _full_precision():  # the matrix was materialised at full precision
            expected = np.asarray(apply(jnp.asarray(v)), dtype=np.float64).ravel()
        got = A @ v.astype(np.float64)
        if expected.shape != got.shape or not np.all(np.isfinite(expected)):
            return False
        if host_math.norm(got - expected) > rtol * host_math.norm(expected):
            return False
    return True
