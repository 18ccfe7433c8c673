"""A 2-D Poisson problem split across MPI ranks automatically, checked
against SciPy's direct solve.

Every rank builds the whole 5-point Laplacian as a SciPy matrix and lets
``jaxamg.mpi_utils.partition_csr_matrix`` cut out its contiguous block of
rows (global column indices, the default split of
``jaxamg.mpi_utils.get_partition_info``), and ``partition_vector`` its slice
of the right-hand side; no row ranges are worked out by hand. All ranks then
call ``jaxamg.solve`` with the communicator and the returned row range. Rank
0 gathers the solution and compares it with ``scipy.sparse.linalg.spsolve``
of the whole system. (Building the global matrix on every rank is the easy
way for moderate sizes; for large ones each rank should build only its rows,
as ``demo/mpi_poisson_problem.py`` does.)

    mpirun -n 4 python demo/mpi_poisson_problem_auto_partition.py     # 64 x 64 grid
    JAXAMG_DEMO_SMALL=1 mpirun -n 2 python demo/mpi_poisson_problem_auto_partition.py   # 16 x 16
    (as root: mpirun --allow-run-as-root --oversubscribe -n 2 ...)

Checks: the blocks cover every row and nonzero once, status SUCCESS, the
same iteration count and residual on every rank, and
``|x_mpi - x_scipy| / |x_scipy| < 1e-8`` at tolerance 1e-12.
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
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    from mpi4py import MPI

    import jaxamg
    from jaxamg import mpi_utils

    jax.config.update("jax_enable_x64", True)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    say = print if rank == 0 else (lambda *a, **k: None)
    nglobal = n * n

    # The same global system on every rank: the Laplacian from SciPy (not
    # from jaxamg, so the reference below shares nothing with the solver)
    # and a right-hand side from one seed.
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    A_global = sp.csr_matrix(sp.kronsum(T, T))
    b_global = np.random.default_rng(0).standard_normal(nglobal)

    A_local, rs, re = mpi_utils.partition_csr_matrix(A_global, rank, size)
    b_local, _, _ = mpi_utils.partition_vector(jnp.asarray(b_global), rank, size)
    say(f"{n} x {n} Poisson ({nglobal} unknowns, {A_global.nnz} nonzeros) on {size} rank(s)")
    blocks = comm.allgather((rs, re, int(A_local.nse)))
    for r, (start, end, nnz) in enumerate(blocks):
        say(f"  rank {r}: rows {start}:{end}, {nnz} nonzeros")
    # The automatic split must tile the rows in rank order and keep every nonzero.
    starts = [0] + [end for _, end, _ in blocks[:-1]]
    covered = [s for s, _, _ in blocks] == starts and blocks[-1][1] == nglobal
    covered = covered and sum(nnz for _, _, nnz in blocks) == A_global.nnz

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
        x_scipy = spla.spsolve(A_global.tocsc(), b_global)
        diff = float(np.linalg.norm(np.asarray(x) - x_scipy) / np.linalg.norm(x_scipy))
        say(f"|x_mpi - x_scipy| / |x_scipy| = {diff:.3e}")
        ok = diff < 1e-8 and info["status"] == jaxamg.AMGXStatus.SUCCESS
    ok = comm.bcast(ok) and same_info and covered
    say("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
