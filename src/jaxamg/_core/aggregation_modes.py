"""Near-null-space vectors for smoothed aggregation (`near_nullspace=` of
`jaxamg.solve` and `jaxamg.with_cache`).

These are the vectors a smoothed-aggregation hierarchy must represent on every
level: the rigid-body modes of linear elasticity (3 in 2D, 6 in 3D), the
constant of a Laplacian. They are not a null space of a singular system (that
is `nullspace=`, see :mod:`jaxamg.nullspace`): A need not annihilate them.
The module is named for their use, the modes aggregation keeps, so that it
cannot be taken for the null space's.

The vectors are constants of the solve: no gradient flows into them, and the
native cache keys a setup by their fingerprint, so different vectors never
share a hierarchy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import host_math
from .matrix import is_concrete

_WHO = "`jaxamg.solve`"


def as_near_nullspace(spec: Any, n: int, dtype: Any, who: str = _WHO):
    """The (n, m) array of `spec` in `dtype` (None for None), validated."""
    import jax.numpy as jnp

    if spec is None:
        return None
    return jnp.asarray(check_near_nullspace(spec, n, who), dtype=dtype)


def check_near_nullspace(spec: Any, n: int, who: str = _WHO):
    """`spec` as an array after validation (raises naming `who`).

    Shape and dtype are always checked; finiteness and linear independence
    only when the values are concrete (under a trace the engine still rejects
    non-finite values)."""
    if not hasattr(spec, "shape"):
        try:
            spec = np.asarray(spec)
        except (TypeError, ValueError) as e:
            raise TypeError(
                f"{who}: `near_nullspace` must be an (n, m) array, got {type(spec).__name__} "
                f"({e}); pass a NumPy or JAX array with one column per vector."
            ) from None
    shape = tuple(spec.shape)
    if len(shape) != 2:
        hint = " (for one vector use v.reshape(-1, 1))" if len(shape) == 1 else ""
        raise ValueError(
            f"{who}: `near_nullspace` must be a 2-D (n, m) array with one column per vector, "
            f"got shape {shape}; pass e.g. np.column_stack(vectors){hint}."
        )
    rows, m = shape
    if rows != n:
        raise ValueError(
            f"{who}: `near_nullspace` has {rows} rows but `A` has {n}; pass one row per "
            "unknown, ordered like A's rows (node-interleaved for block_dim > 1)."
        )
    if m < 1 or m > n:
        raise ValueError(
            f"{who}: `near_nullspace` has {m} columns; pass between 1 and n = {n} vectors."
        )
    kind = np.dtype(spec.dtype).kind
    if kind not in "fiu":
        raise TypeError(
            f"{who}: `near_nullspace` has dtype {np.dtype(spec.dtype)}; pass real vectors."
        )
    if is_concrete(spec):
        values = np.asarray(spec, dtype=np.float64)
        if not np.all(np.isfinite(values)):
            bad = tuple(int(i) for i in np.argwhere(~np.isfinite(values))[0])
            raise ValueError(
                f"{who}: `near_nullspace` entry {bad} is {values[bad]}; pass finite vectors."
            )
        rank = _rank(values)
        if rank < m:
            raise ValueError(
                f"{who}: `near_nullspace` has {m} columns but rank {rank}: some vectors are "
                "linear combinations of the others; pass linearly independent vectors "
                "(drop the dependent columns)."
            )
    return spec


def _rank(values: np.ndarray) -> int:
    """Numerical rank of the columns, each scaled to unit norm first (so that
    vectors of different magnitudes, translations and rotations, count
    alike)."""
    norms = np.linalg.norm(values, axis=0)
    values = values[:, norms > 0] / norms[norms > 0]
    if values.shape[1] == 0:
        return 0
    # The SVD of R: a BLAS SVD of the tall array would spin BLAS threads
    # (host_math).
    s = np.linalg.svd(host_math.triangular_factor(values), compute_uv=False)
    return int(np.count_nonzero(s > s[0] * max(values.shape) * np.finfo(np.float64).eps * 16))


def rigid_body_modes(coordinates: Any) -> np.ndarray:
    """The rigid-body modes of linear elasticity at the given node coordinates
    ((nodes, 2) or (nodes, 3)), node-interleaved like ``block_dim=dim``:
    2 translations and 1 rotation in 2D, 3 and 3 in 3D. Rotations are taken
    about the centroid, which keeps the columns well scaled."""
    x = np.asarray(coordinates, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] not in (2, 3):
        raise ValueError(
            "`jaxamg.rigid_body_modes`: `coordinates` must have shape (nodes, 2) or "
            f"(nodes, 3), got {x.shape}; pass one row of coordinates per node."
        )
    nodes, dim = x.shape
    x = x - x.mean(axis=0)
    if dim == 2:
        B = np.zeros((nodes, 2, 3))
        B[:, 0, 0] = 1.0
        B[:, 1, 1] = 1.0
        B[:, 0, 2] = -x[:, 1]
        B[:, 1, 2] = x[:, 0]
        return B.reshape(2 * nodes, 3)
    B = np.zeros((nodes, 3, 6))
    for c in range(3):
        B[:, c, c] = 1.0
    # Rotations about the x, y and z axes: omega x r.
    B[:, 1, 3], B[:, 2, 3] = -x[:, 2], x[:, 1]
    B[:, 0, 4], B[:, 2, 4] = x[:, 2], -x[:, 0]
    B[:, 0, 5], B[:, 1, 5] = -x[:, 1], x[:, 0]
    return B.reshape(3 * nodes, 6)
