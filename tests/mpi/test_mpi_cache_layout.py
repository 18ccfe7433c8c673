"""The distributed solver cache across changes made on some ranks only.

A cached setup holds exchange plans that depend on every rank's rows and
pattern. These tests alternate between two layouts of one problem in which
some ranks' own blocks are identical: a rank whose block did not change
must not reuse a setup made for the other layout while the rest set up for
this one (their exchanges would no longer match: a hang or a wrong x).
Solutions and gradients are checked against SciPy on the global system.
"""

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402
from jax.experimental import sparse as jsparse  # noqa: E402
from mpi_testing import assert_all, config, local_block, needs_native_mpi, split_rows  # noqa: E402

import jaxamg  # noqa: E402

pytestmark = needs_native_mpi


def poisson_2d(nx, ny):
    """Dirichlet 5-point Laplacian: couplings reach nx rows away, across
    several rank boundaries."""
    Tx = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(nx, nx))
    Ty = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(ny, ny))
    A = sp.csr_matrix(sp.kron(sp.identity(ny), Tx) + sp.kron(Ty, sp.identity(nx)))
    A.sort_indices()
    return A


def gather(comm, local):
    return np.concatenate(comm.allgather(np.asarray(local)))


def relative(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


def solve_and_grad(comm, A_global, bounds, b_global, w_global, cfg):
    """x and the gradients of sum(w * x) w.r.t. the local values and b, as
    global arrays (values in the global CSR order)."""
    rs, re = bounds[comm.Get_rank()]
    n = A_global.shape[0]
    A = local_block(A_global, rs, re)
    w = jnp.asarray(w_global[rs:re])

    def loss(values, rhs):
        M = jsparse.BCSR((values, A.indices, A.indptr), shape=A.shape)
        x, info = jaxamg.solve(M, rhs, comm=comm, nglobal=n, partition_info=(rs, re), config=cfg)
        return jnp.sum(w * x), (x, info)

    (_, (x, info)), (g_data, g_b) = jax.value_and_grad(loss, argnums=(0, 1), has_aux=True)(
        A.data, jnp.asarray(b_global[rs:re])
    )
    return gather(comm, x), gather(comm, g_data), gather(comm, g_b), int(info["status"])


def check(comm, A_global, bounds, rng, cfg, label):
    n = A_global.shape[0]
    b, w = rng.standard_normal(n), rng.standard_normal(n)
    x, g_data, g_b, status = solve_and_grad(comm, A_global, bounds, b, w, cfg)
    x_ref = spla.spsolve(A_global.tocsc(), b)
    lam = spla.spsolve(A_global.T.tocsc(), w)
    coo_rows = np.repeat(np.arange(n), np.diff(A_global.indptr))
    g_data_ref = -lam[coo_rows] * x_ref[A_global.indices]
    assert_all(comm, status == 0, f"{label}: status {status}")
    assert_all(comm, relative(x, x_ref) <= 1e-8, f"{label}: x vs spsolve {relative(x, x_ref):.2e}")
    assert_all(comm, relative(g_b, lam) <= 1e-8, f"{label}: db vs spsolve")
    assert_all(comm, relative(g_data, g_data_ref) <= 1e-8, f"{label}: dA vs spsolve")


def test_partition_change_that_keeps_the_last_block(comm, rng):
    """The last rank's rows are the same in both partitions; every other
    rank's differ. Alternating equal, other, equal reuses the cache each
    time the layout comes back."""
    size = comm.Get_size()
    if size < 3:
        pytest.skip("two partitions sharing one rank's block, and differing, need 3 ranks")
    A_global = poisson_2d(9, 7)
    n = A_global.shape[0]
    equal = split_rows(n, size, rng, True)
    last_start = equal[-1][0]
    # Interior cuts that all differ from the equal partition's.
    candidates = np.setdiff1d(np.arange(1, last_start), [b[0] for b in equal[1:-1]])
    cuts = np.sort(rng.choice(candidates, size=size - 2, replace=False))
    bounds = [0, *map(int, cuts), last_start]
    other = [(bounds[r], bounds[r + 1]) for r in range(size - 1)] + [equal[-1]]
    assert other != equal and other[-1] == equal[-1]
    cfg = config(True, "amg")
    for step, partition in enumerate((equal, other, equal, other)):
        check(comm, A_global, partition, rng, cfg, f"step {step}")


def test_pattern_change_on_the_first_rank_only(comm, rng):
    """Rank 0's rows gain couplings to columns of the last rank; the last
    rank's own block stays the same, but what it must send changes."""
    size = comm.Get_size()
    if size < 2:
        pytest.skip("a change seen by another rank needs two ranks")
    A1 = poisson_2d(8, 6)
    n = A1.shape[0]
    bounds = split_rows(n, size, rng, True)
    (r0s, r0e), (ls, le) = bounds[0], bounds[-1]
    extra = sp.lil_matrix((n, n))
    for row in range(r0s, r0e, 3):
        extra[row, int(rng.integers(ls, le))] = -0.3
    A2 = sp.csr_matrix(A1 + extra)
    A2.sort_indices()
    assert np.array_equal(A1[ls:le].indices, A2[ls:le].indices)
    cfg = config(False, "amg")
    for step, A_global in enumerate((A1, A2, A1, A2)):
        check(comm, A_global, bounds, rng, cfg, f"step {step}")
