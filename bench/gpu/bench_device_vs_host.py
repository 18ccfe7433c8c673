"""The same jitted jaxamg.solve with JAX's arrays on the GPU and on the CPU,
in one process: what a configuration gains by running on the device rather
than in the host engine (where a GPU solve of it ran before the device
covered it). 3D Poisson, float64, true relative residual 1e-8.

    PYTHONPATH=<package> python3 bench/gpu/bench_device_vs_host.py --sizes 128 \\
        --configs fgmres_aggregation_dilu pcg_dilu_preconditioner idrmsync_aggregation_l1
"""

import argparse
import copy
import datetime
import os

import jax
import jax.numpy as jnp
from bench_poisson_gpu import CONFIGS, TOL, poisson3d, sync, timed
from jax.experimental import sparse as jsparse

import jaxamg

jax.config.update("jax_enable_x64", True)

# PCG with MULTICOLOR_DILU as the whole preconditioner (JAX-AMG's MPI demos
# use this one), no AMG.
DEVICE_VS_HOST = dict(CONFIGS)
DEVICE_VS_HOST["pcg_dilu_preconditioner"] = {
    "config_version": 2,
    "solver": {
        "scope": "main",
        "solver": "PCG",
        "max_iters": 2000,
        "tolerance": TOL,
        "convergence": "RELATIVE_INI_CORE",
        "norm": "L2",
        "monitor_residual": 1,
        "preconditioner": {"scope": "p", "solver": "MULTICOLOR_DILU"},
    },
}

# IDR(4), synchronised, around the aggregation AMG of pcg_aggregation_l1.
DEVICE_VS_HOST["idrmsync_aggregation_l1"] = copy.deepcopy(CONFIGS["pcg_aggregation_l1"])
DEVICE_VS_HOST["idrmsync_aggregation_l1"]["solver"].update(solver="IDRMSYNC", subspace_dim_s=4)


def measure(cfg, A, b, device):
    M = jax.device_put(jsparse.BCSR.from_scipy_sparse(A), device)
    rhs = jax.device_put(jnp.asarray(b), device)
    solve = jax.jit(lambda M, r: jaxamg.solve(M, r, config=cfg))
    x, info = sync(solve(M, rhs))  # setup, compile
    med, best, _ = timed(lambda: solve(M, rhs)[0], repeat=5)
    relres = float(jnp.linalg.norm(rhs - M @ x) / jnp.linalg.norm(rhs))
    return {
        "solve_s": med,
        "best_s": best,
        "iters": int(info["iterations"]),
        "relres": relres,
        "on_device": bool(info["solve_on_device"]),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[128])
    ap.add_argument("--configs", nargs="+", default=["fgmres_aggregation_dilu"])
    args = ap.parse_args()
    gpu, cpu = jax.devices("gpu")[0], jax.devices("cpu")[0]
    print(
        f"# {datetime.datetime.now(datetime.UTC).isoformat()} {gpu.device_kind} against "
        f"the host engine on {os.cpu_count()} CPU cores; jax {jax.__version__}"
    )
    print("| config | n | device solve s | iters | host solve s | iters | host/device |")
    print("|---|---|---|---|---|---|---|")
    for m in args.sizes:
        A = poisson3d(m)
        b = jax.random.normal(jax.random.PRNGKey(0), (A.shape[0],), dtype=jnp.float64)
        for name in args.configs:
            cfg = copy.deepcopy(DEVICE_VS_HOST[name])
            d = measure(cfg, A, b, gpu)
            h = measure(cfg, A, b, cpu)
            assert d["on_device"] and not h["on_device"]
            assert d["relres"] <= 1.01 * TOL and h["relres"] <= 1.01 * TOL, (d, h)
            print(
                f"| {name} | {A.shape[0]} | {d['solve_s']:.4f} | {d['iters']} | "
                f"{h['solve_s']:.4f} | {h['iters']} | {h['solve_s'] / d['solve_s']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
