"""Recover the skew of a distributed matrix-free Poisson operator, with the
loss on the gathered global solution.

The same problem as ``mpi_poisson_operator_optimization.py`` (every rank owns
a block of rows of ``poisson_operator(s)``, coloured once and solved with
cached MPI metadata), but the loss is written on the whole solution: the
local pieces are joined by ``jaxamg.mpi_utils.make_allgather_vector``, a
differentiable allgather, and every rank evaluates the same
``|x(s) - x*|^2 / |x*|^2`` on the global vector. The allgather's VJP hands
each rank its own slice of the global cotangent, so the adjoint solve sees
the global cotangent exactly once, and the ranks' gradient contributions
(each from its own rows of the operator) add up to dL/ds with one
allreduce.

    mpirun -n 2 python demo/mpi_poisson_operator_optimization_global.py
    JAXAMG_DEMO_SMALL=1 mpirun -n 2 python demo/mpi_poisson_operator_optimization_global.py
    (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
     and --oversubscribe for more ranks than cores)

Checks: the first gradient agrees with a single-process jax.grad of the same
loss (rank 0, the global operator) and with a central difference of the MPI
loss, both within 1e-6 relative; the recovered skew is within 1e-3 of 1.3,
the same on every rank.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 32)")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args(argv)
    n = args.n or (12 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 32)

    import time

    import jax
    import jax.numpy as jnp
    import numpy as np
    from mpi4py import MPI

    import jaxamg
    from jaxamg import matrices, mpi_utils, sparsity

    jax.config.update("jax_enable_x64", True)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    say = print if rank == 0 else (lambda *a, **k: None)
    nglobal = n * n
    true_skew, initial_skew = 1.3, 0.2
    # PBICGSTAB preconditioned by one V-cycle of AMG with rank-local aggregates.
    config = {
        "config_version": 2,
        "solver": {
            "scope": "main",
            "solver": "PBICGSTAB",
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

    def local_operator(skew):
        return mpi_utils.partition_operator(
            matrices.poisson_operator(skew, dtype=jnp.float64), nglobal, rank, size
        )[0]

    # Colour once, at a skew where no stencil coefficient is zero.
    reference_op = local_operator(1.0)
    rs, re, _ = mpi_utils.get_partition_info(nglobal, rank, size)
    meta = jaxamg.cache_mpi_metadata(config, comm, nglobal, (rs, re), reference_op)
    coloring = reference_op._coloring_info
    # Collective to create (it checks that the pieces tile 0..nglobal).
    allgather = mpi_utils.make_allgather_vector(comm, (rs, re), nglobal)
    say(
        f"{n} x {n} grid on {size} rank(s), rows per rank {list(allgather.sizes)}, "
        f"allgather backend {allgather.backend!r}"
    )
    b_global = matrices.rhs_random(nglobal, seed=0, dtype=jnp.float64)
    b = b_global[rs:re]

    def solve_with_skew(skew):
        A = sparsity.materialize_operator(local_operator(skew), re - rs, coloring=coloring)
        x, _ = jaxamg.solve(jaxamg.with_cache(A, mpi=meta), b)
        return x

    # The target, gathered: every rank holds all of x*.
    x_target = allgather(jax.jit(solve_with_skew)(jnp.float64(true_skew)))
    norm2 = float(jnp.sum(x_target**2))

    def global_loss(skew):
        # The same number on every rank: a function of the whole solution.
        return jnp.sum((allgather(solve_with_skew(skew)) - x_target) ** 2) / norm2

    step_fn = jax.jit(jax.value_and_grad(global_loss))
    loss_fn = jax.jit(global_loss)

    # The first gradient, checked twice: against a central difference of the
    # MPI loss, and against one process solving the global operator.
    _, grad = step_fn(jnp.float64(initial_skew))
    grad0 = comm.allreduce(float(grad), op=MPI.SUM)
    h = 1e-5
    fd = (
        float(loss_fn(jnp.float64(initial_skew + h)))
        - float(loss_fn(jnp.float64(initial_skew - h)))
    ) / (2 * h)
    serial = None
    if rank == 0:
        full = jaxamg.cache_coloring(matrices.poisson_operator(1.0, dtype=jnp.float64), nglobal)

        def serial_loss(skew):
            op = matrices.poisson_operator(skew, dtype=jnp.float64)
            A = sparsity.materialize_operator(op, nglobal, coloring=full)
            x, _ = jaxamg.solve(A, b_global, config=config)
            return jnp.sum((x - x_target) ** 2) / norm2

        serial = float(jax.grad(serial_loss)(jnp.float64(initial_skew)))
    serial = comm.bcast(serial)
    fd_error = abs(grad0 - fd) / abs(fd)
    serial_error = abs(grad0 - serial) / abs(serial)
    say(
        f"first gradient dL/ds = {grad0:+.10e}; central difference {fd:+.10e} (relative "
        f"difference {fd_error:.2e}); one process {serial:+.10e} (relative difference "
        f"{serial_error:.2e})"
    )

    skew = float(initial_skew)
    start = time.perf_counter()
    for step in range(args.steps):
        value, grad = step_fn(jnp.float64(skew))
        # Every rank computed the same loss; the gradient has one share per rank.
        value = float(value)
        grad = comm.allreduce(float(grad), op=MPI.SUM)
        if step % 5 == 0:
            say(f"step {step:3d}: skew {skew:.6f}, loss {value:.3e}, gradient {grad:+.3e}")
        # Gradient descent with steps clipped to 0.5, as in the local-loss demo.
        skew -= float(np.clip(2.0 * grad, -0.5, 0.5))
    seconds = time.perf_counter() - start
    error = abs(skew - true_skew)
    agree = len(set(comm.allgather(skew))) == 1
    say(
        f"recovered skew: {skew:.6f} (true {true_skew}), error {error:.2e}, "
        f"{args.steps} jitted steps in {seconds:.2f} s; the same on every rank: {agree}"
    )
    ok = comm.bcast(error < 1e-3 and agree and fd_error < 1e-6 and serial_error < 1e-6)
    say("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
