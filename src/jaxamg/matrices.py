"""Test problems: sparse matrices (JAX BCSR), matrix-free operators and
right-hand sides.

Structures are built with NumPy; values are JAX arrays computed from the
parameters, so `diagonal_value` and `skew` can be traced and differentiated
(the gradient of a loss with respect to a builder's parameter flows through
the matrix values).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._core.suitesparse import download_suitesparse_matrix
from .mpi_utils import get_partition_info, partition_operator

__all__ = [
    "tridiagonal_matrix",
    "poisson_matrix",
    "poisson3d_matrix",
    "random_matrix",
    "convection_diffusion_matrix_2d",
    "poisson_matrix_stretched",
    "tridiagonal_operator",
    "poisson_operator",
    "poisson3d_operator",
    "rhs_ones",
    "rhs_linear",
    "rhs_random",
    "tridiagonal_matrix_distributed",
    "poisson_matrix_distributed",
    "poisson3d_matrix_distributed",
    "random_matrix_distributed",
    "tridiagonal_operator_distributed",
    "poisson_operator_distributed",
    "poisson3d_operator_distributed",
    "download_suitesparse_matrix",
]


def _dtype(dtype: Any, default: Any = None):
    import jax.numpy as jnp

    if dtype is None:
        return jnp.dtype(default or jnp.float32)
    try:
        return jnp.dtype(dtype)
    except TypeError:
        raise TypeError(
            f"`dtype` {dtype!r} is not a NumPy/JAX dtype; pass e.g. jnp.float32 or 'float64'."
        ) from None


def _size(where: str, name: str, value: Any, minimum: int = 1) -> int:
    """``value`` as an int >= ``minimum``: TypeError for a non-integer (a float
    size would silently truncate), ValueError when too small (an empty or
    negative grid fails deep inside JAX with no hint)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(
            f"`{where}`: `{name}` must be an integer, got {type(value).__name__} {value!r}; "
            f"pass a whole number >= {minimum}."
        )
    if value < minimum:
        raise ValueError(f"`{where}`: `{name}` must be >= {minimum}, got {value}.")
    return int(value)


def _bcsr(indptr, indices, data, n: int):
    from jax.experimental import sparse as jsparse

    return jsparse.BCSR((data, indices, indptr), shape=(n, n))


def _stencil_structure(shape: tuple[int, ...]):
    """CSR structure of the (2d+1)-point stencil on a grid in C order, and for
    every stored entry its kind: 0 = diagonal, 2a+1 = lower neighbour along
    axis a, 2a+2 = upper neighbour along axis a."""
    n = int(np.prod(shape))
    idx = np.arange(n).reshape(shape)
    rows, cols, kinds = [idx.ravel()], [idx.ravel()], [np.zeros(n, dtype=np.int8)]
    for axis in range(len(shape)):
        for direction, kind in ((-1, 2 * axis + 1), (1, 2 * axis + 2)):
            src = [slice(None)] * len(shape)
            dst = [slice(None)] * len(shape)
            if direction < 0:
                src[axis], dst[axis] = slice(1, None), slice(None, -1)
            else:
                src[axis], dst[axis] = slice(None, -1), slice(1, None)
            r = idx[tuple(src)].ravel()
            rows.append(r)
            cols.append(idx[tuple(dst)].ravel())
            kinds.append(np.full(r.shape, kind, dtype=np.int8))
    all_rows, all_cols, all_kinds = (np.concatenate(a) for a in (rows, cols, kinds))
    order = np.lexsort((all_cols, all_rows))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(all_rows, minlength=n))])
    return indptr.astype(np.int32), all_cols[order].astype(np.int32), all_kinds[order]


def tridiagonal_matrix(n: int, diagonal_value: Any = 2.0, dtype: Any = None):
    """The n x n matrix with `diagonal_value` on the diagonal and -1 beside it."""
    import jax.numpy as jnp

    n = _size("tridiagonal_matrix", "n", n)
    indptr, indices, kinds = _stencil_structure((n,))
    dt = _dtype(dtype)
    diag = jnp.asarray(diagonal_value, dtype=dt)
    data = jnp.where(jnp.asarray(kinds == 0), diag, jnp.asarray(-1.0, dt)).astype(dt)
    return _bcsr(jnp.asarray(indptr), jnp.asarray(indices), data, n)


def _skewed_stencil(shape: tuple[int, ...], diagonal: float, skew: Any, dtype: Any):
    import jax.numpy as jnp

    indptr, indices, kinds = _stencil_structure(shape)
    dt = _dtype(dtype)
    skew = jnp.asarray(skew, dtype=dt)
    lower = -1.0 - skew / 2  # west / north neighbours (index - 1 along an axis)
    upper = -1.0 + skew / 2
    k = jnp.asarray(kinds)
    data = jnp.where(k == 0, jnp.asarray(diagonal, dt), jnp.where(k % 2 == 1, lower, upper))
    n = int(np.prod(shape))
    return _bcsr(jnp.asarray(indptr), jnp.asarray(indices), data.astype(dt), n)


def poisson_matrix(n: int, skew: Any = 0.0, dtype: Any = None):
    """2-D 5-point Laplacian on an n x n grid (size n^2, row i*n + j), diagonal
    4; the west and north neighbours get -1 - skew/2, east and south
    -1 + skew/2 (nonsymmetric for skew != 0)."""
    n = _size("poisson_matrix", "n", n)
    return _skewed_stencil((n, n), 4.0, skew, dtype)


def poisson3d_matrix(n: int, skew: Any = 0.0, dtype: Any = None):
    """3-D 7-point Laplacian on an n^3 grid (row i*n^2 + j*n + k), diagonal 6,
    with the skew convention of :func:`poisson_matrix` along every axis."""
    n = _size("poisson3d_matrix", "n", n)
    return _skewed_stencil((n, n, n), 6.0, skew, dtype)


def random_matrix(n: int, density: float = 0.01, dtype: Any = None, seed: int = 0):
    """A random sparse matrix made diagonally dominant: the diagonal is set to
    the row's absolute sum plus one."""
    import jax.numpy as jnp
    import scipy.sparse as sp

    n = _size("random_matrix", "n", n)
    if (
        isinstance(density, bool)
        or not isinstance(density, (int, float, np.number))
        or not (0.0 <= density <= 1.0)
    ):
        raise ValueError(
            f"`random_matrix`: `density` must be a number in [0, 1] (the fraction of stored "
            f"off-diagonal entries), got {density!r}."
        )
    # A Generator, not an int seed: with an int, SciPy draws the positions
    # from a permutation of all n * n slots (75 GB at n = 100 000).
    rng = np.random.default_rng(seed)
    M = sp.random(n, n, density=density, format="csr", random_state=rng, dtype=np.float64)
    M = M.tolil()
    M.setdiag(0.0)
    M = M.tocsr()
    M = M + sp.diags(np.asarray(abs(M).sum(axis=1)).ravel() + 1.0)
    M = M.tocsr()
    M.sort_indices()
    dt = _dtype(dtype)
    return _bcsr(
        jnp.asarray(M.indptr.astype(np.int32)),
        jnp.asarray(M.indices.astype(np.int32)),
        jnp.asarray(M.data, dtype=dt),
        n,
    )


def convection_diffusion_matrix_2d(
    n: int, epsilon: float = 1.0, theta: float = 0.0, velocity: float = 100.0, dtype: Any = None
):
    """-epsilon Laplace(u) + v . grad(u) on an n x n grid, h = 1/(n-1): 5-point
    diffusion scaled by 1/h^2 and first-order upwind convection scaled by 1/h,
    with velocity magnitude `velocity` at angle `theta`."""
    import jax.numpy as jnp

    n = _size("convection_diffusion_matrix_2d", "n", n, minimum=2)
    h = 1.0 / (n - 1)
    vx, vy = velocity * np.cos(theta), velocity * np.sin(theta)
    indptr, indices, kinds = _stencil_structure((n, n))
    d = epsilon / h**2
    # Axis 0 is y (row index i), axis 1 is x (column index j).
    values = np.empty(kinds.shape, dtype=np.float64)
    values[kinds == 0] = 4 * d + (abs(vx) + abs(vy)) / h
    values[kinds == 1] = -d - max(vy, 0.0) / h
    values[kinds == 2] = -d + min(vy, 0.0) / h
    values[kinds == 3] = -d - max(vx, 0.0) / h
    values[kinds == 4] = -d + min(vx, 0.0) / h
    dt = _dtype(dtype)
    return _bcsr(jnp.asarray(indptr), jnp.asarray(indices), jnp.asarray(values, dtype=dt), n * n)


def poisson_matrix_stretched(
    nx: int, ny: int, stretch: Any, *, normalize: bool = True, dtype: Any = None
):
    """Finite-volume Poisson operator on a stretched grid of the unit square,
    periodic in x and closed (homogeneous Neumann) in y; returns ``(A, V)``.

    The ``nx`` columns of cells are uniform (width ``1/nx``); the ``ny`` rows
    of cells grow geometrically, row ``j`` having height proportional to
    ``stretch**j`` (``stretch = 1`` is the uniform grid). Cell ``(i, j)``
    (column ``i``, row ``j``) is unknown ``j*nx + i``, and ``V`` holds the cell
    volumes (areas; they sum to 1).

    The flux form ``L`` gives every face between cells ``p`` and ``q`` the
    coefficient ``T = |face| / |centre_p - centre_q|``: ``(L u)_p = sum_q T
    (u_p - u_q)``. It is symmetric positive semidefinite with ``L 1 = 0``.

    - ``normalize=True`` (default): ``A = D^-1 L`` with ``D = diag(V)``, the
      volume-averaged form. Nonsymmetric unless ``stretch = 1``; ``A 1 = 0``
      and ``A^T V = 0``, so ``null(A) = span(1)`` and ``null(A^T) = span(V)``.
    - ``normalize=False``: ``A = L``, symmetric, null space the constants.

    ``stretch`` may be traced (the structure does not depend on it).
    """
    import jax.numpy as jnp

    if not isinstance(nx, (int, np.integer)) or nx < 3:
        raise ValueError(
            f"`poisson_matrix_stretched`: nx must be an integer >= 3 (the periodic direction "
            f"needs distinct left and right neighbours), got {nx!r}."
        )
    if not isinstance(ny, (int, np.integer)) or ny < 1:
        raise ValueError(f"`poisson_matrix_stretched`: ny must be an integer >= 1, got {ny!r}.")
    if isinstance(stretch, (int, float, np.number)) and not (np.isfinite(stretch) and stretch > 0):
        raise ValueError(
            f"`poisson_matrix_stretched`: stretch must be a positive finite number (the ratio "
            f"of consecutive cell heights), got {stretch!r}."
        )
    nx, ny = int(nx), int(ny)
    n = nx * ny
    # Structure (NumPy): per stored entry its kind (0 diagonal, 1 x-neighbour,
    # 2 y-neighbour), the cell row j of its matrix row, and for y-neighbours
    # the index of the horizontal face (the lower of the two cell rows).
    cell = np.arange(n).reshape(ny, nx)
    jj = np.repeat(np.arange(ny), nx).reshape(ny, nx)
    row_parts, col_parts = [cell.ravel()], [cell.ravel()]
    kind_parts, face_parts = [np.zeros(n, np.int8)], [jj.ravel()]
    for shift in (-1, 1):
        row_parts.append(cell.ravel())
        col_parts.append(np.roll(cell, -shift, axis=1).ravel())
        kind_parts.append(np.ones(n, np.int8))
        face_parts.append(jj.ravel())
    row_parts += [cell[:-1].ravel(), cell[1:].ravel()]
    col_parts += [cell[1:].ravel(), cell[:-1].ravel()]
    kind_parts += [np.full(nx * (ny - 1), 2, np.int8)] * 2
    face_parts += [jj[:-1].ravel(), jj[:-1].ravel()]
    entries = [np.concatenate(p) for p in (row_parts, col_parts, kind_parts, face_parts)]
    order = np.lexsort((entries[1], entries[0]))
    rows, cols, kinds, faces = (e[order] for e in entries)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int32)
    row_j = rows // nx

    # Values (JAX, from the traced-or-not stretch).
    dt = _dtype(dtype)
    s = jnp.asarray(stretch, dtype=dt)
    growth = s ** jnp.arange(ny, dtype=dt)
    h = growth / jnp.sum(growth)  # cell heights, summing to 1
    dx = jnp.asarray(1.0 / nx, dt)
    t_x = h / dx  # vertical faces: |face| = h_j, centre distance dx
    t_y = dx / (0.5 * (h[:-1] + h[1:]))  # horizontal faces between rows j and j+1
    t_y_below = jnp.concatenate([jnp.zeros(1, dt), t_y])  # face under row j
    t_y_above = jnp.concatenate([t_y, jnp.zeros(1, dt)])  # face over row j
    diagonal = 2 * t_x + t_y_below + t_y_above
    t_y_padded = jnp.concatenate([t_y, jnp.zeros(1, dt)])
    k = jnp.asarray(kinds)
    data = jnp.where(
        k == 0,
        diagonal[row_j],
        jnp.where(k == 1, -t_x[row_j], -t_y_padded[faces]),
    )
    volumes = jnp.tile(h[:, None] * dx, (1, nx)).reshape(n)
    if normalize:
        data = data / volumes[rows]
    A = _bcsr(jnp.asarray(indptr), jnp.asarray(cols.astype(np.int32)), data.astype(dt), n)
    return A, volumes.astype(dt)


def tridiagonal_operator(diagonal_value: Any = 2.0, dtype: Any = None):
    """Matrix-free [-1, d, -1] operator (a 'same'-mode 1-D convolution)."""
    import jax.numpy as jnp

    def apply(x):
        d = jnp.asarray(diagonal_value, dtype=x.dtype if dtype is None else dtype)
        kernel = jnp.stack([-jnp.ones_like(d), d, -jnp.ones_like(d)])
        return jnp.convolve(x, kernel, mode="same")

    return apply


def poisson_operator(skew: Any = 0.0, dtype: Any = None):
    """Matrix-free 2-D 5-point operator on a square grid (length n^2), by a 3x3
    convolution with zero (Dirichlet) fill. Convolution flips the kernel, so
    for skew != 0 this is the transpose of :func:`poisson_matrix`."""
    import jax
    import jax.numpy as jnp

    def apply(x):
        n = int(round(np.sqrt(x.shape[-1])))
        if n * n != x.shape[-1]:
            raise ValueError(
                f"`poisson_operator`: the input length {x.shape[-1]} is not a perfect square."
            )
        dt = x.dtype if dtype is None else dtype
        s = jnp.asarray(skew, dtype=dt)
        lo, up = -1.0 - s / 2, -1.0 + s / 2
        z = jnp.zeros((), dt)
        kernel = jnp.stack(
            [
                jnp.stack([z, up, z]),
                jnp.stack([up, jnp.asarray(4.0, dt), lo]),
                jnp.stack([z, lo, z]),
            ]
        )
        grid = x.reshape(1, 1, n, n)
        # The kernel is written as a convolution kernel (flipped relative to
        # the stencil), as in JAX-AMG; lax.conv correlates, so it is given
        # the flipped form directly.
        out = jax.lax.conv_general_dilated(
            grid, kernel.reshape(1, 1, 3, 3).astype(dt), (1, 1), "SAME"
        )
        return out.reshape(x.shape)

    return apply


def poisson3d_operator(robin: Any = 0.0, diagonal_value: Any = 6.0):
    """Matrix-free 3-D 7-point operator on an n^3 grid (n inferred), built from
    shifted adds; `robin` is added to the diagonal once per boundary face."""
    import jax.numpy as jnp

    def apply(x):
        n = int(round(x.shape[-1] ** (1 / 3)))
        if n**3 != x.shape[-1]:
            raise ValueError(f"`poisson3d_operator`: the input length {x.shape[-1]} is not a cube.")
        u = x.reshape(n, n, n)
        out = jnp.asarray(diagonal_value, x.dtype) * u
        for axis in range(3):
            pad = [(0, 0)] * 3
            pad[axis] = (1, 0)
            lower = jnp.pad(u, pad)[
                tuple(slice(0, n) if a == axis else slice(None) for a in range(3))
            ]
            pad[axis] = (0, 1)
            upper = jnp.pad(u, pad)[
                tuple(slice(1, n + 1) if a == axis else slice(None) for a in range(3))
            ]
            out = out - lower - upper
            faces = jnp.zeros(n, x.dtype).at[0].add(1).at[-1].add(1)
            shape = [1, 1, 1]
            shape[axis] = n
            out = out + jnp.asarray(robin, x.dtype) * faces.reshape(shape) * u
        return out.reshape(x.shape)

    return apply


def rhs_ones(n: int, dtype: Any = None):
    """A vector of `n` ones (float32 unless `dtype` is given)."""
    import jax.numpy as jnp

    n = _size("rhs_ones", "n", n)
    return jnp.ones(n, dtype=_dtype(dtype))


def rhs_linear(n: int, dtype: Any = None):
    """`n` values evenly spaced from 0 to 1 (float32 unless `dtype` is given)."""
    import jax.numpy as jnp

    n = _size("rhs_linear", "n", n)
    return jnp.linspace(0.0, 1.0, n, dtype=_dtype(dtype))


def rhs_random(n: int, seed: Any = 0, dtype: Any = None):
    """Normal samples from PRNGKey(seed); usable under jax.vmap over seeds."""
    import jax

    n = _size("rhs_random", "n", n)
    return jax.random.normal(jax.random.PRNGKey(seed), (n,), dtype=_dtype(dtype))


# ---- This rank's block of rows of the builders above (the MPI interface of
# solve), built without ever forming the global matrix. Each returns
# ``(A_local, row_start, row_end)``: a BCSR matrix of shape
# ``(n_local, n_global)`` with int32 row pointers and *global* int32 column
# indices, for the rows of the default partition
# (:func:`jaxamg.mpi_utils.get_partition_info`); values stay traceable and
# differentiable, as in the serial builders.


def _local_stencil(shape: tuple[int, ...], row_start: int, row_end: int):
    """The rows row_start:row_end of the (2d+1)-point stencil on a C-order
    grid: (indptr, global columns, kinds) with kinds as in
    ``_stencil_structure`` (0 diagonal, 2a+1 lower and 2a+2 upper
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
        k_list += [
            np.full(lower.sum(), 2 * axis + 1, np.int8),
            np.full(upper.sum(), 2 * axis + 2, np.int8),
        ]
    r, c, k = (np.concatenate(a) for a in (r_list, c_list, k_list))
    order = np.lexsort((c, r))
    r, c, k = r[order], c[order], k[order]
    counts = np.bincount(r - row_start, minlength=row_end - row_start)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    return indptr, c.astype(np.int32), k


def _bcsr_rows(indptr, indices, data, n_local: int, n_global: int):
    import jax.numpy as jnp
    from jax.experimental import sparse as jsparse

    return jsparse.BCSR(
        (data, jnp.asarray(indices), jnp.asarray(indptr)), shape=(n_local, n_global)
    )


def _check_grid(name: str, value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(
            f"`jaxamg.matrices.{where}`: `{name}` must be an integer >= 1, got {value!r}."
        )
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
    return _bcsr_rows(indptr, cols, data, n_local, n_global), rs, re


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
    return _bcsr_rows(indptr, cols, data.astype(dt), n_local, n_global), rs, re


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
        n_local,
        n_global,
        density=density,
        format="lil",
        random_state=np.random.default_rng(seed + rank),  # as in random_matrix
        dtype=np.float64,
    )
    local = np.arange(n_local)
    M[local, rs + local] = 0.0
    M = M.tocsr()
    M.eliminate_zeros()
    diagonal = np.asarray(abs(M).sum(axis=1)).ravel() + 1.0
    M = (M + sp.csr_matrix((diagonal, (local, rs + local)), shape=M.shape)).tocsr()
    M.sort_indices()
    return (
        _bcsr_rows(
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
    return partition_operator(tridiagonal_operator(diagonal_value, dtype), n_global, rank, nranks)


def poisson_operator_distributed(
    n: int, rank: int, nranks: int, skew: Any = 0.0, dtype: Any = None
):
    """The rows of :func:`jaxamg.matrices.poisson_operator` (n x n grid) owned
    by `rank`; see :func:`tridiagonal_operator_distributed`."""
    n = _check_grid("n", n, "poisson_operator_distributed")
    return partition_operator(poisson_operator(skew, dtype), n * n, rank, nranks)


def poisson3d_operator_distributed(
    n: int, rank: int, nranks: int, robin: Any = 0.0, diagonal_value: Any = 6.0
):
    """The rows of :func:`jaxamg.matrices.poisson3d_operator` (n^3 grid) owned
    by `rank`; see :func:`tridiagonal_operator_distributed`."""
    n = _check_grid("n", n, "poisson3d_operator_distributed")
    return partition_operator(poisson3d_operator(robin, diagonal_value), n**3, rank, nranks)
