"""The sharded interface against the MPI interface it is built on.

Run under mpirun, one JAX process (one CPU device) per rank:

    mpirun -n 2 python bench/sharded_vs_mpi.py            # 3-D Poisson 48^3
    mpirun -n 2 python bench/sharded_vs_mpi.py --n 32 --repeat 3
    (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

On the same matrix, right-hand side and config (PCG + aggregation AMG, cached
setup), it times, interleaved round by round:

- `jaxamg.solve(A_local, b_local, comm=...)` (the MPI interface, eager);
- the sharded solver called eagerly (`solver(b)`: no shard_map, the
  rank-local pipeline);
- `jax.grad` of a loss through the sharded solver, eager and under
  `jax.jit`.

Each time is the slowest rank's, the median over rounds. The targets: eager
sharded solve <= 1.1x the MPI solve; jit(grad) <= 1.1x eager grad.
"""

from __future__ import annotations

import argparse
import statistics
import time


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=48, help="grid points per side")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds")
    args = parser.parse_args()

    import jaxamg  # first: its XLA flags must precede the backend

    # isort: split
    import jax

    jax.distributed.initialize(cluster_detection_method="mpi4py")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    from mpi4py import MPI

    from jaxamg import matrices, mpi_utils

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    n_global = args.n**3
    A_local, rs, re = matrices.poisson3d_matrix_distributed(args.n, rank, size, dtype=jnp.float64)
    b_global = matrices.rhs_random(n_global, seed=0, dtype=jnp.float64)
    b_local, _, _ = mpi_utils.partition_vector(b_global, rank, size)
    config = {
        "solver": "PCG",
        "tolerance": 1e-8,
        "max_iters": 500,
        "preconditioner": {
            "solver": "AMG",
            "algorithm": "AGGREGATION",
            "selector": "SIZE_8",
            "max_iters": 1,
            "cycle": "V",
            "smoother": {"solver": "JACOBI_L1", "max_iters": 1},
            "coarse_solver": "DENSE_LU_SOLVER",
        },
    }
    jaxamg.with_cache(A_local, is_symmetric=True)

    b = jaxamg.make_sharded_vector(b_local, global_size=n_global)
    A = jaxamg.make_sharded_matrix(A_local, b)
    solver = jaxamg.make_sharded_solver(A, b, config=config, is_symmetric=True)

    def mpi_solve():
        x, info = jaxamg.solve(
            A_local, b_local, comm=comm, nglobal=n_global, partition_info=(rs, re), config=config
        )
        return jax.block_until_ready(x), int(info["iterations"])

    def sharded_solve():
        x, info = solver(b)
        return jax.block_until_ready(x), None

    def loss(A_data, rhs):
        x, _ = solver(rhs, A=A_data)
        return jnp.sum(x**2)

    eager_grad = jax.grad(loss, argnums=(0, 1))
    jit_grad = jax.jit(eager_grad)

    # JAX runs eager operations on multi-process global arrays (the loss's
    # sum, its cotangent) only inside the mesh context, as under jit.
    def run_eager_grad():
        with jax.set_mesh(b.sharding.mesh):
            return jax.block_until_ready(eager_grad(A.data, b)), None

    def run_jit_grad():
        with jax.set_mesh(b.sharding.mesh):
            return jax.block_until_ready(jit_grad(A.data, b)), None

    cases = {
        "MPI solve (eager)": mpi_solve,
        "sharded solve (eager)": sharded_solve,
        "sharded grad (eager)": run_eager_grad,
        "sharded grad (jit)": run_jit_grad,
    }
    for fn in cases.values():  # warm: setups, compilation
        fn()
    times = {name: [] for name in cases}
    iterations = None
    for _ in range(args.repeat):
        for name, fn in cases.items():
            comm.Barrier()
            t0 = time.perf_counter()
            _, its = fn()
            elapsed = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
            times[name].append(elapsed)
            if its is not None:
                iterations = its
    if rank == 0:
        med = {name: statistics.median(v) for name, v in times.items()}
        print(
            f"3-D Poisson {args.n}^3 ({n_global} unknowns), {size} ranks, PCG + aggregation "
            f"AMG, {iterations} iterations; median of {args.repeat} rounds, slowest rank"
        )
        print("| measurement | time s | ratio | target | met? |")
        print("|---|--:|--:|--:|---|")
        pairs = {
            "MPI solve (eager)": None,
            "sharded solve (eager)": "MPI solve (eager)",
            "sharded grad (eager)": None,
            "sharded grad (jit)": "sharded grad (eager)",
        }
        for name, ref in pairs.items():
            if ref is None:
                print(f"| {name} | {med[name]:.3f} | | | |")
            else:
                ratio = med[name] / med[ref]
                print(
                    f"| {name} | {med[name]:.3f} | {ratio:.2f}x {ref} | <= 1.1x | "
                    f"{'yes' if ratio <= 1.1 else 'no'} |"
                )


if __name__ == "__main__":
    main()
