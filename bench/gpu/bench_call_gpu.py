"""Time of a jitted, cached `jaxamg.solve` call on small systems on the GPU:
the fixed cost of a call (dispatch, cache lookup, launches, the per-iteration
convergence read-back) against the size of the work.

A 10^4-unknown tridiagonal system (diagonal 2.5, CG to 1e-8, as bench/jax_solve.py's
CPU overhead row) and a 32^3 Poisson system (PCG + classical AMG). For each:
the minimum and median wall time of a jitted call with a warm cache over 200
calls, the iterations, and the time per iteration. The same calls on JAX's CPU
device in the same process give the host's numbers for comparison.

    python bench/gpu/bench_call_gpu.py
    python bench/gpu/bench_call_gpu.py --block-sweep 10000 30000 100000

--block-sweep: for tridiagonal CG at each given size, the one-kernel CG's
device solve time against its rows per block (the block count G forced
through JAXAMG_SMALL_CG_BLOCKS; counts above 264, more blocks than an
H100/H200 keeps resident, are left out), to choose the automatic count.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import time

import jax
import jax.numpy as jnp
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg import matrices
from jaxamg._core import ffi as _ffi

jax.config.update("jax_enable_x64", True)

CG = {"solver": "CG", "tolerance": 1e-8, "max_iters": 200}
PCG_AMG = {
    "solver": "PCG",
    "tolerance": 1e-8,
    "max_iters": 100,
    "preconditioner": {
        "solver": "AMG",
        "algorithm": "CLASSICAL",
        "interp_max_elements": 4,
        "smoother": {"scope": "l1", "solver": "JACOBI_L1"},
        "dense_lu_num_rows": 64,
    },
}


def measure(device, A, b, cfg, calls=200):
    A = jax.device_put(A, device)
    b = jax.device_put(b, device)
    f = jax.jit(
        lambda d, r: jaxamg.solve(
            jsparse.BCSR((d, A.indices, A.indptr), shape=A.shape), r, config=cfg
        )
    )
    x, info = jax.block_until_ready(f(A.data, b))
    times, handler, solve = [], [], []
    for _ in range(calls):
        t0 = time.perf_counter()
        jax.block_until_ready(f(A.data, b))
        times.append(time.perf_counter() - t0)
        if device.platform == "gpu":  # the CUDA handler's own times of that call
            last = _ffi.cuda_native().last_solve()
            handler.append(last["lane_ms"] * 1e-3)
            solve.append(last["solve_ms"] * 1e-3)
    its = int(info["iterations"])
    return (
        min(times),
        statistics.median(times),
        its,
        min(handler, default=float("nan")),
        min(solve, default=float("nan")),
    )


def block_sweep(gpu, sizes, rows_per_block=(64, 128, 256, 512, 1024), resident=264):
    print("| n | rows per block | G | iterations | device solve min µs | call min µs |")
    print("|--:|--:|--:|--:|--:|--:|")
    for n in sizes:
        A = matrices.tridiagonal_matrix(n, 2.5, dtype=jnp.float64)
        b = matrices.rhs_random(n, seed=0, dtype=jnp.float64)
        for rows in rows_per_block:
            G = -(-n // rows)
            if G > resident:
                continue
            os.environ["JAXAMG_SMALL_CG_BLOCKS"] = str(G)
            t_min, _, its, _, s_min = measure(gpu, A, b, CG)
            print(
                f"| {n} | {rows} | {G} | {its} | {s_min * 1e6:.0f} | {t_min * 1e6:.0f} |",
                flush=True,
            )
    os.environ.pop("JAXAMG_SMALL_CG_BLOCKS", None)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--block-sweep", type=int, nargs="+", metavar="N", default=None)
    args = ap.parse_args()
    gpu, cpu = jax.devices("gpu")[0], jax.devices("cpu")[0]
    print(
        f"# {datetime.datetime.now(datetime.UTC).isoformat()} {gpu.device_kind}; "
        f"jax {jax.__version__}"
    )
    if args.block_sweep:
        block_sweep(gpu, args.block_sweep)
        return
    problems = [
        (
            "tridiagonal 10^4, CG",
            matrices.tridiagonal_matrix(10_000, 2.5, dtype=jnp.float64),
            matrices.rhs_random(10_000, seed=0, dtype=jnp.float64),
            CG,
        ),
        (
            "Poisson 32^3, PCG + classical AMG",
            matrices.poisson3d_matrix(32, dtype=jnp.float64),
            matrices.rhs_random(32**3, seed=1, dtype=jnp.float64),
            PCG_AMG,
        ),
    ]
    print(
        "| problem | device | min µs | median µs | iterations | µs per iteration (min) | "
        "handler min µs | device solve min µs |"
    )
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    for name, A, b, cfg in problems:
        for label, dev in (("GPU", gpu), ("CPU", cpu)):
            t_min, t_med, its, h_min, s_min = measure(dev, A, b, cfg)
            print(
                f"| {name} | {label} | {t_min * 1e6:.0f} | {t_med * 1e6:.0f} | {its} | "
                f"{t_min * 1e6 / max(its, 1):.1f} | {h_min * 1e6:.0f} | {s_min * 1e6:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
