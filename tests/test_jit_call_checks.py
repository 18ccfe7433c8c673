"""What a jitted solve checks on every call, on systems large enough to span
the native checks' vector lanes and blocks (cpp/engine/core/finite_check.h):
a NaN or infinity anywhere in A's values, b or x0 gives FAILED; and a change
of any single value between calls (even one a NumPy buffer gets in place,
which may reach the handler at the same address) is seen: the new solution
is SciPy's, with one resetup per change and none without one."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from helpers import cache_entries
from jax.experimental import sparse as jsparse

import jaxamg

jax.config.update("jax_enable_x64", True)

N = 5000
# 1-D Poisson-like, diagonally dominant: CG converges in a few dozen iterations.
A = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(N, N), format="csr")
A.sort_indices()
NNZ = A.nnz
CONFIG = {"solver": "CG", "tolerance": 1e-10, "max_iters": 200}
# float32 cannot reach 1e-10; cond(A) = 9, so 1e-6 bounds the error near 1e-5.
CONFIG32 = dict(CONFIG, tolerance=1e-6)


pytestmark = pytest.mark.usefixtures("fresh_cache")


def jitted(dtype):
    indices = jnp.asarray(A.indices, dtype=jnp.int32)
    indptr = jnp.asarray(A.indptr, dtype=jnp.int32)

    @jax.jit
    def run(data, b, x0):
        M = jsparse.BCSR((data, indices, indptr), shape=(N, N))
        return jaxamg.solve(M, b, x0=x0, config=CONFIG32 if dtype == np.float32 else CONFIG)

    return lambda data, b, x0: run(data.astype(dtype), b.astype(dtype), x0.astype(dtype))


def rhs(seed=0):
    return np.random.default_rng(seed).normal(size=N)


# Positions at the edges of the 8-entry lanes and 2048-entry blocks, and the last.
VALUE_POSITIONS = [0, 7, 8, 2047, 2048, 8191, 8192, NNZ - 1]
VECTOR_POSITIONS = [0, 9, 2047, 2048, 4095, N - 1]
BAD = [np.nan, np.inf, -np.inf]


def with_bad(v, pos, bad):
    v = np.array(v, copy=True)
    v[pos] = bad
    return v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("where", ["A", "b", "x0"])
def test_any_non_finite_entry_gives_failed(dtype, where):
    solve = jitted(dtype)
    b = rhs()
    positions = VALUE_POSITIONS if where == "A" else VECTOR_POSITIONS
    for k, pos in enumerate(positions):
        bad = BAD[k % len(BAD)]
        args = {"A": A.data, "b": b, "x0": np.zeros(N)}
        args[where] = with_bad(args[where], pos, bad)
        x, info = solve(args["A"], args["b"], args["x0"])
        assert int(info["status"]) == jaxamg.AMGXStatus.FAILED, (where, pos, bad)
        assert int(info["iterations"]) == 0
        assert np.all(np.isnan(np.asarray(x)))
    # Good input on the same compiled program afterwards: SciPy's solution.
    x, info = solve(A.data, b, np.zeros(N))
    assert int(info["status"]) == jaxamg.AMGXStatus.SUCCESS
    assert_close(x, spla.spsolve(A.tocsc(), b), 1e-4 if dtype == np.float32 else 1e-8)


def assert_close(x, expected, bound):
    """Norm-wise relative error: the residual tolerance bounds it (times
    cond(A) = 9), not the error of each entry."""
    error = np.linalg.norm(np.asarray(x, dtype=np.float64) - expected) / np.linalg.norm(expected)
    assert error < bound, error


def solution_for(values, b):
    M = sp.csr_matrix((values, A.indices, A.indptr), shape=(N, N))
    return spla.spsolve(M.tocsc(), b)


def test_every_single_value_change_is_seen():
    solve = jitted(np.float64)
    b = rhs(1)
    values = A.data.copy()
    solve(values, b, np.zeros(N))
    changes = 0
    for pos in VALUE_POSITIONS:
        values = values.copy()
        values[pos] *= 1.25  # one entry, different in its last bits or more
        changes += 1
        x, info = solve(values, b, np.zeros(N))
        assert int(info["status"]) == jaxamg.AMGXStatus.SUCCESS
        assert_close(x, solution_for(values, b), 1e-8)
    # A change in the last bit of one value only.
    values = values.copy()
    values[NNZ // 2] = np.nextafter(values[NNZ // 2], np.inf)
    changes += 1
    x, _ = solve(values, b, np.zeros(N))
    assert_close(x, solution_for(values, b), 1e-8)
    # The same values again: served without any setup work. JAX dispatches
    # asynchronously, so wait for the call before reading the counters.
    jax.block_until_ready(solve(values, b, np.zeros(N)))
    (e,) = cache_entries()
    assert e["setups"] == 1 and e["resetups"] == changes and e["reuses"] == 1


def test_values_changed_in_place_in_one_numpy_buffer_are_seen():
    # On the CPU, JAX may hand the handler a NumPy array's own memory: the
    # same buffer (and address) with new contents must still count as new.
    indices = jnp.asarray(A.indices, dtype=jnp.int32)
    indptr = jnp.asarray(A.indptr, dtype=jnp.int32)
    f = jax.jit(
        lambda d, r: jaxamg.solve(
            jsparse.BCSR((d, indices, indptr), shape=(N, N)), r, config=CONFIG
        )[0]
    )
    raw = np.empty(NNZ + 8)
    start = (-raw.ctypes.data % 64) // 8  # 64-byte aligned: device_put may then alias it
    values = raw[start : start + NNZ]
    b = rhs(2)
    for scale in (1.0, 1.5, 1.5, 0.75):
        values[:] = A.data * scale
        values[3 * (N // 4)] += scale  # and one entry on its own
        x = f(jax.device_put(values), b)
        assert_close(x, solution_for(values.copy(), b), 1e-8)
    (e,) = cache_entries()
    assert e["setups"] == 1 and e["resetups"] == 2 and e["reuses"] == 1
