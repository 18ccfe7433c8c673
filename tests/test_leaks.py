"""Resident memory stays flat over many solves and cache clears.

10,000 jitted solves of the 2-D Poisson matrix on a 16 x 16 grid, each with
new values (a random positive shift of the diagonal, so every call is a
resetup of the cached solver), and 1,000 calls of clear_solver_cache
interleaved with them (each followed by a full setup). Resident memory is
read from /proc/self/statm after a warm-up and at the end; it may grow by
less than 5%. A solver, hierarchy or FFI buffer leaked per call would add
tens of kilobytes each time, far beyond that.
"""

from __future__ import annotations

import gc
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax.experimental import sparse as jsparse

import jaxamg

jax.config.update("jax_enable_x64", True)

SOLVES = 10_000
CLEARS = 1_000
WARMUP = 500
GROWTH_LIMIT = 0.05

pytestmark = pytest.mark.skipif(
    not os.path.exists("/proc/self/statm"), reason="reads resident memory from /proc"
)


def resident_bytes() -> int:
    gc.collect()
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def poisson2d(m: int) -> sp.csr_matrix:
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    return sp.csr_matrix(sp.kron(sp.eye(m), T) + sp.kron(T, sp.eye(m)))


def test_resident_memory_is_flat_over_solves_and_clears(rng):
    L = poisson2d(16)
    n = L.shape[0]
    M = jsparse.BCSR.from_scipy_sparse(L)
    diagonal = np.asarray(L.indices == np.repeat(np.arange(n), np.diff(L.indptr)))
    base = np.asarray(M.data)

    @jax.jit
    def run(data, b):
        A = jsparse.BCSR((data, M.indices, M.indptr), shape=M.shape)
        x, info = jaxamg.solve(A, b)
        return x, info["status"]

    clear_every = SOLVES // CLEARS
    checked = 0

    def step(i: int) -> None:
        nonlocal checked
        shift = rng.uniform(0.01, 1.0, size=n)
        data = base.copy()
        data[diagonal] += shift
        b = rng.standard_normal(n)
        x, status = run(jnp.asarray(data), jnp.asarray(b))
        assert int(status) == jaxamg.AMGXStatus.SUCCESS, i
        if i % 997 == 0:  # now and then, the answer against SciPy
            A = sp.csr_matrix((data, L.indices, L.indptr), shape=L.shape)
            reference = sp.linalg.spsolve(A.tocsc(), b)
            # The default tolerance is 1e-6 on the relative residual.
            error = np.linalg.norm(np.asarray(x) - reference)
            assert error <= 1e-4 * np.linalg.norm(reference), i
            checked += 1
        if i % clear_every == clear_every - 1:
            jaxamg.clear_solver_cache()

    start = time.perf_counter()
    for i in range(WARMUP):
        step(i)
    before = resident_bytes()
    for i in range(WARMUP, SOLVES):
        step(i)
    after = resident_bytes()
    elapsed = time.perf_counter() - start
    growth = (after - before) / before
    print(
        f"\n{SOLVES} solves, {CLEARS} clears in {elapsed:.1f} s: resident "
        f"{before / 2**20:.1f} MiB after {WARMUP} warm-up solves, {after / 2**20:.1f} MiB at "
        f"the end ({100 * growth:+.2f}%)",
        file=sys.stderr,
    )
    assert checked >= 10
    assert jaxamg.get_solver_cache_info()["single_gpu"]["size"] <= 1
    assert growth < GROWTH_LIMIT, (before, after)
