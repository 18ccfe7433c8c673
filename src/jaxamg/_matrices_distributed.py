"""Distributed test problems: this rank's block of rows of the builders in
:mod:`jaxamg.matrices`, built without ever forming the global matrix.

Each builder returns ``(A_local, row_start, row_end)``: a BCSR matrix of shape
``(n_local, n_global)`` with int32 row pointers and *global* int32 column
indices, for the rows of the default partition
(:func:`jaxamg.mpi_utils.get_partition_info`). Values are JAX arrays computed
from the parameters, so `diagonal_value` and `skew` stay traceable and
differentiable, as in the serial builders.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .mpi_utils import get_partition_info, partition_operator

__all__ = [
    "tridiagonal_matrix_distributed",
    "poisson_matrix_distributed",
    "poisson3d_matrix_distributed",
    "random_matrix_distributed",
    "tridiagonal_operator_distributed",
    "poisson_operator_distributed",
    "poisson3d_operator_distributed",
]


def _dtype(dtype: Any):
    import jax.numpy as jnp

    return jnp.dtype(jnp.float32) if dtype is None else jnp.dtype(dtype)


def _local_stencil(shape: tuple[int, ...], row_start: int, row_end: int):
    """The rows row_start:row_end of the (2d+1)-point stencil on a C-order
    grid: (indptr, global columns, kinds) with kinds as in
    ``matrices._stencil_structure`` (0 diagonal, 2a+1 lower and 2a+2 upper
    neighbour along axis a), columns sorted within each row."""
    rows = np.arange(row_start, row_end, dtype=np.int64)
    position = np.unravel_index(rows, shape)
    strides = np.cumprod((1,) + tuple(shape[::-1]))[:-1][::-1]
    r_list, c_list, k_list = [rows], [rows], [np.zeros(rows.size, np.int8)]
    for axis, stride in enumerate(strides):
        lower = position[axis] > 0
        upper = position[axis] < shape[axis] - 1
        r_list += [rows[lower], rows[upper]]
        c_list += [rows[lower] - stride, rows[upper] + stride]
        k_list += [np.full(lower.sum(), 2 * axis + 1, np.int8),
                   np.full(upper.sum(), 2 * axis + 2, np.int8)]
    r, c, k = (np.concatenate(a) for a in (r_list, c_list, k_list))
    order = np.lexsort((c, r))
    r, c, k = r[order], c[order], k[order]
    counts = np.bincount(r - row_start, minlength=row_end - row_start)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return indptr, c.astype(np.int32), k


def _bcsr(indptr, indices, data, n_local: int, n_global: int):
    import jax.numpy as jnp
    from jax.experimental import sparse as jsparse

    return jsparse.BCSR(
        (data, jnp.asarray(indices), jnp.asarray(indptr)), shape=(n_local, n_global)
    )


def _check_grid(name: str, value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"`jaxamg.matrices.{where}`: `{name}` must be an integer >= 1, got {value!r}.")
    return int(value)


def tridiagonal_matrix_distributed(
    n_global: int, rank: int, nranks: int, diagonal_value: Any = 2.0, dtype: Any = None
):
    """Rows of :func:`jaxamg.matrices.tridiagonal_matrix` owned by `rank`."""
    import jax.numpy as jnp

    n_global = _check_grid("n_global", n_global, "tridiagonal_matrix_distributed")
    rs, re, n_local = get_partition_info(n_global, rank, nranks)
    indptr, cols, kinds = _local_stencil((n_global,), rs, re)
    dt = _dtype(dtype)
    diag = jnp.asarray(diagonal_value, dtype=dt)
    data = jnp.where(jnp.asarray(kinds == 0), diag, jnp.asarray(-1.0, dt)).astype(dt)
    return _bcsr(indptr, cols, data, n_local, n_global), rs, re


def _skewed_rows(shape, rank, nranks, diagonal, skew, dtype):
    import jax.numpy as jnp

    n_global = int(np.prod(shape))
    rs, re, n_local = get_partition_info(n_global, rank, nranks)
    indptr, cols, kinds = _local_stencil(shape, rs, re)
    dt = _dtype(dtype)
    skew = jnp.asarray(skew, dtype=dt)
    lower, upper = -1.0 - skew / 2, -1.0 + skew / 2
    k = jnp.asarray(kinds)
    data = jnp.where(k == 0, jnp.asarray(diagonal, dt), jnp.where(k % 2 == 1, lower, upper))
    return _bcsr(indptr, cols, data.astype(dt), n_local, n_global), rs, re


def poisson_matrix_distributed(
    nx: int, ny: int, rank: int, nranks: int, skew: Any = 0.0, dtype: Any = None
):
    """Rows owned by `rank` of the 2-D 5-point Laplacian on an nx x ny grid
    (row ``i*ny + j``), with :func:`jaxamg.matrices.poisson_matrix`'s values
    and skew convention; for nx == ny == n it is that matrix."""
    nx = _check_grid("nx", nx, "poisson_matrix_distributed")
    ny = _check_grid("ny", ny, "poisson_matrix_distributed")
    return _skewed_rows((nx, ny), rank, nranks, 4.0, skew, dtype)


def poisson3d_matrix_distributed(
    n: int, rank: int, nranks: int, skew: Any = 0.0, dtype: Any = None
):
    """Rows owned by `rank` of :func:`jaxamg.matrices.poisson3d_matrix` (n^3
    unknowns, 7-point stencil)."""
    n = _check_grid("n", n, "poisson3d_matrix_distributed")
    return _skewed_rows((n, n, n), rank, nranks, 6.0, skew, dtype)


def random_matrix_distributed(
    n_global: int, rank: int, nranks: int, density: float = 0.01, dtype: Any = None, seed: int = 0
):
    """A random sparse row block (seed ``seed + rank``) made diagonally
    dominant: the global diagonal entry of each row is its absolute row sum
    plus one. Structurally nonsymmetric."""
    import jax.numpy as jnp
    import scipy.sparse as sp

    n_global = _check_grid("n_global", n_global, "random_matrix_distributed")
    rs, re, n_local = get_partition_info(n_global, rank, nranks)
    M = sp.random(
        n_local, n_global, density=density, format="lil", random_state=seed + rank, dtype=np.float64
    )
    local = np.arange(n_local)
    M[local, rs + local] = 0.0
    M = M.tocsr()
    M.eliminate_zeros()
    diagonal = np.asarray(abs(M).sum(axis=1)).ravel() + 1.0
    M = (M + sp.csr_matrix((diagonal, (local, rs + local)), shape=M.shape)).tocsr()
    M.sort_indices()
    return (
        _bcsr(
            M.indptr.astype(np.int32),
            M.indices.astype(np.int32),
            jnp.asarray(M.data, dtype=_dtype(dtype)),
            n_local,
            n_global,
        ),
        rs,
        re,
    )


def tridiagonal_operator_distributed(
    n_global: int, rank: int, nranks: int, diagonal_value: Any = 2.0, dtype: Any = None
):
    """``(local_op, row_start, row_end)``: the rows of
    :func:`jaxamg.matrices.tridiagonal_operator` owned by `rank`, as a
    function of the global vector (color it with shape (n_local, n_global))."""
    from .matrices import tridiagonal_operator

    return partition_operator(tridiagonal_operator(diagonal_value, dtype), n_global, rank, nranks)


def poisson_operator_distributed(
    n: int, rank: int, nranks: int, skew: Any = 0.0, dtype: Any = None
):
    """The rows of :func:`jaxamg.matrices.poisson_operator` (n x n grid) owned
    by `rank`; see :func:`tridiagonal_operator_distributed`."""
    from .matrices import poisson_operator

    n = _check_grid("n", n, "poisson_operator_distributed")
    return partition_operator(poisson_operator(skew, dtype), n * n, rank, nranks)


def poisson3d_operator_distributed(
    n: int, rank: int, nranks: int, robin: Any = 0.0, diagonal_value: Any = 6.0
):
    """The rows of :func:`jaxamg.matrices.poisson3d_operator` (n^3 grid) owned
    by `rank`; see :func:`tridiagonal_operator_distributed`."""
    from .matrices import poisson3d_operator

    n = _check_grid("n", n, "poisson3d_operator_distributed")
    return partition_operator(poisson3d_operator(robin, diagonal_value), n**3, rank, nranks)
