"""Distributed gradients through ``jaxamg.solve`` match one process.

The loss is ``sum_ranks |x_local - t_local|^2`` for x = A(d)^-1 b on a
tridiagonal system whose diagonal value d is a parameter. Each rank
differentiates its local loss with respect to its slice of b, its local
matrix values and d; the adjoint solve is collective, and the matrix-value
gradient ``-lambda_i x_j`` needs x_j of neighbouring ranks' columns, which a
halo exchange brings (never the whole vector). The gradient of a replicated
parameter (d) is per-rank contribution: the ranks sum it with an allreduce.
Rank 0 compares everything with a single-process ``jax.grad``.

    mpirun -n 3 python demo/mpi_autodiff.py
    JAXAMG_DEMO_SMALL=1 mpirun -n 2 python demo/mpi_autodiff.py

Checks: relative differences below 1e-8 for the b-, values- and
d-gradients (tolerance 1e-12).
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="unknowns (default 2000)")
    args = parser.parse_args(argv)
    n = args.n or (200 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 2000)

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import sparse as jsparse
    from mpi4py import MPI

    import jaxamg
    from jaxamg import matrices, mpi_utils

    jax.config.update("jax_enable_x64", True)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    say = print if rank == 0 else (lambda *a, **k: None)
    # PCG preconditioned by one V-cycle of AMG with rank-local aggregates.
    config = {
        "config_version": 2,
        "solver": {
            "scope": "main",
            "solver": "PCG",
            "tolerance": 1e-12,
            "max_iters": 2000,
            "preconditioner": {
                "scope": "amg",
                "solver": "AMG",
                "algorithm": "AGGREGATION",
                "selector": "SIZE_2",
                "max_iters": 1,
                "coarse_solver": {"scope": "amg_coarse", "solver": "BLOCK_JACOBI", "max_iters": 50},
            },
        },
    }
    d0 = jnp.float64(2.5)
    b_global = matrices.rhs_random(n, seed=1, dtype=jnp.float64)
    t_global = matrices.rhs_linear(n, dtype=jnp.float64)
    rs, re, _ = mpi_utils.get_partition_info(n, rank, size)
    b, t = b_global[rs:re], t_global[rs:re]
    A0, _, _ = matrices.tridiagonal_matrix_distributed(n, rank, size, d0, dtype=jnp.float64)

    def local_loss(d, data, b):
        # The matrix values are data * d / d0: so both the values and d are inputs.
        A = jsparse.BCSR((data * d / d0, A0.indices, A0.indptr), shape=A0.shape)
        x, _ = jaxamg.solve(
            jaxamg.with_cache(A, is_symmetric=True),
            b,
            comm=comm,
            nglobal=n,
            partition_info=(rs, re),
            config=config,
        )
        return jnp.sum((x - t) ** 2)

    grad = jax.jit(jax.grad(local_loss, argnums=(0, 1, 2)))
    g_d, g_data, g_b = grad(d0, A0.data, b)
    g_d_total = comm.allreduce(float(g_d), op=MPI.SUM)
    g_b_global = mpi_utils.gather_vector(g_b, comm)
    g_data_global = mpi_utils.gather_vector(g_data, comm)
    say(f"{n} unknowns on {size} rank(s); dL/dd summed over ranks = {g_d_total:+.10e}")

    ok = True
    if rank == 0:
        A_serial = matrices.tridiagonal_matrix(n, d0, dtype=jnp.float64)

        def serial_loss(d, data, b):
            A = jsparse.BCSR(
                (data * d / d0, A_serial.indices, A_serial.indptr), shape=A_serial.shape
            )
            x, _ = jaxamg.solve(jaxamg.with_cache(A, is_symmetric=True), b, config=config)
            return jnp.sum((x - t_global) ** 2)

        s_d, s_data, s_b = jax.grad(serial_loss, argnums=(0, 1, 2))(d0, A_serial.data, b_global)

        def rel(a, b):
            a, b = np.asarray(a), np.asarray(b)
            return float(np.linalg.norm(a - b) / np.linalg.norm(b))

        diffs = {
            "dL/db": rel(g_b_global, s_b),
            "dL/dvalues": rel(g_data_global, s_data),
            "dL/dd": abs(g_d_total - float(s_d)) / abs(float(s_d)),
        }
        for name, value in diffs.items():
            say(f"{name}: relative difference to one process {value:.3e}")
        ok = max(diffs.values()) < 1e-8
    ok = comm.bcast(ok)
    say("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
