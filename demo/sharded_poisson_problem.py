"""A 2-D Poisson problem as JAX global arrays: the sharded interface.

Every MPI rank is one JAX process with one device (a CPU device here, or one
GPU). Each builds only its block of rows of the 5-point Laplacian and its
slice of b; ``jaxamg.make_sharded_vector`` and ``make_sharded_matrix`` turn
them into row-sharded global arrays, and ``make_sharded_solver`` solves with
the distributed engine. Then a jitted gradient with respect to the matrix
values and the right-hand side, checked against central differences.

    mpirun -n 2 python demo/sharded_poisson_problem.py              # 32 x 32
    mpirun -n 2 python demo/sharded_poisson_problem.py --n 64
    JAXAMG_DEMO_SMALL=1 mpirun -n 2 python demo/sharded_poisson_problem.py   # 16 x 16
    (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
     and --oversubscribe for more ranks than cores)

Checks: status SUCCESS on every rank, the true residual |b - A x| / |b|
below 1e-8, and the gradient's directional derivatives within 1e-5 of
central differences.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 32)")
    args = parser.parse_args(argv)
    n = args.n or (16 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 32)

    # jaxamg first: it sets XLA flags that must be in place before JAX starts
    # a backend. Then one JAX process per MPI rank.
    import jaxamg

    # isort: split
    import jax

    if not jax.distributed.is_initialized():  # (a test harness may have done it)
        jax.distributed.initialize(cluster_detection_method="mpi4py")
    jax.config.update("jax_enable_x64", True)

    import jax.numpy as jnp
    import numpy as np
    from mpi4py import MPI

    from jaxamg import matrices, mpi_utils

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    say = print if rank == 0 else (lambda *a, **k: None)
    n_global = n * n

    A_local, rs, re = matrices.poisson_matrix_distributed(n, n, rank, size, dtype=jnp.float64)
    b_global = matrices.rhs_random(n_global, seed=0, dtype=jnp.float64)
    b_local, _, _ = mpi_utils.partition_vector(b_global, rank, size)
    device = jax.local_devices()[0]
    say(
        f"{n} x {n} Poisson ({n_global} unknowns) on {size} JAX processes "
        f"({device.platform} devices), rows per rank {[r for r in comm.allgather(re - rs)]}"
    )

    b = jaxamg.make_sharded_vector(b_local, global_size=n_global)
    A = jaxamg.make_sharded_matrix(A_local, b)
    config = {
        "solver": "PCG",
        "preconditioner": {"solver": "JACOBI_L1", "max_iters": 1},
        "communicator": "MPI_DIRECT",
        "tolerance": 1e-12,
        "max_iters": 2000,
    }
    solver = jaxamg.make_sharded_solver(A, b, config=config, is_symmetric=True)
    x, info = solver(b)

    # Each rank reads its own entry of the per-rank info arrays.
    def mine(array):
        return np.asarray(array.addressable_shards[0].data)[0]

    iterations, status = int(mine(info["iterations"])), jaxamg.AMGXStatus(int(mine(info["status"])))
    x_local = np.asarray(solver.local_vector(x))
    x_full = np.concatenate(comm.allgather(x_local))  # small demo: fine to gather
    import scipy.sparse as sp

    A_scipy = sp.csr_matrix(
        (np.asarray(A_local.data), np.asarray(A_local.indices), np.asarray(A_local.indptr)),
        shape=A_local.shape,
    )
    r2 = comm.allreduce(float(np.sum((np.asarray(b_local) - A_scipy @ x_full) ** 2)))
    b2 = comm.allreduce(float(np.sum(np.asarray(b_local) ** 2)))
    residual = (r2 / b2) ** 0.5
    statuses = comm.allgather(str(status))
    engine_residual = float(mine(info["residual"]))
    say(
        f"solve: {status}, {iterations} iterations, engine residual {engine_residual:.3e}, "
        f"true |b - A x| / |b| = {residual:.3e}; status per rank: {statuses}"
    )

    # A jitted gradient of a global loss with respect to (A.data, b).
    def loss(A_data, rhs):
        x, _ = solver(rhs, A=A_data)
        return jnp.sum(x**2)

    gradient = jax.jit(jax.grad(loss, argnums=(0, 1)))
    compiled_loss = jax.jit(loss)
    with jax.set_mesh(b.sharding.mesh):
        grad_A_data, grad_b = gradient(A.data, b)
        # Directional derivatives against central differences, along random
        # directions on the matrix pattern and the right-hand side.
        rng = np.random.default_rng(1 + rank)
        dA = np.asarray(A.local_matrix().data) * rng.uniform(-1, 1, A.local_nnz)
        dA = jaxamg.make_sharded_vector(np.pad(dA, (0, A.max_local_nnz - A.local_nnz)))
        db = jaxamg.make_sharded_vector(rng.standard_normal(re - rs), global_size=n_global)
        checks = []
        for label, (direction, grad, shift) in {
            "A.data": (dA, grad_A_data, lambda h: (A.data + h * dA, b)),
            "b": (db, grad_b, lambda h: (A.data, b + h * db)),
        }.items():
            h = 1e-5
            fd = (compiled_loss(*shift(h)) - compiled_loss(*shift(-h))) / (2 * h)
            exact = jnp.sum(grad * direction)
            error = abs(float(exact) - float(fd)) / abs(float(fd))
            checks.append(error)
            say(
                f"gradient check dL/d{label}: <grad, v> = {float(exact):.8e}, central difference "
                f"{float(fd):.8e}, relative error {error:.2e}"
            )
    grad_local = A.local_matrix(grad_A_data)
    say(
        f"rank 0: local gradient block {grad_local.shape} with {grad_local.nse} entries, "
        f"|dL/db_local| = {float(jnp.linalg.norm(solver.local_vector(grad_b))):.4e}"
    )

    ok = (
        all(s == str(jaxamg.AMGXStatus.SUCCESS) for s in statuses)
        and residual < 1e-8
        and max(checks) < 1e-5
    )
    ok = comm.bcast(ok)
    say("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
