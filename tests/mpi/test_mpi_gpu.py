"""The MPI interface in JAX processes whose arrays live on a CUDA device (one
GPU per rank, or several ranks sharing one): the solve and its gradient run
through the CUDA registrations of the MPI targets (jaxamg._mpi_cuda: the
setup on the host, the forward and adjoint solves on the device). Results
against SciPy and the serial dense gradient.
Skipped without a GPU backend (the rest of tests/mpi then runs on the
CPU)."""

import jax
import jax.numpy as jnp  # noqa: E402
import numpy as np
import pytest
import scipy.sparse.linalg as spla
from mpi_testing import (  # noqa: E402
    assert_all,
    global_max,
    local_block,
    needs_native_mpi,
    nonsymmetric_matrix,
    split_rows,
)

import jaxamg  # noqa: E402


def _gpus():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


pytestmark = [
    needs_native_mpi,
    pytest.mark.gpu,
    pytest.mark.skipif(not _gpus(), reason="needs a JAX GPU backend"),
]

CONFIG = {
    "config_version": 2,
    "solver": {
        "scope": "main",
        "solver": "FGMRES",
        "gmres_n_restart": 30,
        "max_iters": 500,
        "tolerance": 1e-12,
        "convergence": "RELATIVE_INI",
        "monitor_residual": 1,
        "preconditioner": {
            "scope": "amg",
            "solver": "AMG",
            "algorithm": "AGGREGATION",
            "selector": "SIZE_2",
            "max_iters": 1,
            "coarse_solver": {"scope": "c", "solver": "BLOCK_JACOBI", "max_iters": 50},
        },
    },
}


def test_solve_and_gradient_with_arrays_on_the_gpu(comm, rng, monkeypatch):
    monkeypatch.setenv("JAXAMG_GPU_DIST", "device")
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 150
    A_global = nonsymmetric_matrix(n, rng)
    b_global = rng.standard_normal(n)
    w_global = rng.standard_normal(n)
    rs, re = split_rows(n, size, rng, equal=False)[rank]
    gpu = _gpus()[0]
    A = jax.device_put(local_block(A_global, rs, re), gpu)
    b = jax.device_put(jnp.asarray(b_global[rs:re]), gpu)
    w = jax.device_put(jnp.asarray(w_global[rs:re]), gpu)

    def loss(data, rhs):
        M = type(A)((data, A.indices, A.indptr), shape=A.shape)
        x, _ = jaxamg.solve(M, rhs, comm=comm, nglobal=n, partition_info=(rs, re), config=CONFIG)
        return jnp.dot(w, x), x

    (_, x), (g_data, g_b) = jax.jit(jax.value_and_grad(loss, argnums=(0, 1), has_aux=True))(
        A.data, b
    )
    assert_all(comm, next(iter(x.devices())).platform == "gpu", f"x on {x.devices()}")
    x_ref = spla.spsolve(A_global.tocsc(), b_global)
    err = global_max(comm, float(np.max(np.abs(np.asarray(x) - x_ref[rs:re]))))
    assert_all(comm, err <= 1e-8 * np.max(np.abs(x_ref)), f"x differs from spsolve by {err}")
    # Adjoint: A^T lam = w (the sum of all ranks' losses), dL/db = lam,
    # dL/dA_ij = -lam_i x_j on this rank's pattern.
    lam = spla.spsolve(A_global.T.tocsc(), w_global)
    local = A_global[rs:re].tocsr()
    local.sort_indices()
    rows = np.repeat(np.arange(rs, re), np.diff(local.indptr))
    g_ref = -lam[rows] * x_ref[local.indices]
    err_b = global_max(comm, float(np.max(np.abs(np.asarray(g_b) - lam[rs:re]))))
    err_a = global_max(comm, float(np.max(np.abs(np.asarray(g_data) - g_ref))))
    scale = np.max(np.abs(lam)) * (1 + np.max(np.abs(x_ref)))
    assert_all(comm, max(err_b, err_a) <= 1e-8 * scale, f"gradient errors {err_b}, {err_a}")
