"""Distributed gradients of a structurally nonsymmetric system.

Each rank builds its block of a random, structurally nonsymmetric, diagonally
dominant matrix (``random_matrix_distributed``) plus a one-sided coupling to
the next row, so the ranks' blocks are linked. The solver is FGMRES
preconditioned by AMG at tolerance 1e-12. The reverse pass needs A^T: the
engine solves the transposed system on the forward setup (the matrix is never
gathered), then the values gradient ``-lambda_i x_j`` takes the neighbouring
ranks' x_j from a halo exchange. Rank 0 compares the gathered gradients with
a single-process ``jax.grad`` of the same loss on the whole matrix.

    mpirun -n 2 python demo/mpi_nonsymmetric_matrix_autodiff.py
    JAXAMG_DEMO_SMALL=1 mpirun -n 2 python demo/mpi_nonsymmetric_matrix_autodiff.py

Checks: relative differences below 1e-8 for the b- and values-gradients.
"""

from __future__ import annotations

import argparse
import os
import sys


def coupled_block(n, rank, size, density):
    """This rank's rows of R + S, R from random_matrix_distributed (seed
    0 + rank) and S with -0.5 on the superdiagonal (row i couples to i+1)."""
    import jax.numpy as jnp
    import numpy as np
    import scipy.sparse as sp

    from jaxamg import matrices

    R, rs, re = matrices.random_matrix_distributed(n, rank, size, density, dtype=jnp.float64)
    M = sp.csr_matrix(
        (np.asarray(R.data), np.asarray(R.indices), np.asarray(R.indptr)), shape=R.shape
    )
    rows = np.arange(re - rs)
    keep = rs + rows + 1 < n
    S = sp.csr_matrix((np.full(keep.sum(), -0.5), (rows[keep], rs + rows[keep] + 1)), shape=M.shape)
    D = sp.csr_matrix((np.full(re - rs, 0.5), (rows, rs + rows)), shape=M.shape)
    M = (M + S + D).tocsr()  # +0.5 on the diagonal keeps it dominant
    M.sort_indices()
    return M, rs, re


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="unknowns (default 3000)")
    args = parser.parse_args(argv)
    small = os.environ.get("JAXAMG_DEMO_SMALL") == "1"
    n = args.n or (300 if small else 3000)
    density = 5.0 / n

    import jax
    import jax.numpy as jnp
    import numpy as np
    import scipy.sparse as sp
    from jax.experimental import sparse as jsparse
    from mpi4py import MPI

    import jaxamg
    from jaxamg import mpi_utils

    jax.config.update("jax_enable_x64", True)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    say = print if rank == 0 else (lambda *a, **k: None)
    # FGMRES preconditioned by one V-cycle of AMG with rank-local aggregates.
    config = {
        "config_version": 2,
        "solver": {
            "scope": "main",
            "solver": "FGMRES",
            "tolerance": 1e-12,
            "max_iters": 1000,
            "gmres_n_restart": 40,
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

    M, rs, re = coupled_block(n, rank, size, density)
    A = jsparse.BCSR.from_scipy_sparse(M)
    b_global = np.random.default_rng(3).standard_normal(n)
    w_global = np.random.default_rng(4).standard_normal(n)
    b, w = jnp.asarray(b_global[rs:re]), jnp.asarray(w_global[rs:re])
    off_rank = int(np.sum((M.indices < rs) | (M.indices >= re)))
    for r, (nnz, halo) in enumerate(comm.allgather((M.nnz, off_rank))):
        say(f"rank {r}: {nnz} nonzeros, {halo} in columns of other ranks")

    def local_loss(data, b):
        x, info = jaxamg.solve(
            jsparse.BCSR((data, A.indices, A.indptr), shape=A.shape),
            b,
            comm=comm,
            nglobal=n,
            partition_info=(rs, re),
            config=config,
        )
        return jnp.sum(w * x), info

    (loss, info), (g_data, g_b) = jax.value_and_grad(local_loss, argnums=(0, 1), has_aux=True)(
        A.data, b
    )
    status = jaxamg.AMGXStatus(int(info["status"]))
    say(f"forward: {status} after {int(info['iterations'])} iterations")
    g_b_global = mpi_utils.gather_vector(g_b, comm)
    g_data_global = mpi_utils.gather_vector(g_data, comm)
    blocks = comm.gather(M, root=0)  # for the single-process reference only

    ok = True
    if rank == 0:
        G = jsparse.BCSR.from_scipy_sparse(sp.vstack(blocks).tocsr())

        def serial_loss(data, b):
            x, _ = jaxamg.solve(
                jsparse.BCSR((data, G.indices, G.indptr), shape=G.shape), b, config=config
            )
            return jnp.sum(jnp.asarray(w_global) * x)

        s_data, s_b = jax.grad(serial_loss, argnums=(0, 1))(G.data, jnp.asarray(b_global))

        def rel(a, b):
            a, b = np.asarray(a), np.asarray(b)
            return float(np.linalg.norm(a - b) / np.linalg.norm(b))

        diffs = {"dL/db": rel(g_b_global, s_b), "dL/dvalues": rel(g_data_global, s_data)}
        for name, value in diffs.items():
            say(f"{name}: relative difference to one process {value:.3e}")
        ok = max(diffs.values()) < 1e-8
    ok = comm.bcast(ok)
    say("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
