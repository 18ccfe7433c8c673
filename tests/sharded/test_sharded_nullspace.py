"""Singular systems through the sharded interface: null spaces attached to
the local rows with with_cache, validated once by make_sharded_solver. The
solution equals the dense pseudo-inverse solution and the serial
`jaxamg.solve(..., nullspace=...)`; `rhs_inconsistency` is a per-rank array
of equal values; jit equals eager; gradients equal the pseudo-inverse
formulas."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax.experimental import sparse as jsparse
from mpi_testing import assert_all, config
from sharded_problems import local_block, partition

import jaxamg
from jaxamg import nullspace as ns

RTOL = 1e-8


def neumann_poisson(shape):
    """Pure-Neumann Laplacian on a grid: null(A) = null(A^T) = constants."""

    def neumann_1d(m):
        T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m)).tolil()
        T[0, 0] = T[m - 1, m - 1] = 1.0
        return T.tocsr()

    total = None
    for axis in range(len(shape)):
        factors = [sp.eye(m) for m in shape]
        factors[axis] = neumann_1d(shape[axis])
        term = functools.reduce(sp.kron, factors)
        total = term if total is None else total + term
    A = sp.csr_matrix(total)
    A.sort_indices()
    return A


def relative(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


def setup(comm, shape, unequal, seed):
    M = neumann_poisson(shape)
    n = M.shape[0]
    starts = partition(n, comm.size, unequal)
    rs, re = starts[comm.rank], starts[comm.rank + 1]
    rng = np.random.default_rng(seed)
    b_global = rng.standard_normal(n)  # inconsistent: it has a constant part
    b = jaxamg.make_sharded_vector(b_global[rs:re], global_size=n)
    local = jaxamg.with_cache(
        jsparse.BCSR.from_scipy_sparse(local_block(M, starts, comm.rank)),
        nullspace="constant",
        is_symmetric=True,
    )
    A = jaxamg.make_sharded_matrix(local, b)
    solver = jaxamg.make_sharded_solver(A, b, config=config(True, "amg"))
    return M, b_global, (rs, re), A, b, solver


def gather(comm, local):
    return np.concatenate(comm.allgather(np.asarray(local)))


@pytest.mark.parametrize("shape", [(9, 7), (5, 4, 4)], ids=["2d", "3d"])
@pytest.mark.parametrize("unequal", [False, True], ids=["equal", "unequal"])
def test_solution_equals_pinv_and_serial(comm, shape, unequal):
    M, b_global, (rs, re), A, b, solver = setup(comm, shape, unequal, seed=3)
    pinv = np.linalg.pinv(M.toarray(), rtol=1e-10)
    x, info = solver(b)
    x_global = gather(comm, solver.local_vector(x))
    assert_all(
        comm,
        relative(x_global, pinv @ b_global) <= RTOL,
        f"x vs pinv: {relative(x_global, pinv @ b_global):.2e}",
    )
    x_serial, info_serial = jaxamg.solve(
        jsparse.BCSR.from_scipy_sparse(M),
        jnp.asarray(b_global),
        config=config(True, "amg"),
        nullspace="constant",
        transpose_nullspace="constant",
    )
    assert_all(comm, relative(x_global, x_serial) <= RTOL, "x vs serial")
    assert_all(comm, abs(x_global.sum()) <= 1e-10 * np.linalg.norm(x_global), "1^T x")
    inconsistency = info["rhs_inconsistency"]
    values = np.asarray(inconsistency.addressable_shards[0].data)
    expected = abs(b_global.mean()) * np.sqrt(len(b_global)) / np.linalg.norm(b_global)
    assert_all(comm, inconsistency.shape == (comm.size,), f"shape {inconsistency.shape}")
    assert_all(comm, len(set(comm.allgather(float(values[0])))) == 1, "differs across ranks")
    assert_all(comm, abs(values[0] - expected) <= 1e-12, f"{values[0]} vs {expected}")
    assert_all(comm, abs(values[0] - info_serial["rhs_inconsistency"]) <= 1e-12, "vs serial")

    # jit equals eager, and the bases are not validated again while tracing.
    calls = []
    original = ns.validate_basis

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    ns.validate_basis = counting
    try:
        with jax.set_mesh(A.mesh):
            x_jit, info_jit = jax.jit(lambda d, r: solver(r, A=d))(A.data, b)
    finally:
        ns.validate_basis = original
    assert_all(comm, not calls, "a basis was validated during tracing")
    assert_all(
        comm, relative(solver.local_vector(x_jit), solver.local_vector(x)) <= 1e-12, "jit != eager"
    )
    jit_values = np.asarray(info_jit["rhs_inconsistency"].addressable_shards[0].data)
    assert_all(comm, abs(jit_values[0] - values[0]) <= 1e-14, "jit inconsistency")


@pytest.mark.parametrize("unequal", [False, True], ids=["equal", "unequal"])
def test_gradients_equal_pinv(comm, unequal):
    M, b_global, (rs, re), A, b, solver = setup(comm, (8, 6), unequal, seed=4)
    n = M.shape[0]
    w_global = np.random.default_rng(9).standard_normal(n)
    w = jaxamg.make_sharded_vector(w_global[rs:re], global_size=n)

    def loss(data, rhs, weights):
        x, _ = solver(rhs, A=data)
        return jnp.sum(x * weights)

    pinv = np.linalg.pinv(M.toarray(), rtol=1e-10)
    lam, x_ref = pinv.T @ w_global, pinv @ b_global
    # A perturbation of the edge weights keeps both null spaces (dA 1 = 0).
    rng = np.random.default_rng(11)
    upper = sp.triu(M, k=1).tocoo()
    off = sp.coo_matrix((-rng.standard_normal(upper.nnz), (upper.row, upper.col)), shape=M.shape)
    dA = sp.csr_matrix(off + off.T - sp.diags(np.asarray((off + off.T).sum(axis=1)).ravel()))
    dA = sp.csr_matrix(dA + 0 * M)
    dA.sort_indices()
    expected = -lam @ (dA @ x_ref)
    local_dA = dA.data[M.indptr[rs] : M.indptr[re]]
    with jax.set_mesh(A.mesh):
        eager = jax.grad(loss, argnums=(0, 1))(A.data, b, w)
        compiled = jax.jit(jax.grad(loss, argnums=(0, 1)))(A.data, b, w)
    for label, (g_data, g_b) in (("eager", eager), ("jit", compiled)):
        g_b_global = gather(comm, solver.local_vector(g_b))
        assert_all(comm, relative(g_b_global, lam) <= RTOL, f"{label} dL/db")
        value = sum(
            comm.allgather(float(np.dot(np.asarray(A.local_matrix(g_data).data), local_dA)))
        )
        assert_all(
            comm,
            abs(value - expected) <= 10 * RTOL * abs(expected),
            f"{label} <dA, dL/dA> {value} vs {expected}",
        )
