"""EngineSolver.setup(..., copy=False): the engine reads the caller's arrays
in place instead of copying them.

Each borrowed solve is compared bit for bit with the same solve on a copy,
and with scipy.sparse.linalg.spsolve; the caller's arrays must never change
and must stay alive exactly as long as the engine reads them.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import scipy.sparse.linalg as spla
from helpers import amg_config, krylov_config, poisson2d, random_nonsymmetric, relative_error

from jaxamg import _engine


def arrays(A):
    return A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.copy()


def both(config: str, A, dtype: str = "float64"):
    """A solver on a copy and one on borrowed arrays (returned with them)."""
    ip, ix, d = arrays(A)
    copied = _engine.EngineSolver(config, dtype)
    copied.setup(ip, ix, d.astype(dtype))
    borrowed = _engine.EngineSolver(config, dtype)
    held = (ip.copy(), ix.copy(), d.astype(dtype))
    borrowed.setup(*held, copy=False)
    return copied, borrowed, held


@pytest.mark.parametrize(
    "config, make",
    [
        (amg_config(1e-10), lambda rng: poisson2d(30)),
        (krylov_config("FGMRES", 1e-10), lambda rng: random_nonsymmetric(300, 0.02, rng)),
    ],
    ids=["pcg-amg", "fgmres"],
)
def test_borrowed_matrix_gives_the_copied_solution(rng, config, make):
    A = make(rng)
    b = rng.standard_normal(A.shape[0])
    copied, borrowed, held = both(config, A)
    before = [h.copy() for h in held]
    assert borrowed.borrows_matrix and not copied.borrows_matrix
    x_copy, info_copy = copied.solve(b)
    x, info = borrowed.solve(b)
    assert np.array_equal(x, x_copy)
    assert info["iterations"] == info_copy["iterations"]
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) < 1e-7
    xt, _ = borrowed.solve(b, transpose=True)
    assert np.array_equal(xt, copied.solve(b, transpose=True)[0])
    assert relative_error(xt, spla.spsolve(A.T.tocsc(), b)) < 1e-7
    # New values go to the engine's own copy, never into the caller's arrays.
    for method in ("replace_values", "resetup"):
        new = held[2] * 1.5
        getattr(copied, method)(new)
        getattr(borrowed, method)(new)
        assert np.array_equal(borrowed.solve(b)[0], copied.solve(b)[0])
    for h, h0 in zip(held, before):
        assert np.array_equal(h, h0)


def test_unsorted_input_is_copied(rng):
    A = poisson2d(12)
    b = rng.standard_normal(A.shape[0])
    ip, ix, d = arrays(A)
    # Reverse the columns of every row: the same matrix, not canonical.
    for i in range(A.shape[0]):
        ix[ip[i] : ip[i + 1]] = ix[ip[i] : ip[i + 1]][::-1].copy()
        d[ip[i] : ip[i + 1]] = d[ip[i] : ip[i + 1]][::-1].copy()
    s = _engine.EngineSolver(amg_config(1e-10), "float64")
    s.setup(ip, ix, d, copy=False)
    assert not s.borrows_matrix
    x, _ = s.solve(b)
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) < 1e-7


def test_borrowed_arrays_live_as_long_as_the_engine_reads_them(rng):
    A = poisson2d(16)
    b = rng.standard_normal(A.shape[0])
    s = _engine.EngineSolver(amg_config(1e-10), "float64")
    ip, ix, d = arrays(A)
    watch = [weakref.ref(a) for a in (ip, ix, d)]
    s.setup(ip, ix, d, copy=False)
    del ip, ix, d
    gc.collect()
    assert all(w() is not None for w in watch)
    x, _ = s.solve(b)
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) < 1e-7
    # A new setup (run without the GIL) lets them go.
    s.setup(*arrays(A))
    gc.collect()
    assert all(w() is None for w in watch)
    assert np.array_equal(s.solve(b)[0], x)
    # So does the solver's end.
    ip, ix, d = arrays(A)
    watch = [weakref.ref(a) for a in (ip, ix, d)]
    s.setup(ip, ix, d, copy=False)
    del ip, ix, d, s
    gc.collect()
    assert all(w() is None for w in watch)


def test_read_only_and_float32_arrays_can_be_borrowed(rng):
    A = poisson2d(10)
    b = rng.standard_normal(A.shape[0])
    ip, ix, d = arrays(A)
    d = d.astype(np.float32)
    for a in (ip, ix, d):
        a.flags.writeable = False
    s = _engine.EngineSolver(amg_config(1e-5), "float32")
    s.setup(ip, ix, d, copy=False)
    assert s.borrows_matrix
    x, _ = s.solve(b.astype(np.float32))
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) < 1e-3


def test_borrowing_checks_dtypes_like_a_copy(rng):
    A = poisson2d(6)
    s = _engine.EngineSolver(amg_config(1e-10), "float64")
    with pytest.raises(TypeError, match="`indices` has dtype int64 but must be int32"):
        s.setup(A.indptr.astype(np.int32), A.indices.astype(np.int64), A.data, copy=False)
    assert not s.borrows_matrix
