"""Distance-2 column colouring (`jaxamg.sparsity.get_column_coloring`).

Validity is checked independently of the implementation: for every row, the
colours of its distinct columns must be distinct, and exactly the columns
with an entry are coloured. Patterns come from SciPy (stencils built with
Kronecker products, random sparse matrices seeded per test).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp

from jaxamg.sparsity import get_column_coloring


def laplacian(m: int, dims: int) -> sp.coo_array:
    T = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(m, m))
    eye = sp.eye_array(m)
    if dims == 1:
        return sp.coo_array(T)
    if dims == 2:
        return sp.coo_array(sp.kron(T, eye) + sp.kron(eye, T))
    return sp.coo_array(
        sp.kron(sp.kron(T, eye), eye)
        + sp.kron(sp.kron(eye, T), eye)
        + sp.kron(sp.kron(eye, eye), T)
    )


def assert_valid(rows, cols, shape, colors, n_colors):
    rows, cols = np.asarray(rows), np.asarray(cols)
    colors = np.asarray(colors)
    assert colors.shape == (shape[1],)
    has_entry = np.zeros(shape[1], bool)
    has_entry[cols] = True
    assert np.all(colors[~has_entry] == -1)
    assert np.all((colors[has_entry] >= 0) & (colors[has_entry] < n_colors))
    if n_colors:
        assert set(np.unique(colors[has_entry]).tolist()) == set(range(n_colors))
    M = sp.csr_array((np.ones(rows.size), (rows, cols)), shape=shape)
    M.sum_duplicates()
    for i in range(shape[0]):
        row_cols = M.indices[M.indptr[i] : M.indptr[i + 1]]
        assert np.unique(colors[row_cols]).size == row_cols.size, f"row {i} repeats a colour"


def coloring_of(A):
    A = sp.coo_array(A)
    colors, n_colors = get_column_coloring(A.row, A.col, A.shape)
    assert_valid(A.row, A.col, A.shape, colors, n_colors)
    return colors, n_colors


@pytest.mark.parametrize("m", [10, 97])
def test_tridiagonal_needs_three_colors(m):
    assert coloring_of(laplacian(m, 1))[1] == 3


@pytest.mark.parametrize("m", [7, 30, 60, 100, 128])
def test_2d_five_point_stencil(m):
    _, n_colors = coloring_of(laplacian(m, 2))
    assert 5 <= n_colors <= 9  # 5 is the lower bound (the longest row)


@pytest.mark.parametrize("m", [6, 8, 16, 32])
def test_3d_seven_point_stencil(m):
    _, n_colors = coloring_of(laplacian(m, 3))
    assert 7 <= n_colors <= 14


def test_2d_stencil_with_a_million_unknowns_is_fast():
    A = laplacian(1000, 2)
    start = time.perf_counter()
    colors, n_colors = get_column_coloring(A.row, A.col, A.shape)
    assert time.perf_counter() - start < 10.0  # about 0.2 s; one pass over the entries
    assert n_colors <= 9
    # Validity without a per-row Python loop: each stencil neighbour differs.
    grid = np.asarray(colors).reshape(1000, 1000)
    for a, b in [
        (grid[:, 1:], grid[:, :-1]),
        (grid[1:], grid[:-1]),
        (grid[:, 2:], grid[:, :-2]),
        (grid[2:], grid[:-2]),
        (grid[1:, 1:], grid[:-1, :-1]),
        (grid[1:, :-1], grid[:-1, 1:]),
    ]:
        assert np.all(a != b)


def test_unstructured_pattern_uses_the_general_coloring(rng):
    # A 2-D stencil with its unknowns shuffled: no longer a few diagonals.
    A = sp.csr_array(laplacian(20, 2))
    perm = rng.permutation(A.shape[0])
    P = A[perm][:, perm]
    colors, n_colors = coloring_of(P)
    conflict_degree = int(np.diff(sp.csr_array((P.T @ P) != 0).indptr).max())
    assert 5 <= n_colors <= conflict_degree


@pytest.mark.parametrize("density", [0.002, 0.02, 0.2])
def test_random_rectangular_patterns(rng, density):
    A = sp.random_array((300, 500), density=density, rng=rng)
    coloring_of(A)


def test_dense_rows_need_more_than_64_colors():
    # Colours beyond one 64-bit word of the forbidden-colour masks.
    n = 90
    rows = np.repeat(np.arange(3), n)
    cols = np.tile(np.arange(n), 3)
    colors, n_colors = get_column_coloring(rows, cols, (3, n))
    assert_valid(rows, cols, (3, n), colors, n_colors)
    assert n_colors == n


def test_columns_without_entries_are_uncolored(rng):
    A = sp.coo_array(sp.random_array((40, 60), density=0.05, rng=rng))
    colors, n_colors = coloring_of(A)
    assert np.any(np.asarray(colors) == -1)


def test_duplicates_and_unsorted_input(rng):
    A = laplacian(8, 2)
    order = rng.permutation(A.nnz)
    rows = np.concatenate([A.row[order], A.row[:10]])
    cols = np.concatenate([A.col[order], A.col[:10]])
    colors, n_colors = get_column_coloring(rows, cols, A.shape)
    assert_valid(rows, cols, A.shape, colors, n_colors)
    ref_colors, ref_n = get_column_coloring(A.row, A.col, A.shape)
    assert n_colors == ref_n


def test_is_deterministic(rng):
    A = sp.coo_array(sp.random_array((200, 200), density=0.03, rng=rng))
    first = get_column_coloring(A.row, A.col, A.shape)
    second = get_column_coloring(A.row, A.col, A.shape)
    np.testing.assert_array_equal(first[0], second[0])
    assert first[1] == second[1]


def test_empty_pattern():
    colors, n_colors = get_column_coloring(np.zeros(0, int), np.zeros(0, int), (4, 6))
    np.testing.assert_array_equal(colors, -np.ones(6))
    assert n_colors == 0


def test_int_shape_is_square():
    A = laplacian(5, 1)
    colors, n_colors = get_column_coloring(A.row, A.col, 5)
    assert_valid(A.row, A.col, (5, 5), colors, n_colors)


def test_bad_shape_is_reported():
    with pytest.raises(
        ValueError, match=r"`jaxamg.get_column_coloring`: `shape` must be .* got \(3, 'a'\)"
    ):
        get_column_coloring(np.zeros(0, int), np.zeros(0, int), (3, "a"))
