"""Concurrent solves from several Python threads.

The native handler runs without the GIL, so solves from different threads
really overlap in the solver cache. Checked here:

* 4 threads, each on its own matrix (4 cache entries): every result equals
  the one computed sequentially (to 1e-12), and each entry counts exactly one
  setup and the rest as reuses or resetups;
* 4 threads on the SAME structure with different values (one shared cache
  entry, set up again under its lock by whichever thread comes next): each
  result equals its sequential counterpart;
* the same while a fifth thread keeps reading the cache info and clearing the
  cache (entries dropped while another thread holds them, counters read
  while a solve runs). A lock-order inversion between these once deadlocked;
  every thread must finish within the timeout.
"""

from __future__ import annotations

import threading

import jax
import numpy as np
import pytest
import scipy.sparse as sp
from helpers import random_nonsymmetric, random_spd

import jaxamg

jax.config.update("jax_enable_x64", True)

THREADS = 4
ROUNDS = 6
TIMEOUT_S = 300
# Block-Jacobi-preconditioned CG: its setup depends on the current values
# only, so a solve after a resetup from other values is the same computation
# as a fresh one (AMG's coarsening would be kept from the first values).
JACOBI_CG = {
    "solver": "PCG",
    "preconditioner": {"scope": "p", "solver": "BLOCK_JACOBI"},
    "tolerance": 1e-10,
    "max_iters": 500,
}


def run_threads(work, extra=None):
    """Runs work(t) in THREADS threads (and `extra()` in one more); returns
    the results, re-raising any thread's exception."""
    results: list = [None] * THREADS
    errors: list = []
    stop = threading.Event()

    def target(t):
        try:
            results[t] = work(t)
        except BaseException as e:  # reported to the test below
            errors.append(e)

    def background():
        try:
            while not stop.is_set():
                extra()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=target, args=(t,), daemon=True) for t in range(THREADS)]
    helper = threading.Thread(target=background, daemon=True) if extra else None
    if helper:
        helper.start()
    for th in threads:
        th.start()
    for th in threads:
        th.join(TIMEOUT_S)
    stop.set()
    if helper:
        helper.join(TIMEOUT_S)
    hung = [th for th in threads + ([helper] if helper else []) if th.is_alive()]
    assert not hung, f"{len(hung)} thread(s) still running after {TIMEOUT_S} s (deadlock?)"
    if errors:
        raise errors[0]
    return results


def solve_all(problems, config=None):
    out = []
    for A, b in problems:
        x, info = jaxamg.solve(A, b, config=config)
        assert info["status"] == jaxamg.AMGXStatus.SUCCESS
        out.append((np.asarray(x), info["iterations"]))
    return out


def assert_same(concurrent, sequential):
    for (x, its), (x_ref, its_ref) in zip(concurrent, sequential):
        assert its == its_ref
        np.testing.assert_allclose(x, x_ref, rtol=1e-12, atol=1e-14 * np.abs(x_ref).max())


def different_matrices(rng):
    """Per thread: its own matrix (own structure) and ROUNDS right-hand sides."""
    work = []
    for t in range(THREADS):
        n = 300 + 37 * t
        A = random_spd(n, 0.02, rng) if t % 2 == 0 else random_nonsymmetric(n, 0.02, rng)
        work.append([(A, rng.standard_normal(n)) for _ in range(ROUNDS)])
    return work


def shared_structure(rng):
    """Per thread: ROUNDS value sets on one common structure, and a b each."""
    base = random_spd(400, 0.02, rng)
    work = []
    for _ in range(THREADS):
        problems = []
        for _ in range(ROUNDS):
            A = base.copy()
            A.data = A.data * rng.uniform(0.5, 2.0)  # same pattern, new values
            A = A + sp.diags_array(rng.uniform(0.0, 1.0, 400))
            problems.append((sp.csr_array(A), rng.standard_normal(400)))
        work.append(problems)
    return work


def test_different_matrices_match_sequential(rng):
    work = different_matrices(rng)
    jaxamg.clear_solver_cache()
    sequential = [solve_all(problems) for problems in work]
    jaxamg.clear_solver_cache()
    concurrent = run_threads(lambda t: solve_all(work[t]))
    for t in range(THREADS):
        assert_same(concurrent[t], sequential[t])
    for problems, results in zip(work, concurrent):
        A, b = problems[0]
        np.testing.assert_allclose(
            results[0][0], sp.linalg.spsolve(sp.csc_matrix(A), b), rtol=1e-4, atol=1e-8
        )
    # One entry per matrix: set up once, then served from the cache.
    info = jaxamg.get_solver_cache_info()["single_gpu"]
    if info["capacity"] < THREADS:
        pytest.skip(f"JAXAMG_CACHE_SIZE={info['capacity']} holds fewer than {THREADS} entries")
    by_rows = {e["n_rows"]: e for e in info["entries"]}
    assert sorted(by_rows) == sorted(300 + 37 * t for t in range(THREADS))
    for entry in by_rows.values():
        assert entry["setups"] == 1
        assert entry["setups"] + entry["resetups"] + entry["reuses"] == ROUNDS


def test_shared_structure_matches_sequential(rng):
    work = shared_structure(rng)
    sequential = [solve_all(problems, JACOBI_CG) for problems in work]
    jaxamg.clear_solver_cache()
    total_before = jaxamg.get_solver_cache_info()["total_setups"]
    concurrent = run_threads(lambda t: solve_all(work[t], JACOBI_CG))
    for t in range(THREADS):
        assert_same(concurrent[t], sequential[t])
    info = jaxamg.get_solver_cache_info()
    if info["isolated_mode"]:
        pytest.skip("JAXAMG_CACHE_SIZE=0: no shared entry to inspect")
    entries = info["single_gpu"]["entries"]
    assert len(entries) == 1  # one structure, one config: one shared entry
    entry = entries[0]
    assert entry["setups"] == 1
    assert info["total_setups"] == total_before + 1
    assert entry["setups"] + entry["resetups"] + entry["reuses"] == THREADS * ROUNDS


@pytest.mark.parametrize("config", [None, JACOBI_CG], ids=["default-amg", "jacobi-cg"])
def test_solves_survive_concurrent_clears_and_info(rng, config):
    work = shared_structure(rng)
    sequential = [solve_all(problems, config) for problems in work]
    reads = []

    def meddle():
        info = jaxamg.get_solver_cache_info()
        for entry in info["single_gpu"]["entries"]:
            assert entry["setups"] >= 1
        reads.append(info["single_gpu"]["size"])
        jaxamg.clear_solver_cache()

    concurrent = run_threads(lambda t: solve_all(work[t], config), extra=meddle)
    assert reads, "the cache was never inspected during the solves"
    if config is JACOBI_CG:
        for t in range(THREADS):
            assert_same(concurrent[t], sequential[t])
    else:
        # AMG after a clear re-coarsens from other values than the sequential
        # run did: the same system to the solver's tolerance, not bit for bit.
        for t in range(THREADS):
            for (x, _), (A, b) in zip(concurrent[t], work[t]):
                reference = sp.linalg.spsolve(sp.csc_matrix(A), b)
                assert np.linalg.norm(x - reference) <= 1e-5 * np.linalg.norm(reference)
