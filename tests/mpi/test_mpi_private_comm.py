"""The engine's collectives never match the caller's: jaxamg communicates on a
private duplicate of the communicator it is given (cpp/engine/dist/
private_comm.h), so a jaxamg operation running on another thread (as JAX runs
asynchronous work) and a collective the caller issues meanwhile on the same
communicator each get the right answer, whatever order the ranks issue them in.

Each test forces the worst order: rank 0 starts the jaxamg operation first
and the caller's ``comm.Allreduce`` a moment later, every other rank the
other way round. Were both on one communicator, rank 0's first engine
collective would pair with the others' user Allreduce: wrong sums, an MPI
error or a hang (a hang fails through the short faulthandler deadline below).

The first jaxamg call on a communicator duplicates it, which is itself a
collective on the caller's communicator: the tests make that call before the
race, as a program makes its first solve before overlapping work with it.
"""

import faulthandler
import threading
import time

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402
from jax.experimental import sparse as jsparse  # noqa: E402
from mpi_testing import (  # noqa: E402
    assert_all,
    config,
    local_block,
    needs_native_mpi,
    spd_matrix,
    split_rows,
)

import jaxamg  # noqa: E402

pytestmark = needs_native_mpi

# How long the later side of each rank waits: far longer than one small
# collective takes, so the order of the two calls is the one intended.
DELAY = 1.0
# A hang (the calls matched each other) ends the run well before the suite's
# general deadline.
HANG_SECONDS = 120


def race(comm, engine_call):
    """Runs `engine_call()` on a thread while this thread does a user
    Allreduce on `comm`, rank 0 starting the engine call first and the other
    ranks the user call first. Returns (engine result, user result, the
    engine call's exception or None)."""
    from mpi4py import MPI

    rank = comm.Get_rank()
    out = {}

    def engine():
        if rank != 0:
            time.sleep(DELAY)
        try:
            out["engine"] = jax.block_until_ready(engine_call())
        except Exception as e:  # noqa: BLE001 - reported through the results
            out["error"] = e

    faulthandler.dump_traceback_later(HANG_SECONDS, exit=True)
    thread = threading.Thread(target=engine)
    thread.start()
    if rank == 0:
        time.sleep(DELAY)
    user = np.zeros(3)
    comm.Allreduce(np.array([1.0, rank, rank * rank], dtype=np.float64), user, op=MPI.SUM)
    thread.join()
    return out.get("engine"), user, out.get("error")


def expected_user(size):
    ranks = np.arange(size, dtype=np.float64)
    return np.array([size, ranks.sum(), (ranks**2).sum()])


def test_allreduce_custom_call_and_user_allreduce_do_not_match(comm):
    from jaxamg._dist.reduce import allreduce_sum

    size, rank, handle = comm.Get_size(), comm.Get_rank(), comm.py2f()
    if size < 2:
        pytest.skip("a race between ranks needs two ranks")
    x = jnp.arange(5, dtype=jnp.float64) + 100.0 * rank
    summed = jax.jit(lambda v: allreduce_sum(v, handle))
    expected = np.arange(5) * size + 100.0 * size * (size - 1) / 2
    # The first use (compiles, and duplicates the communicator) before the race.
    warm = np.asarray(summed(x))
    assert_all(comm, np.array_equal(warm, expected), f"warm-up sum {warm}")

    engine, user, error = race(comm, lambda: summed(x))
    assert_all(comm, error is None, f"the jaxamg call failed: {error!r}")
    ok_engine = np.array_equal(np.asarray(engine), expected)
    ok_user = np.array_equal(user, expected_user(size))
    assert_all(comm, ok_engine, f"jaxamg's sum {np.asarray(engine)}, expected {expected}")
    assert_all(comm, ok_user, f"the user's Allreduce gave {user}, expected {expected_user(size)}")


def test_solve_and_user_allreduce_do_not_match(comm, rng):
    size, rank = comm.Get_size(), comm.Get_rank()
    if size < 2:
        pytest.skip("a race between ranks needs two ranks")
    n = 80
    A_global = spd_matrix(n, rng)
    b_global = rng.standard_normal(n)
    reference = spla.spsolve(A_global.tocsc(), b_global)
    rs, re = split_rows(n, size, rng, equal=False)[rank]
    A = local_block(A_global, rs, re)
    b = jnp.asarray(b_global[rs:re])
    cfg = config(True)

    @jax.jit
    def solve(data, rhs):
        M = jsparse.BCSR((data, A.indices, A.indptr), shape=A.shape)
        return jaxamg.solve(M, rhs, comm=comm, nglobal=n, partition_info=(rs, re), config=cfg)[0]

    # Traced, compiled, set up and the communicator duplicated before the
    # race (tracing validates the input with host collectives on comm).
    warm = np.asarray(solve(A.data, b))

    engine, user, failure = race(comm, lambda: solve(A.data, b))
    assert_all(comm, failure is None, f"the jaxamg call failed: {failure!r}")
    engine = np.asarray(engine)
    error = np.linalg.norm(engine - reference[rs:re]) ** 2
    error = np.sqrt(sum(comm.allgather(error))) / np.linalg.norm(reference)
    assert_all(comm, error <= 1e-8, f"relative difference from spsolve {error:.3e}")
    assert_all(comm, np.array_equal(engine, warm), "the raced solve differs from the first one")
    assert_all(
        comm,
        np.array_equal(user, expected_user(size)),
        f"the user's Allreduce gave {user}, expected {expected_user(size)}",
    )


def test_communicator_reusing_a_freed_handle_gets_a_fresh_setup(comm, rng):
    """A solve on a communicator, which is then freed (and with it the
    engine's duplicate); a new communicator, usually given the freed one's
    handle, solves the same system. The cached setup made on the freed
    duplicate must not be reused (the cache is keyed by the duplicate, not by
    the handle): the second solve makes a second cache entry, and both
    solves equal SciPy's."""
    size, rank = comm.Get_size(), comm.Get_rank()
    n = 60
    A_global = spd_matrix(n, rng)
    b_global = rng.standard_normal(n)
    reference = spla.spsolve(A_global.tocsc(), b_global)
    rs, re = split_rows(n, size, rng, equal=True)[rank]
    A = local_block(A_global, rs, re)
    b = jnp.asarray(b_global[rs:re])
    cfg = config(True)
    jaxamg.clear_solver_cache()
    handles, errors = [], []
    for _ in range(2):
        mine = comm.Dup()
        handles.append(mine.py2f())
        x, _ = jaxamg.solve(A, b, comm=mine, nglobal=n, partition_info=(rs, re), config=cfg)
        d = np.linalg.norm(np.asarray(x) - reference[rs:re]) ** 2
        errors.append(np.sqrt(sum(comm.allgather(d))) / np.linalg.norm(reference))
        mine.Free()
    entries = [
        e for e in jaxamg.get_solver_cache_info()["mpi"]["entries"] if e["n_rows_global"] == n
    ]
    # The entry made on the freed duplicate is never used again; clearing it
    # is safe (a cached solver makes no MPI call when destroyed).
    jaxamg.clear_solver_cache()
    assert_all(comm, max(errors) <= 1e-8, f"relative differences from spsolve {errors}")
    assert_all(comm, len(entries) == 2, f"{len(entries)} cache entries for two communicators")
    # Open MPI hands the freed handle to the next communicator: the case
    # this test is about. Elsewhere the two checks above still hold.
    if not all(h[0] == h[1] for h in comm.allgather(handles)):
        pytest.skip(f"this MPI gave the second communicator another handle ({handles})")
