"""A large random sparse system solved across MPI ranks.

Each rank draws only its own block of rows (default split of
``jaxamg.mpi_utils.get_partition_info``) from a NumPy generator seeded with
(seed, rank): uniform values at random global columns, the diagonal then set
to the row's absolute sum plus one, so the matrix is strictly diagonally
dominant (nonsingular, no grid behind it, structurally nonsymmetric; a
different number of ranks draws a different matrix). Only the small-size
check gathers the global matrix, on rank 0. All ranks call ``jaxamg.solve`` with the
communicator (FGMRES preconditioned by block Jacobi). The true residual
``|b - A x| / |b|`` is then computed from the rank-local rows: the pieces of
x are allgathered, and the squared norms summed with MPI allreduces.

The default is JAX-AMG's size, 100 000 x 100 000 at density 0.01 (1e8
nonzeros: 1.2 GB of matrix over all ranks, 3.7 GB peak per rank on 2
ranks, and 1-2 minutes on a small CPU machine); ``--density 0.001`` is ten
times smaller.

    mpirun -n 4 python demo/mpi_large_random_matrix.py
    mpirun -n 4 python demo/mpi_large_random_matrix.py --n 100000 --density 0.001
    JAXAMG_DEMO_SMALL=1 mpirun -n 2 python demo/mpi_large_random_matrix.py   # n = 2000

Checks: status SUCCESS with the same info on every rank, a true relative
residual below 1e-8, and for n <= 5000 agreement with SciPy's direct solve of
the gathered matrix to 1e-8.
"""

from __future__ import annotations

import argparse
import os
import sys


def local_rows(n, row_start, row_end, density, seed, rank):
    """Rows row_start:row_end of the random matrix as a SciPy CSR block of
    shape (n_local, n) with global columns, drawn from (seed, rank) only."""
    import numpy as np
    import scipy.sparse as sp

    rng = np.random.default_rng([seed, rank])
    n_local = row_end - row_start
    count = int(round(density * n_local * n))
    rows = rng.integers(0, n_local, count)
    cols = rng.integers(0, n, count)
    vals = rng.uniform(0.0, 1.0, count)
    off = cols != rows + row_start  # the diagonal is set below
    M = sp.csr_matrix((vals[off], (rows[off], cols[off])), shape=(n_local, n))  # sums repeats
    diagonal = np.asarray(abs(M).sum(axis=1)).ravel() + 1.0
    local = np.arange(n_local)
    M = (M + sp.csr_matrix((diagonal, (local, row_start + local)), shape=M.shape)).tocsr()
    M.sort_indices()
    return M


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="unknowns (default 100000)")
    parser.add_argument("--density", type=float, default=None, help="default 1e-2")
    args = parser.parse_args(argv)
    small = os.environ.get("JAXAMG_DEMO_SMALL") == "1"
    n = args.n or (2000 if small else 100_000)
    density = args.density or 1e-2

    import time

    import jax
    import jax.numpy as jnp
    import numpy as np
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla
    from jax.experimental import sparse as jsparse
    from mpi4py import MPI

    import jaxamg
    from jaxamg import mpi_utils

    jax.config.update("jax_enable_x64", True)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    say = print if rank == 0 else (lambda *a, **k: None)

    start = time.perf_counter()
    rs, re, _ = mpi_utils.get_partition_info(n, rank, size)
    M = local_rows(n, rs, re, density, seed=3, rank=rank)
    A_local = jsparse.BCSR(
        (jnp.asarray(M.data), jnp.asarray(M.indices, jnp.int32), jnp.asarray(M.indptr, jnp.int32)),
        shape=M.shape,
    )
    b_local = np.random.default_rng([4, rank]).standard_normal(re - rs)
    built = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    nnz = comm.allreduce(M.nnz, op=MPI.SUM)
    say(f"random {n:,} x {n:,} on {size} rank(s), {nnz:,} nonzeros, built in {built:.2f} s")

    config = {
        "config_version": 2,
        "solver": {
            "scope": "main",
            "solver": "FGMRES",
            "gmres_n_restart": 30,
            "tolerance": 1e-10,
            "max_iters": 300,
            "preconditioner": {"scope": "jacobi", "solver": "BLOCK_JACOBI", "max_iters": 1},
        },
    }
    comm.Barrier()
    start = time.perf_counter()
    x_local, info = jaxamg.solve(
        A_local, jnp.asarray(b_local), comm=comm, nglobal=n, partition_info=(rs, re), config=config
    )
    x_local = np.asarray(jax.block_until_ready(x_local))
    seconds = comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
    same_info = len(set(comm.allgather((info["iterations"], info["residual"])))) == 1

    # The true residual from the local rows: A_local needs the whole x (its
    # columns are global), the norms are sums of the ranks' squares.
    x_global = np.concatenate(comm.allgather(x_local))
    r2 = comm.allreduce(float(np.sum((b_local - M @ x_global) ** 2)), op=MPI.SUM)
    b2 = comm.allreduce(float(np.sum(b_local**2)), op=MPI.SUM)
    residual = float(np.sqrt(r2 / b2))
    say(
        f"FGMRES + block Jacobi: {seconds:.2f} s, {int(info['iterations'])} iterations, "
        f"status {jaxamg.AMGXStatus(int(info['status']))}; the same info on every rank: "
        f"{same_info}"
    )
    say(f"true relative residual |b - A x| / |b| = {residual:.3e}")
    ok = info["status"] == jaxamg.AMGXStatus.SUCCESS and same_info and residual < 1e-8

    if n <= 5000:
        # A reference from the whole matrix, gathered on rank 0 at this size.
        blocks, pieces = comm.gather(M, root=0), comm.gather(b_local, root=0)
        if rank == 0:
            A_global = sp.vstack(blocks).tocsc()
            reference = spla.spsolve(A_global, np.concatenate(pieces))
            error = float(np.linalg.norm(x_global - reference) / np.linalg.norm(reference))
            say(f"relative error against SciPy's direct solve = {error:.3e}")
            ok = ok and error < 1e-8
        ok = comm.bcast(ok)
    say("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
