"""Distributed solves of JAX arrays on a GPU shared by the ranks: the 3-D
7-point Poisson problem n^3 split into row blocks, PCG + classical AMG
(JACOBI_L1, dense LU coarse solve), float64, relative residual 1e-8.

Run under mpirun with 1 and 2 ranks; rank 0 prints one JSON line:
iterations, the first call (setup and solve, fresh cache), a cached jitted
call on the device (median of `--calls`) and whether it copied the matrix to
the host (jaxamg._mpi_cuda.last_device_solve()["staged"]), and the same
cached call solved by the host engine (JAXAMG_GPU_DIST=host) in the same run.

    mpirun -n 2 python bench/gpu/bench_mpi_gpu.py --n 128
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jax.experimental import sparse as jsparse
from mpi4py import MPI

import jaxamg
from jaxamg import matrices

jax.config.update("jax_enable_x64", True)

CONFIG = {
    "config_version": 2,
    "solver": {
        "scope": "main",
        "solver": "PCG",
        "tolerance": 1e-8,
        "convergence": "RELATIVE_INI",
        "monitor_residual": 1,
        "max_iters": 200,
        "preconditioner": {
            "scope": "amg",
            "solver": "AMG",
            "algorithm": "CLASSICAL",
            "selector": "PMIS",
            "interp_max_elements": 4,
            "max_iters": 1,
            "smoother": {"scope": "l1", "solver": "JACOBI_L1"},
            "coarse_solver": "DENSE_LU_SOLVER",
            "dense_lu_num_rows": 64,
        },
    },
}


def local_rows(n: int, comm):
    """This rank's block of rows of the n^3 Poisson matrix (global columns)."""
    A = matrices.poisson3d_matrix(n)
    N = A.shape[0]
    size, rank = comm.Get_size(), comm.Get_rank()
    rs, re = N * rank // size, N * (rank + 1) // size
    S = sp.csr_matrix((np.asarray(A.data), np.asarray(A.indices), np.asarray(A.indptr)), A.shape)
    S = S[rs:re].tocsr()
    S.sort_indices()
    local = jsparse.BCSR(
        (jnp.asarray(S.data), jnp.asarray(S.indices, jnp.int32), jnp.asarray(S.indptr, jnp.int32)),
        shape=S.shape,
    )
    return local, N, rs, re


def timed(comm, f, *args):
    comm.Barrier()
    t = time.perf_counter()
    out = jax.block_until_ready(f(*args))
    comm.Barrier()
    return time.perf_counter() - t, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=128)
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    gpu = jax.devices("gpu")[0]
    A, N, rs, re = local_rows(args.n, comm)
    A = jax.device_put(A, gpu)
    b = jax.device_put(jnp.ones(re - rs), gpu)

    @jax.jit
    def solve(data, rhs):
        M = jsparse.BCSR((data, A.indices, A.indptr), shape=A.shape)
        return jaxamg.solve(M, rhs, comm=comm, nglobal=N, partition_info=(rs, re), config=CONFIG)

    from jaxamg import _mpi_cuda  # type: ignore[attr-defined]

    first, (x, info) = timed(comm, solve, A.data, b)
    record = {"ranks": comm.Get_size(), "n": args.n, "unknowns": N}
    record["iterations"] = int(info["iterations"])
    record["relres"] = float(info["residual"]) / float(np.sqrt(N))
    record["first_call_s"] = first
    for place in ("device", "host"):
        os.environ["JAXAMG_GPU_DIST"] = place
        times = [timed(comm, solve, A.data, b)[0] for _ in range(args.calls)]
        record[f"cached_{place}_s"] = statistics.median(times)
        last = _mpi_cuda.last_device_solve()
        record[f"cached_{place}_on_device"] = bool(last["on_device"])
        record[f"cached_{place}_staged"] = bool(last["staged"])
    if comm.Get_rank() == 0:
        print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
