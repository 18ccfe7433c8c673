"""A 2-D Poisson problem solved across MPI ranks, checked against one process.

Every rank builds only its block of rows of the 5-point Laplacian
(``jaxamg.matrices.poisson_matrix_distributed``: global column indices) and
its slice of the right-hand side, then all ranks call ``jaxamg.solve`` with
the communicator. Rank 0 gathers the solution and compares it with a
single-process solve of the whole system.

    mpirun -n 2 python demo/mpi_poisson_problem.py          # 64 x 64 grid
    JAXAMG_DEMO_SMALL=1 mpirun -n 2 python demo/mpi_poisson_problem.py
    (as root: mpirun --allow-run-as-root --oversubscribe -n 2 ...)

Checks: status SUCCESS, the same iteration count and residual on every rank,
and ``|x_mpi - x_serial| / |x_serial| < 1e-8`` at tolerance 1e-12.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 64)")
    args = parser.parse_args(argv)
    n = args.n or (16 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 64)

    import time

    import jax
    import jax.numpy as jnp
    import numpy as np
    from mpi4py import MPI

    import jaxamg
    from jaxamg import matrices, mpi_utils

    jax.config.update("jax_enable_x64", True)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    say = print if rank == 0 else (lambda *a, **k: None)
    nglobal = n * n

    A_local, rs, re = matrices.poisson_matrix_distributed(n, n, rank, size, dtype=jnp.float64)
    b_global = matrices.rhs_random(nglobal, seed=0, dtype=jnp.float64)
    b_local, _, _ = mpi_utils.partition_vector(b_global, rank, size)
    say(f"{n} x {n} Poisson ({nglobal} unknowns) on {size} rank(s)")
    for r, rows in enumerate(comm.allgather((rs, re, int(A_local.nse)))):
        say(f"  rank {r}: rows {rows[0]}:{rows[1]}, {rows[2]} nonzeros")

    # PCG preconditioned by one V-cycle of AMG with rank-local aggregates.
    config = {
        "config_version": 2,
        "solver": {
            "scope": "main",
            "solver": "PCG",
            "tolerance": 1e-12,
            "max_iters": 500,
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
    start = time.perf_counter()
    x_local, info = jaxamg.solve(
        A_local, b_local, comm=comm, nglobal=nglobal, partition_info=(rs, re), config=config
    )
    seconds = time.perf_counter() - start
    same_info = len(set(comm.allgather((info["iterations"], info["residual"])))) == 1
    say(
        f"distributed: {info['status']}, {info['iterations']} iterations, residual "
        f"{info['residual']:.3e}, {seconds:.2f} s; the same info on every rank: {same_info}"
    )

    x = mpi_utils.gather_vector(x_local, comm)
    ok = True
    if rank == 0:
        x_serial, serial_info = jaxamg.solve(
            matrices.poisson_matrix(n, dtype=jnp.float64), b_global, config=config
        )
        diff = float(np.linalg.norm(np.asarray(x) - np.asarray(x_serial)))
        diff /= float(np.linalg.norm(np.asarray(x_serial)))
        say(f"single process: {serial_info['status']}, {serial_info['iterations']} iterations")
        say(f"|x_mpi - x_serial| / |x_serial| = {diff:.3e}")
        ok = diff < 1e-8 and info["status"] == jaxamg.AMGXStatus.SUCCESS and same_info
    ok = comm.bcast(ok)
    say("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
