"""Matrix Market input and output for the command-line interface.

Every failure raises :class:`ValueError` with a one-line message that names the
file, what was wrong and what to pass instead.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse as sp


def _read(path: str, what: str):
    p = Path(path)
    if not p.exists():
        raise ValueError(
            f"{what} file '{path}' does not exist; pass the path of a Matrix Market (.mtx) file"
        )
    if not p.is_file():
        raise ValueError(
            f"{what} path '{path}' is not a file; pass the path of a Matrix Market (.mtx) file"
        )
    try:
        m = scipy.io.mmread(str(p))
    except (ValueError, OSError, UnicodeDecodeError, IndexError, OverflowError) as e:
        reason = " ".join(str(e).split()) or type(e).__name__
        raise ValueError(
            f"{what} file '{path}' is not a valid Matrix Market file ({reason}); "
            "pass a '%%MatrixMarket matrix coordinate|array real|integer|pattern' file"
        ) from None
    if np.iscomplexobj(m):
        raise ValueError(
            f"{what} file '{path}' holds complex values; jaxamg solves real systems, "
            "pass a real matrix"
        )
    return m


def _first_nonfinite(values: np.ndarray) -> int:
    return int(np.flatnonzero(~np.isfinite(values))[0])


def read_matrix(path: str, what: str = "matrix") -> sp.csr_array:
    """A square sparse matrix in float64 CSR form with sorted, summed entries.

    Symmetric, skew-symmetric and Hermitian storage is expanded by the reader;
    duplicate coordinate entries are summed, as the Matrix Market format says.
    """
    m = _read(path, what)
    if sp.issparse(m):
        coo = sp.coo_array(m, dtype=np.float64)
    else:
        coo = sp.coo_array(np.asarray(m, dtype=np.float64))
    nrows, ncols = coo.shape
    if nrows != ncols:
        raise ValueError(
            f"{what} file '{path}' holds a {nrows} x {ncols} matrix; jaxamg solves square "
            "systems, pass a square matrix"
        )
    if nrows == 0:
        raise ValueError(
            f"{what} file '{path}' holds an empty (0 x 0) matrix; pass a matrix with at "
            "least one row"
        )
    if not np.all(np.isfinite(coo.data)):
        k = _first_nonfinite(coo.data)
        raise ValueError(
            f"{what} file '{path}': entry ({coo.row[k] + 1}, {coo.col[k] + 1}) is "
            f"{coo.data[k]}; pass finite values"
        )
    A = sp.csr_array(coo)
    A.sum_duplicates()
    A.sort_indices()
    return A


def read_vector(path: str, n: int, what: str) -> np.ndarray:
    """A float64 vector of length n from an n x 1 or 1 x n Matrix Market file."""
    m = _read(path, what)
    dense = m.toarray() if sp.issparse(m) else np.asarray(m)
    dense = np.asarray(dense, dtype=np.float64)
    if dense.ndim != 2 or min(dense.shape) != 1 or max(dense.shape) != n:
        shape = " x ".join(str(s) for s in dense.shape)
        raise ValueError(
            f"{what} file '{path}' holds a {shape} matrix but the matrix has {n} rows; "
            f"pass a vector with {n} entries ({n} x 1)"
        )
    v = dense.reshape(-1)
    if not np.all(np.isfinite(v)):
        k = _first_nonfinite(v)
        raise ValueError(f"{what} file '{path}': entry {k + 1} is {v[k]}; pass finite values")
    return v


def write_vector(path: str, x: np.ndarray, comment: str = "") -> None:
    """Writes x as an n x 1 Matrix Market array (every entry, in order)."""
    # An open file, because given a name mmwrite appends ".mtx" when the
    # name lacks it, writing somewhere the user did not ask for.
    try:
        with open(path, "wb") as f:
            scipy.io.mmwrite(f, np.asarray(x).reshape(-1, 1), comment=comment)
    except OSError as e:
        raise ValueError(
            f"cannot write the solution to '{path}' ({e.strerror or e}); pass a writable path"
        ) from None
