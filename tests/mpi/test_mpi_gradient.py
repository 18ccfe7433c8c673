"""Distributed gradients equal the serial ones: each rank's gradient with
respect to its local b and local matrix values is the matching slice of the
serial jax.grad of the summed loss (and of SciPy's adjoint formula)."""

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402
from jax.experimental import sparse as jsparse  # noqa: E402
from mpi_testing import (  # noqa: E402
    assert_all,
    block_matrix,
    config,
    local_block,
    needs_native_mpi,
    nonsymmetric_matrix,
    relative,
    spd_matrix,
    split_rows,
)

import jaxamg  # noqa: E402
from jaxamg import matrices  # noqa: E402

pytestmark = needs_native_mpi


@pytest.mark.parametrize("kind", ["symmetric", "nonsymmetric", "block-nonsym"])
def test_gradients_equal_serial_and_scipy(comm, rng, kind):
    rank, size = comm.Get_rank(), comm.Get_size()
    block_dim = 1
    if kind == "block-nonsym":
        m = 30
        A_global = block_matrix(m, rng, symmetric=False)
        block_dim = 2
        bounds = [(2 * a, 2 * b) for a, b in split_rows(m, size, rng, equal=False)]
    else:
        n = 80
        A_global = spd_matrix(n, rng) if kind == "symmetric" else nonsymmetric_matrix(n, rng)
        bounds = split_rows(n, size, rng, equal=False)
    A_global.sort_indices()
    n = A_global.shape[0]
    b_global = rng.standard_normal(n)
    w_global = rng.standard_normal(n)
    rs, re = bounds[rank]
    A = local_block(A_global, rs, re)
    if kind == "symmetric":
        jaxamg.with_cache(A, is_symmetric=True)
    cfg = config(kind == "symmetric")
    w = jnp.asarray(w_global[rs:re])

    def local_loss(data, b):
        M = jsparse.BCSR((data, A.indices, A.indptr), shape=A.shape)
        if kind == "symmetric":
            jaxamg.with_cache(M, is_symmetric=True)
        x, _ = jaxamg.solve(
            M, b, comm=comm, nglobal=n, partition_info=(rs, re), block_dim=block_dim, config=cfg
        )
        return jnp.sum(w * x)

    b = jnp.asarray(b_global[rs:re])
    g_data, g_b = jax.grad(local_loss, argnums=(0, 1))(A.data, b)
    g_data_jit, g_b_jit = jax.jit(jax.grad(local_loss, argnums=(0, 1)))(A.data, b)

    # Serial jax.grad of the summed loss w . x on the global system.
    G = jsparse.BCSR.from_scipy_sparse(A_global)

    def serial_loss(data, b):
        M = jsparse.BCSR((data, G.indices, G.indptr), shape=G.shape)
        x, _ = jaxamg.solve(M, b, block_dim=block_dim, config=cfg)
        return jnp.sum(jnp.asarray(w_global) * x)

    s_data, s_b = jax.grad(serial_loss, argnums=(0, 1))(G.data, jnp.asarray(b_global))
    lo, hi = int(A_global.indptr[rs]), int(A_global.indptr[re])

    # SciPy: lambda = A^-T w, dL/dA_ij = -lambda_i x_j.
    x_ref = spla.spsolve(A_global.tocsc(), b_global)
    lam = spla.spsolve(A_global.T.tocsc(), w_global)
    rows = np.repeat(np.arange(n), np.diff(A_global.indptr))
    scipy_data = -lam[rows] * x_ref[A_global.indices]

    checks = {
        "b vs serial": relative(
            comm, np.asarray(g_b) - np.asarray(s_b)[rs:re], np.asarray(s_b)[rs:re]
        ),
        "data vs serial": relative(
            comm, np.asarray(g_data) - np.asarray(s_data)[lo:hi], np.asarray(s_data)[lo:hi]
        ),
        "b vs scipy": relative(comm, np.asarray(g_b) - lam[rs:re], lam[rs:re]),
        "data vs scipy": relative(comm, np.asarray(g_data) - scipy_data[lo:hi], scipy_data[lo:hi]),
        "jit b": relative(comm, np.asarray(g_b_jit) - np.asarray(g_b), np.asarray(g_b)),
        "jit data": relative(comm, np.asarray(g_data_jit) - np.asarray(g_data), np.asarray(g_data)),
    }
    worst = max(checks.values())
    assert_all(comm, worst <= 1e-8, f"{kind}: {checks}")


def test_replicated_parameter_gradient_sums_to_the_serial_one(comm):
    """d(total loss)/d(diagonal value): each rank's share, allreduced, equals
    the serial gradient through the global builder."""
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 40
    cfg = config(True)
    rs, re, _ = jaxamg.mpi_utils.get_partition_info(n, rank, size)
    target = jnp.linspace(0.0, 1.0, n)

    def local_loss(d):
        A, _, _ = matrices.tridiagonal_matrix_distributed(n, rank, size, d, dtype=jnp.float64)
        x, _ = jaxamg.solve(
            jaxamg.with_cache(A, is_symmetric=True),
            jnp.ones(re - rs),
            comm=comm,
            nglobal=n,
            partition_info=(rs, re),
            config=cfg,
        )
        return jnp.sum((x - target[rs:re]) ** 2)

    def serial_loss(d):
        A = matrices.tridiagonal_matrix(n, d, dtype=jnp.float64)
        x, _ = jaxamg.solve(A, jnp.ones(n), config=cfg)
        return jnp.sum((x - target) ** 2)

    share = float(jax.grad(local_loss)(jnp.float64(3.0)))
    total = sum(comm.allgather(share))
    serial = float(jax.grad(serial_loss)(jnp.float64(3.0)))
    assert_all(comm, abs(total - serial) <= 1e-8 * abs(serial), f"{total} vs {serial}")


def test_gradient_of_a_loss_on_the_gathered_solution(comm, rng):
    """make_allgather_vector: a loss on the global x, the same on every rank.
    The allgather's VJP keeps this rank's slice of the cotangent, so the
    ranks together differentiate one copy of the loss: rank r gets rows
    rs:re of A^-T x."""
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 50
    A_global = spd_matrix(n, rng)
    b_global = rng.standard_normal(n)
    bounds = split_rows(n, size, rng, equal=True)
    rs, re = bounds[rank]
    A = jaxamg.with_cache(local_block(A_global, rs, re), is_symmetric=True)
    allgather = jaxamg.mpi_utils.make_allgather_vector(comm, (rs, re), n, backend="host")
    cfg = config(True)

    def loss(b):
        x, _ = jaxamg.solve(A, b, comm=comm, nglobal=n, partition_info=(rs, re), config=cfg)
        return 0.5 * jnp.sum(allgather(x) ** 2)

    g = np.asarray(jax.grad(loss)(jnp.asarray(b_global[rs:re])))
    x_ref = spla.spsolve(A_global.tocsc(), b_global)
    expected = spla.spsolve(A_global.T.tocsc(), x_ref)[rs:re]
    assert_all(comm, relative(comm, g - expected, expected) <= 1e-8)
