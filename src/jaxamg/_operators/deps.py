"""Dependence matrices: which input columns each element of a value reads.

A dependence matrix is a boolean SciPy CSR matrix with one row per element of
a value (flattened in C order) and one column per input element; entry (i, j)
says that element i may depend on input j. Boolean CSR arithmetic in SciPy is
logical (sums are OR), so products of maps never lose an entry to overflow.

Values are immutable: every function returns a new matrix or one of its
arguments unchanged, never a modified argument.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = [
    "Deps",
    "empty",
    "identity",
    "from_table",
    "from_pairs",
    "apply_map",
    "union",
    "broadcast_row",
    "keep_rows",
    "dense_rows",
    "stack",
    "to_pattern",
]


class Deps:
    """The dependence of one array value on the operator input.

    `identity` marks the untouched input (row i reads column i), which lets a
    map applied to it skip the sparse product.
    """

    __slots__ = ("mat", "identity")

    def __init__(self, mat, identity: bool = False):
        self.mat = mat
        self.identity = identity

    @property
    def size(self) -> int:
        return self.mat.shape[0]


def _csr(indptr, indices, shape):
    indices = np.asarray(indices)
    return sp.csr_matrix((np.ones(indices.size, dtype=bool), indices, indptr), shape=shape)


def empty(size: int, n_global: int) -> Deps:
    return Deps(_csr(np.zeros(size + 1, dtype=np.int64), np.zeros(0, np.int64), (size, n_global)))


def identity(n_global: int) -> Deps:
    return Deps(_csr(np.arange(n_global + 1), np.arange(n_global), (n_global, n_global)), True)


def from_table(table: np.ndarray, n_sources: int):
    """A 0/1 map from a table of source labels: row i of ``table`` (shape
    (n_out, k)) lists the sources element i reads, -1 for none."""
    table = np.asarray(table).reshape(table.shape[0], -1)
    valid = table >= 0
    indptr = np.zeros(table.shape[0] + 1, dtype=np.int64)
    np.cumsum(valid.sum(axis=1), out=indptr[1:])
    return _csr(indptr, table[valid], (table.shape[0], n_sources))


def from_pairs(dst: np.ndarray, src: np.ndarray, n_out: int, n_sources: int):
    """A 0/1 map with an entry (dst[k], src[k]) for every k."""
    m = sp.coo_matrix(
        (np.ones(dst.size, dtype=bool), (np.asarray(dst, np.int64), np.asarray(src, np.int64))),
        shape=(n_out, n_sources),
    )
    return m.tocsr()


def apply_map(element_map, source: Deps) -> Deps:
    """Dependence of a value whose element i reads the source elements listed in
    row i of ``element_map`` (a 0/1 matrix, n_out x source.size)."""
    if source.identity:
        return Deps(element_map.tocsr())
    return Deps((element_map @ source.mat).tocsr())


def union(parts: list[Deps], size: int, n_global: int) -> Deps:
    """Element-wise union of dependences of equal size."""
    parts = [p for p in parts if p.mat.nnz]
    if not parts:
        return empty(size, n_global)
    if len(parts) == 1:
        return parts[0]
    mat = parts[0].mat
    for p in parts[1:]:
        mat = mat + p.mat
    return Deps(mat.tocsr())


def broadcast_row(deps: Deps, size: int) -> Deps:
    """The single row of a scalar's dependence, repeated ``size`` times."""
    row = deps.mat.indices[deps.mat.indptr[0] : deps.mat.indptr[1]]
    return dense_rows(row, size, deps.mat.shape[1])


def keep_rows(deps: Deps, keep: np.ndarray) -> Deps:
    """Clears the rows where ``keep`` is False."""
    if keep.all():
        return deps
    mat = sp.diags(keep.astype(bool), format="csr", dtype=bool) @ deps.mat
    mat.eliminate_zeros()
    return Deps(mat)


def dense_rows(columns: np.ndarray, size: int, n_global: int) -> Deps:
    """``size`` rows that each read all of ``columns``."""
    columns = np.asarray(columns, dtype=np.int64)
    indptr = np.arange(size + 1, dtype=np.int64) * columns.size
    return Deps(_csr(indptr, np.tile(columns, size), (size, n_global)))


def stack(parts: list[Deps]) -> Deps:
    """Rows of the parts one after another (the dependence of a concatenation)."""
    if len(parts) == 1:
        return parts[0]
    return Deps(sp.vstack([p.mat for p in parts], format="csr"))


def columns_of(parts: list[Deps]) -> np.ndarray:
    """The sorted input columns any of ``parts`` reads."""
    cols = [p.mat.indices for p in parts if p.mat.nnz]
    if not cols:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.concatenate(cols))


def to_pattern(deps: Deps) -> tuple[np.ndarray, np.ndarray]:
    """(rows, cols) of the nonzeros, sorted row-major, duplicates removed."""
    mat = deps.mat.tocsr(copy=True)
    mat.sum_duplicates()
    mat.eliminate_zeros()
    rows = np.repeat(np.arange(mat.shape[0], dtype=np.int64), np.diff(mat.indptr))
    return rows, mat.indices.astype(np.int64)
