"""The largest 3D Poisson problems on one GPU: does 512^3 (134M unknowns) fit
and solve?

One size per run: the 7-point matrix is built on the host directly in CSR
(int32 indices, no COO intermediate), put on the device as a BCSR argument,
and solved by a jitted `jaxamg.solve` (float64, PCG + classical AMG, true
relative residual 1e-8). Reported: the first call (host setup + upload +
solve), the cached solve (median of 3), iterations, the true residual
computed on the device, jaxamg's device bytes (hierarchy and work vectors)
and the device's free memory after the solve, and the host's peak resident
memory. Resetup and gradients are left to bench_poisson_gpu.py (smaller
sizes), because each would repeat the multi-minute host setup here.

    XLA_PYTHON_CLIENT_PREALLOCATE=false python bench/gpu/bench_large_gpu.py --size 512
"""

from __future__ import annotations

import argparse
import datetime
import json
import resource
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg._core import ffi as _ffi

jax.config.update("jax_enable_x64", True)

CONFIG = {
    "config_version": 2,
    "solver": {
        "scope": "main",
        "solver": "PCG",
        "max_iters": 200,
        "tolerance": 1e-8,
        "convergence": "RELATIVE_INI_CORE",
        "norm": "L2",
        "monitor_residual": 1,
        "preconditioner": {
            "scope": "amg",
            "solver": "AMG",
            "algorithm": "CLASSICAL",
            "selector": "PMIS",
            "strength_threshold": 0.25,
            "interpolator": "D2",
            "interp_max_elements": 4,
            "max_iters": 1,
            "cycle": "V",
            "presweeps": 1,
            "postsweeps": 1,
            "max_levels": 25,
            "coarse_solver": "DENSE_LU_SOLVER",
            "dense_lu_num_rows": 64,
            "smoother": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 1.0},
        },
    },
}


def poisson3d_csr(m: int):
    """7-point Laplacian on an m^3 grid (Dirichlet), CSR with int32 indices,
    columns sorted, built row-block by row-block to bound the temporaries."""
    n = m**3
    offsets = (-m * m, -m, -1, 0, 1, m, m * m)
    counts = np.empty(n, dtype=np.int32)
    block = m * m  # one z-plane of rows at a time
    cols_parts, vals_parts = [], []
    for start in range(0, n, block):
        idx = np.arange(start, min(start + block, n), dtype=np.int64)
        i, j, k = idx % m, (idx // m) % m, idx // (m * m)
        ok = np.stack(
            [k > 0, j > 0, i > 0, np.ones_like(i, bool), i < m - 1, j < m - 1, k < m - 1], axis=1
        )
        cols = idx[:, None] + np.asarray(offsets, dtype=np.int64)[None, :]
        vals = np.where(np.asarray(offsets) == 0, 6.0, -1.0)[None, :].repeat(len(idx), 0)
        counts[start : start + len(idx)] = ok.sum(axis=1)
        cols_parts.append(cols[ok].astype(np.int32))
        vals_parts.append(vals[ok])
    indptr = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=indptr[1:])
    return indptr, np.concatenate(cols_parts), np.concatenate(vals_parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    m = args.size
    dev = jax.devices("gpu")[0]
    cuda = _ffi.cuda_native()
    print(
        f"# {datetime.datetime.now(datetime.UTC).isoformat()} device: "
        f"{dev.device_kind}; jax {jax.__version__}",
        flush=True,
    )
    t0 = time.perf_counter()
    indptr, indices, data = poisson3d_csr(m)
    n, nnz = len(indptr) - 1, len(data)
    print(
        f"# poisson3d-{m}: n={n} nnz={nnz} built on the host in {time.perf_counter() - t0:.1f} s",
        flush=True,
    )
    rng = np.random.default_rng(0)
    A = jax.device_put(
        jsparse.BCSR((jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr)), shape=(n, n)),
        dev,
    )
    b = jax.device_put(jnp.asarray(rng.normal(size=n)), dev)
    del data, indices, indptr
    solve = jax.jit(lambda M, rhs: jaxamg.solve(M, rhs, config=CONFIG))
    t0 = time.perf_counter()
    x, info = jax.block_until_ready(solve(A, b))
    first = time.perf_counter() - t0
    last = cuda.last_solve()
    print(
        f"# first call (compile, host setup, upload, solve): {first:.1f} s; on device: "
        f"{last['on_device']} {last['host_reason']}",
        flush=True,
    )
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        x, info = jax.block_until_ready(solve(A, b))
        times.append(time.perf_counter() - t0)
    r = b - A @ x
    relres = float(jnp.linalg.norm(r) / jnp.linalg.norm(b))
    free, total = cuda.device_memory()
    levels = cuda.last_solve()["levels"]
    row = {
        # The config is bench_poisson_gpu.py's pcg_classical_l1 (plots share a series).
        "method": "jaxamg pcg_classical_l1",
        "n": n,
        "nnz": nnz,
        "first_call_s": first,
        "solve_s": statistics.median(times),
        "solve_min_s": min(times),
        "iterations": int(info["iterations"]),
        "status": int(info["status"]),
        "true_relres": relres,
        "levels": len(levels),
        "op_complexity": sum(l[1] for l in levels) / levels[0][1],
        "jaxamg_device_gib": cuda.live_device_bytes() / 2**30,
        "device_free_gib": free / 2**30,
        "device_total_gib": total / 2**30,
        "host_peak_rss_gib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
