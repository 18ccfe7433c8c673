"""Recover the skew of a matrix-free Poisson operator through the sharded
solver: the sharded counterpart of ``mpi_poisson_operator_optimization.py``.

Every rank owns a block of rows of ``poisson_operator(skew)``
(``partition_operator``). The sharded matrix is built once from the coloured
operator; each gradient step solves ``solver(rhs, A=local_operator(skew))``,
which materializes this rank's rows with the fixed sparsity and
differentiates through them. The loss is a reduction over global arrays, so
its gradient with respect to the (replicated) skew is already global: the
ranks' contributions are summed inside, no ``comm.allreduce`` is needed.

    mpirun -n 2 python demo/sharded_poisson_operator_optimization.py
    mpirun -n 2 python demo/sharded_poisson_operator_optimization.py --n 32
    JAXAMG_DEMO_SMALL=1 mpirun -n 2 python demo/sharded_poisson_operator_optimization.py   # 8 x 8
    (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
     and --oversubscribe for more ranks than cores)

Checks: the recovered skew is within 1e-3 of the true value 5, the same on
every rank.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 16)")
    parser.add_argument("--steps", type=int, default=25)
    parser.add_argument("--lr", type=float, default=0.1, help="first step's learning rate")
    args = parser.parse_args(argv)
    n = args.n or (8 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 16)

    import jaxamg  # before JAX starts a backend (XLA flags)

    # isort: split
    import jax

    if not jax.distributed.is_initialized():  # (a test harness may have done it)
        jax.distributed.initialize(cluster_detection_method="mpi4py")
    jax.config.update("jax_enable_x64", True)

    import time

    import jax.numpy as jnp
    import numpy as np
    from mpi4py import MPI

    from jaxamg.matrices import poisson_operator, rhs_random
    from jaxamg.mpi_utils import get_partition_info, partition_operator

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    say = print if rank == 0 else (lambda *a, **k: None)
    n_global = n * n
    true_skew, skew = 5.0, 1.0
    rs, re, n_local = get_partition_info(n_global, rank, size)

    def local_operator(s):
        return partition_operator(poisson_operator(s, dtype=jnp.float64), n_global, rank, size)[0]

    b = jaxamg.make_sharded_vector(
        np.asarray(rhs_random(n_global, seed=0, dtype=jnp.float64))[rs:re], global_size=n_global
    )
    # Colour once, at a skew where no stencil coefficient is zero.
    coloring = jaxamg.cache_coloring(local_operator(1.0), shape=(n_local, n_global))
    A = jaxamg.make_sharded_matrix(jaxamg.with_cache(local_operator(1.0), coloring=coloring), b)
    config = {
        "solver": "PBICGSTAB",
        "preconditioner": {"solver": "JACOBI_L1", "max_iters": 1},
        "tolerance": 1e-12,
        "max_iters": 1000,
    }
    solver = jaxamg.make_sharded_solver(A, b, config=config)
    x_target, _ = solver(b, A=local_operator(true_skew))

    def loss(s, rhs, target):
        x, _ = solver(rhs, A=local_operator(s))
        return jnp.sum((x - target) ** 2) / n_global

    # Gradient descent whose step size after the first step is the
    # Barzilai-Borwein one (the loss is flat near the optimum, where a fixed
    # learning rate crawls); every step is clipped to 1.
    step = jax.jit(jax.value_and_grad(loss))
    start = time.perf_counter()
    previous = None
    with jax.set_mesh(A.mesh):
        for k in range(args.steps):
            value, grad = step(skew, b, x_target)
            value, grad = float(value), float(grad)
            if grad == 0.0:
                break  # converged to the solver's precision
            if k % 5 == 0:
                say(f"step {k:3d}: skew {skew:.6f}, loss {value:.3e}, gradient {grad:+.3e}")
            lr = args.lr
            if previous is not None and grad != previous[1]:
                lr = abs((skew - previous[0]) / (grad - previous[1]))
            previous = (skew, grad)
            skew = skew - float(np.clip(lr * grad, -1.0, 1.0))
    seconds = time.perf_counter() - start
    error = abs(skew - true_skew)
    agree = len(set(comm.allgather(skew))) == 1
    say(
        f"recovered skew {skew:.6f} (true {true_skew}), error {error:.2e}, {args.steps} jitted "
        f"steps in {seconds:.2f} s; the same on every rank: {agree}"
    )
    ok = comm.bcast(error < 1e-3 and agree)
    say("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
