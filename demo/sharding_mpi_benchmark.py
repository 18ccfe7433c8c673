"""The JAX sharding interface against the MPI interface, on one problem.

Every MPI rank is one JAX process with one device. Each builds its block of
rows of a nonsymmetric 7-point convection-diffusion matrix on an n^3 grid
(first-order upwind convection along (1, 1, 1)) and its slice of b, then
solves the system and differentiates L = |x|^2 two ways, with the same
configuration (PBICGSTAB + aggregation AMG, tolerance 1e-6, at most 200
iterations, MPI_DIRECT):

* the MPI interface: ``jaxamg.solve`` on the local block with metadata cached
  by ``jaxamg.cache_mpi_metadata`` (each rank's loss is its share of L);
* the sharding interface: ``jaxamg.make_sharded_solver`` over row-sharded JAX
  global arrays (``make_sharded_vector``, ``make_sharded_matrix``), the loss a
  reduction over the global x.

For the forward solve, dL/db and dL/dA (the matrix values), each jitted, it
times the compilation, the first call with the solver cache cleared (the AMG
setup) and the steady state (median of the repeats), each the slowest
rank's, in milliseconds, with the sharding/MPI ratio; then it compares the
two interfaces' solutions and gradients. JAX-AMG's version runs n = 128
(2.1 M unknowns) on GPUs; the default here, n = 32, suits a few CPU cores.

    mpirun -n 2 python demo/sharding_mpi_benchmark.py                 # 32^3
    mpirun -n 2 python demo/sharding_mpi_benchmark.py --n 128 --repeat 5
    JAXAMG_DEMO_SMALL=1 mpirun -n 2 python demo/sharding_mpi_benchmark.py   # 12^3
    (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
     and --oversubscribe for more ranks than cores)

Checks: both solves converge, the true residual |b - A x| / |b| is below
1e-5, and the two interfaces' x, dL/db and dL/dA agree within 1e-8
(relative, global 2-norms).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time


def convection_diffusion_rows(n: int, row_start: int, row_end: int, c: float = 0.5):
    """Rows row_start:row_end of the upwind convection-diffusion matrix on an
    n^3 grid (Dirichlet boundaries): diagonal 6 + 3c, -(1 + c) to the lower
    neighbour and -1 to the upper one along each axis. A nonsingular
    M-matrix, nonsymmetric for c != 0. CSR arrays with global columns."""
    import numpy as np

    rows = np.arange(row_start, row_end, dtype=np.int64)
    z, y, x = rows // (n * n), (rows // n) % n, rows % n
    # The seven neighbours in increasing column order, so each row is sorted.
    cols = np.stack([rows - n * n, rows - n, rows - 1, rows, rows + 1, rows + n, rows + n * n], 1)
    valid = np.stack(
        [z > 0, y > 0, x > 0, np.ones_like(x, bool), x < n - 1, y < n - 1, z < n - 1], 1
    )
    values = np.array([-(1 + c)] * 3 + [6 + 3 * c] + [-1.0] * 3)
    indptr = np.concatenate([[0], np.cumsum(valid.sum(1))])
    return np.broadcast_to(values, cols.shape)[valid], cols[valid], indptr


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 32)")
    parser.add_argument("--repeat", type=int, default=None, help="steady-state calls (default 5)")
    args = parser.parse_args(argv)
    small = os.environ.get("JAXAMG_DEMO_SMALL") == "1"
    n = args.n or (12 if small else 32)
    repeat = args.repeat or (2 if small else 5)

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
    import scipy.sparse as sp
    from jax.experimental import sparse as jsparse
    from mpi4py import MPI

    from jaxamg import matrices, mpi_utils

    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    say = print if rank == 0 else (lambda *a, **k: None)
    n_global = n**3
    rs, re, n_local = mpi_utils.get_partition_info(n_global, rank, size)
    data, indices, indptr = convection_diffusion_rows(n, rs, re)
    A_local = jsparse.BCSR(
        (jnp.asarray(data), jnp.asarray(indices, jnp.int32), jnp.asarray(indptr, jnp.int32)),
        shape=(n_local, n_global),
    )
    b_local = matrices.rhs_random(n_global, seed=0, dtype=jnp.float64)[rs:re]
    config = {
        "solver": "PBICGSTAB",
        "preconditioner": {
            "solver": "AMG",
            "algorithm": "AGGREGATION",
            "selector": "SIZE_8",
            "max_iters": 1,
            "smoother": {"solver": "BLOCK_JACOBI", "max_iters": 1},
        },
        "communicator": "MPI_DIRECT",
        "tolerance": 1e-6,
        "max_iters": 200,
    }

    # The MPI interface: host-side checks and config preparation done once.
    meta = jaxamg.cache_mpi_metadata(config, comm, n_global, (rs, re), A_local)

    def mpi_solve(values, rhs):
        A = jsparse.BCSR((values, A_local.indices, A_local.indptr), shape=A_local.shape)
        return jaxamg.solve(jaxamg.with_cache(A, mpi=meta), rhs)

    def mpi_loss(values, rhs):
        return jnp.sum(mpi_solve(values, rhs)[0] ** 2)  # this rank's share of L

    # The sharding interface: global arrays, one shard per process.
    b = jaxamg.make_sharded_vector(b_local, global_size=n_global)
    A = jaxamg.make_sharded_matrix(A_local, b)
    solver = jaxamg.make_sharded_solver(A, b, config=config)

    def sharded_loss(values, rhs):
        return jnp.sum(solver(rhs, A=values)[0] ** 2)  # all of L

    cases = {
        "forward": (lambda v, r: mpi_solve(v, r)[0], lambda v, r: solver(r, A=v)[0]),
        "dL/db": (jax.grad(mpi_loss, argnums=1), jax.grad(sharded_loss, argnums=1)),
        "dL/dA": (jax.grad(mpi_loss, argnums=0), jax.grad(sharded_loss, argnums=0)),
    }
    operands = {"MPI": (A_local.data, b_local), "sharding": (A.data, b)}

    def slowest(fn):
        """(result, seconds of the slowest rank), the ranks starting together."""
        comm.Barrier()
        start = time.perf_counter()
        out = jax.block_until_ready(fn())
        return out, comm.allreduce(time.perf_counter() - start, op=MPI.MAX)

    def measure(fn, operands):
        """(result, (compile, first call, steady state) seconds) of jit(fn)."""
        compiled, compile_s = slowest(lambda: jax.jit(fn).lower(*operands).compile())
        jaxamg.clear_solver_cache()  # the first call sets the solver up again
        out, first_s = slowest(lambda: compiled(*operands))
        steady = [slowest(lambda: compiled(*operands))[1] for _ in range(repeat)]
        return out, (compile_s, first_s, statistics.median(steady))

    timings, results = {}, {}
    with jax.set_mesh(b.sharding.mesh):  # eager ops on global arrays need the mesh
        for case, fns in cases.items():
            for interface, fn in zip(("MPI", "sharding"), fns):
                results[case, interface], timings[case, interface] = measure(
                    fn, operands[interface]
                )

    # This rank's rows of each sharded result, in the MPI interface's layout.
    local = {
        "forward": lambda out: solver.local_vector(out),
        "dL/db": lambda out: solver.local_vector(out),
        "dL/dA": lambda out: A.local_matrix(out).data,
    }

    def global_relative(a, reference):
        d = comm.allreduce(float(np.sum((np.asarray(a) - np.asarray(reference)) ** 2)))
        r = comm.allreduce(float(np.sum(np.asarray(reference) ** 2)))
        return (d / r) ** 0.5

    differences = {
        case: global_relative(local[case](results[case, "sharding"]), results[case, "MPI"])
        for case in cases
    }

    # Convergence and the true residual, from direct (unjitted) calls.
    x_mpi, info = mpi_solve(A_local.data, b_local)
    _, info_sharded = solver(b)
    statuses = comm.allgather(
        (
            str(info["status"]),
            str(jaxamg.AMGXStatus(int(info_sharded["status"].addressable_shards[0].data[0]))),
        )
    )
    x_full = np.concatenate(comm.allgather(np.asarray(x_mpi)))  # fine at demo sizes
    A_scipy = sp.csr_matrix((data, indices, indptr), shape=(n_local, n_global))
    r2 = comm.allreduce(float(np.sum((np.asarray(b_local) - A_scipy @ x_full) ** 2)))
    b2 = comm.allreduce(float(np.sum(np.asarray(b_local) ** 2)))
    residual = (r2 / b2) ** 0.5
    say(
        f"3-D convection-diffusion {n}^3 ({n_global} unknowns, "
        f"{comm.allreduce(len(data))} nonzeros) on {size} JAX processes "
        f"({jax.local_devices()[0].platform}); {int(info['iterations'])} iterations, status "
        f"(MPI, sharding) per rank {statuses}; true |b - A x| / |b| = {residual:.2e}"
    )
    say(f"milliseconds, slowest rank; steady state = median of {repeat} calls")
    say(f"{'':8s}{'':10s}{'compile':>10s}{'first call':>12s}{'steady':>10s}")
    for case in cases:
        for interface in ("MPI", "sharding"):
            ms = [1e3 * t for t in timings[case, interface]]
            say(f"{case:8s}{interface:10s}{ms[0]:10.1f}{ms[1]:12.1f}{ms[2]:10.2f}")
        ratio = [s / m for s, m in zip(timings[case, "sharding"], timings[case, "MPI"])]
        say(f"{case:8s}{'ratio':10s}{ratio[0]:10.2f}{ratio[1]:12.2f}{ratio[2]:10.2f}")
    for case, difference in differences.items():
        say(f"{case}: sharding vs MPI relative difference {difference:.2e}")

    success = str(jaxamg.AMGXStatus.SUCCESS)
    ok = (
        all(s == (success, success) for s in statuses)
        and residual < 1e-5
        and max(differences.values()) < 1e-8
    )
    ok = comm.bcast(ok)
    say("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
