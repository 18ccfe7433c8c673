"""Sparsity detection of a distributed matrix-free operator: tracing versus
probing, per MPI rank.

Every rank owns a block of rows of the matrix-free 7-point Poisson operator
on an n^3 grid (``poisson3d_operator_distributed``: a function of the global
vector returning this rank's rows, shape (n_local, n^3)), and detects the
pattern of its block twice:

* tracing (``jaxamg.sparsity_tracing.trace_sparsity_pattern``): one
  interpretation of the operator's jaxpr, following which input entries
  reach which output entries, with no operator application;
* probing (``jaxamg.sparsity.probe_sparsity_pattern``): the operator applied
  to all n^3 unit vectors, vectorised in memory-bounded blocks.

For each it reports the wall time and the peak memory of every rank: the
resident set's high-water mark (``getrusage`` max RSS, reset before each
method where Linux allows it, via /proc/self/clear_refs) and, when JAX runs
on a GPU, the growth of the device's peak bytes in use. Tracing runs first,
so probing's larger footprint cannot hide it.

    mpirun -n 2 python demo/mpi_sparsity_detection_benchmark.py           # 32^3
    mpirun -n 2 python demo/mpi_sparsity_detection_benchmark.py --n 48
    JAXAMG_DEMO_SMALL=1 mpirun -n 2 python demo/mpi_sparsity_detection_benchmark.py   # 12^3
    (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1,
     and --oversubscribe for more ranks than cores)

Checks: on every rank the traced and the probed patterns are equal, and both
equal this rank's rows of the 7-point pattern built with SciPy (7 n^3 - 6 n^2
nonzeros in all).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time


def reset_peak_rss() -> bool:
    """Resets this process's RSS high-water mark (Linux >= 4.0); False where
    that is not possible, and the peak then includes earlier work."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def peak_rss_mib() -> float:
    scale = 1 if sys.platform == "darwin" else 1024  # bytes on macOS, KiB on Linux
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


def device_peak_mib(device) -> float | None:
    stats = device.memory_stats() if device.platform == "gpu" else None
    return None if not stats else stats.get("peak_bytes_in_use", 0) / 2**20


def measure(detect, device, comm):
    """(pattern, seconds, peak RSS MiB, RSS growth MiB, device peak growth MiB
    or None, whether the RSS peak was reset) of one detection, the ranks
    starting together."""
    comm.Barrier()
    exact_reset = reset_peak_rss()
    rss_before, device_before = peak_rss_mib(), device_peak_mib(device)
    start = time.perf_counter()
    pattern = detect()
    seconds = time.perf_counter() - start
    rss_peak, device_after = peak_rss_mib(), device_peak_mib(device)
    device_growth = None if device_before is None else device_after - device_before
    return pattern, seconds, rss_peak, rss_peak - rss_before, device_growth, exact_reset


def seven_point_rows(n: int, row_start: int, row_end: int):
    """Rows row_start:row_end of the 7-point pattern on an n^3 grid, from a
    SciPy Kronecker sum, as (local rows, global columns) sorted row-major."""
    import numpy as np
    import scipy.sparse as sp

    T, eye = sp.diags([1.0, 1.0, 1.0], [-1, 0, 1], shape=(n, n)), sp.identity(n)
    K = (
        sp.kron(sp.kron(T, eye), eye)
        + sp.kron(sp.kron(eye, T), eye)
        + sp.kron(sp.kron(eye, eye), T)
    )
    block = sp.csr_matrix(K)[row_start:row_end].tocoo()
    order = np.lexsort((block.col, block.row))
    return block.row[order].astype(np.int64), block.col[order].astype(np.int64)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 32)")
    args = parser.parse_args(argv)
    n = args.n or (12 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 32)

    import jax
    import jax.numpy as jnp
    import numpy as np
    from mpi4py import MPI

    from jaxamg import matrices, sparsity, sparsity_tracing

    jax.config.update("jax_enable_x64", True)
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    say = print if rank == 0 else (lambda *a, **k: None)
    device = jax.local_devices()[0]
    nglobal = n**3
    local_op, rs, re = matrices.poisson3d_operator_distributed(n, rank, size)
    shape = (re - rs, nglobal)
    say(
        f"7-point Poisson operator on a {n}^3 grid ({nglobal} unknowns), {size} rank(s) on "
        f"{device.platform} devices, rows per rank {comm.allgather(shape[0])}"
    )

    # Start JAX's backend before measuring: its one-off start-up cost is no
    # part of either method.
    jax.block_until_ready(local_op(jnp.ones(nglobal)))
    results = {}
    for label, detect in (
        ("tracing", lambda: sparsity_tracing.trace_sparsity_pattern(local_op, shape, jnp.float64)),
        ("probing", lambda: sparsity.probe_sparsity_pattern(local_op, shape, dtype=jnp.float64)),
    ):
        results[label] = measure(detect, device, comm)

    say(f"{'method':8s} {'rank':>4s} {'seconds':>9s} {'peak RSS MiB':>13s} {'RSS growth MiB':>15s}")
    for label, (_, seconds, peak, growth, device_growth, exact) in results.items():
        rows = comm.gather((seconds, peak, growth, device_growth, exact))
        for r, (s, p, g, d, e) in enumerate(rows or []):
            gpu = "" if d is None else f"  device peak growth {d:9.1f} MiB"
            mark = "" if e else "  (peak not reset: includes earlier work)"
            say(f"{label:8s} {r:4d} {s:9.3f} {p:13.1f} {g:15.1f}{gpu}{mark}")
    slowest = {k: comm.allreduce(v[1], op=MPI.MAX) for k, v in results.items()}
    say(
        f"slowest rank: tracing {slowest['tracing']:.3f} s, probing {slowest['probing']:.3f} s "
        f"({slowest['probing'] / slowest['tracing']:.1f}x)"
    )

    traced, probed = results["tracing"][0], results["probing"][0]
    expected = seven_point_rows(n, rs, re)

    def same(a, b):
        return a is not None and all(np.array_equal(np.asarray(u), v) for u, v in zip(a, b))

    checks = {"traced == probed": same(traced, probed), "== 7-point": same(traced, expected)}
    nnz = comm.allreduce(-1 if traced is None else len(traced[0]), op=MPI.SUM)
    agreed = {name: all(comm.allgather(flag)) for name, flag in checks.items()}
    say(
        f"patterns on every rank: traced == probed: {agreed['traced == probed']}; equal to "
        f"the 7-point pattern: {agreed['== 7-point']}; traced nonzeros {nnz} "
        f"(7 n^3 - 6 n^2 = {7 * n**3 - 6 * n**2})"
    )
    ok = comm.bcast(all(agreed.values()) and nnz == 7 * n**3 - 6 * n**2)
    say("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
