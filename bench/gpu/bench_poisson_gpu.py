"""3D 7-point Poisson on a CUDA GPU: jaxamg (setup on the host, solve on the
device) against jax.scipy.sparse.linalg.cg and CuPy's CG, float64, true
relative residual 1e-8.

Per size: jaxamg setup (first direct call minus a cached direct call),
resetup (new values, same pattern), cached solve (jitted, the BCSR matrix an
argument; median of 7), setup and resetup inside that jitted call (after
clearing the cache; with values that change every call) minus the cached
call, the handler's own setup/resetup time (`last_solve()["refresh_ms"]`), iterations, operator complexity, the
traffic model (bytes per iteration, counted by the device solver) over the
measured copy bandwidth against the measured time per iteration, the true
residual, and jax.value_and_grad of sum(x**2) with respect to the matrix
values and b (forward + adjoint solve, on a warm cache); then jax.scipy CG with
the BCSR matrix passed as an argument (not closed over) and CuPy CG.

    python bench/gpu/bench_poisson_gpu.py --sizes 128 192 [--configs pcg_classical_l1]
        [--amg-precision SAME FLOAT]

--amg-precision runs each jaxamg config once per value of the AMG scope's
x_amg_precision (FLOAT: a float32 hierarchy inside the float64 solve).
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import os
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg._core import ffi as _ffi

jax.config.update("jax_enable_x64", True)

TOL = 1e-8


def pcg_amg(amg: dict, smoother: dict) -> dict:
    """PCG to TOL (AmgX's RELATIVE_INI_CORE, L2) preconditioned by one AMG
    V-cycle with a dense LU coarse solve; `amg` adds the coarsening keys."""
    return {
        "config_version": 2,
        "solver": {
            "scope": "main",
            "solver": "PCG",
            "max_iters": 500,
            "tolerance": TOL,
            "convergence": "RELATIVE_INI_CORE",
            "norm": "L2",
            "monitor_residual": 1,
            "store_res_history": 1,
            "preconditioner": {
                "scope": "amg",
                "solver": "AMG",
                "max_iters": 1,
                "cycle": "V",
                "presweeps": 1,
                "postsweeps": 1,
                "max_levels": 25,
                "coarse_solver": "DENSE_LU_SOLVER",
                "dense_lu_num_rows": 64,
                **amg,
                "smoother": smoother,
            },
        },
    }


CLASSICAL = {
    "algorithm": "CLASSICAL",
    "selector": "PMIS",
    "strength_threshold": 0.25,
    "interpolator": "D2",
    "interp_max_elements": 4,
}
L1 = {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 1.0}

CONFIGS = {
    # PCG + classical AMG (PMIS, D2, Pmax 4, theta 0.25) with l1-Jacobi.
    "pcg_classical_l1": pcg_amg(CLASSICAL, L1),
    # PCG + classical AMG with Chebyshev(2) on l1-Jacobi: more work per level, fewer cycles.
    "pcg_classical_cheby2": pcg_amg(
        CLASSICAL,
        {
            "scope": "cheby",
            "solver": "CHEBYSHEV",
            "chebyshev_polynomial_order": 2,
            "chebyshev_lambda_estimate_mode": 3,
            "cheby_max_lambda": 1.0,
            "cheby_min_lambda": 0.25,
            "preconditioner": L1,
        },
    ),
    # PCG + aggregation (SIZE_8) with l1-Jacobi (two sweeps, 0.9): cheapest setup.
    "pcg_aggregation_l1": pcg_amg(
        {"algorithm": "AGGREGATION", "selector": "SIZE_8", "presweeps": 2, "postsweeps": 2},
        dict(L1, relaxation_factor=0.9),
    ),
}
# FGMRES(30) over the classical AMG of pcg_classical_l1: the engine's own
# FGMRES on the device (before, any GMRES solved on the host).
CONFIGS["fgmres_classical_l1"] = copy.deepcopy(CONFIGS["pcg_classical_l1"])
CONFIGS["fgmres_classical_l1"]["solver"].update(solver="FGMRES", gmres_n_restart=30)
# FGMRES(30) + aggregation (SIZE_8) + MULTICOLOR_DILU: the multicolour sweep
# of the one engine on the device (the colouring from the host setup).
CONFIGS["fgmres_aggregation_dilu"] = pcg_amg(
    {"algorithm": "AGGREGATION", "selector": "SIZE_8"},
    {"scope": "dilu", "solver": "MULTICOLOR_DILU", "relaxation_factor": 1.0},
)
CONFIGS["fgmres_aggregation_dilu"]["solver"].update(solver="FGMRES", gmres_n_restart=30)
# JAX-AMG's default config (PBICGSTAB + classical PMIS/D2 + BLOCK_JACOBI 0.9,
# strength 0.5, a one-row dense LU), what a call without a config runs, to TOL.
CONFIGS["jaxamg_default"] = copy.deepcopy(jaxamg.config.DEFAULT_CONFIG)
CONFIGS["jaxamg_default"]["solver"].update(tolerance=TOL, convergence="RELATIVE_INI_CORE")
# The same, and a resetup (new values, same pattern) keeps every level's
# aggregates and recomputes only the coarse values (AmgX structure reuse).
CONFIGS["pcg_aggregation_l1_reuse"] = copy.deepcopy(CONFIGS["pcg_aggregation_l1"])
CONFIGS["pcg_aggregation_l1_reuse"]["solver"]["preconditioner"]["structure_reuse_levels"] = -1


# The CPU benchmark's tuned config (PMIS with one aggressive level, two-stage
# interpolation there, Chebyshev(2) on l1-Jacobi): a shipped config.
CONFIGS["pcg_classical_agg1_cheby2"] = jaxamg.config.load("PCG_CLASSICAL_AGG1_CHEBY2")


def with_amg_precision(cfg: dict, precision: str) -> dict:
    """A copy of `cfg` whose AMG scopes have x_amg_precision = `precision`."""
    out = copy.deepcopy(cfg)

    def visit(scope):
        if not isinstance(scope, dict):
            return
        if scope.get("solver") == "AMG":
            scope["x_amg_precision"] = precision
        for key in ("solver", "preconditioner", "smoother", "coarse_solver"):
            visit(scope.get(key))

    visit(out)
    return out


def poisson3d(m: int, convection: float = 0.0) -> sp.csr_matrix:
    """7-point Laplacian on an m^3 grid, Dirichlet, rows in x-fastest order;
    `convection` > 0 adds a first-order upwind term c * du/dx (nonsymmetric)."""
    n = m**3
    idx = np.arange(n, dtype=np.int64)
    i, j, k = idx % m, (idx // m) % m, idx // (m * m)
    rows, cols, vals = [idx], [idx], [np.full(n, 6.0)]
    vals[0] = vals[0] + convection
    for off, ok in (
        (1, i > 0),
        (-1, i < m - 1),
        (m, j > 0),
        (-m, j < m - 1),
        (m * m, k > 0),
        (-m * m, k < m - 1),
    ):
        r = idx[ok]
        rows.append(r)
        cols.append(r - off)
        vals.append(np.full(r.size, -1.0 - (convection if off == 1 else 0.0)))
    A = sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    A.sort_indices()
    A.indptr = A.indptr.astype(np.int32)
    A.indices = A.indices.astype(np.int32)
    return A


def sync(x):
    jax.block_until_ready(x)
    return x


def timed(fn, repeat=5):
    ts = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = sync(fn())
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), min(ts), out


def copy_bandwidth() -> float:
    """Device-to-device copy, bytes read + written per second (CuPy)."""
    import cupy as cp

    a = cp.ones(256 * 1024 * 1024, dtype=cp.float64)  # 2 GiB
    b = cp.empty_like(a)
    for _ in range(3):
        cp.copyto(b, a)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    reps = 10
    for _ in range(reps):
        cp.copyto(b, a)
    stop.record()
    stop.synchronize()
    t = cp.cuda.get_elapsed_time(start, stop) / 1e3 / reps
    return 2 * a.nbytes / t


def true_relres(M, x, b) -> float:
    r = b - M @ x
    return float(jnp.linalg.norm(r) / jnp.linalg.norm(b))


def bench_jaxamg(name, cfg, A, Mg, bg, bw, out):
    cuda = _ffi.cuda_native()
    cuda.clear_cache()
    # Direct call: the first one sets up on the host and uploads.
    t0 = time.perf_counter()
    x, info = jaxamg.solve(Mg, bg, config=cfg)
    sync(x)
    first = time.perf_counter() - t0
    last = cuda.last_solve()
    assert last["on_device"], last["host_reason"]
    setup_on_device = bool(last.get("setup_on_device", False))
    eager_setup_ms = last.get("refresh_ms")
    eager_med, _, _ = timed(lambda: jaxamg.solve(Mg, bg, config=cfg)[0], repeat=5)
    # Resetup: new values on the same pattern.
    M2 = jsparse.BCSR((Mg.data * 1.000001, Mg.indices, Mg.indptr), shape=Mg.shape)
    t0 = time.perf_counter()
    sync(jaxamg.solve(M2, bg, config=cfg)[0])
    resetup_total = time.perf_counter() - t0
    eager_resetup_ms = cuda.last_solve().get("refresh_ms")
    # Jitted, the matrix an argument: a cached call does device work only.
    solve = jax.jit(lambda M, rhs: jaxamg.solve(M, rhs, config=cfg))
    sync(solve(Mg, bg))
    solve_med, solve_min, (x, info) = timed(lambda: solve(Mg, bg), repeat=7)
    last = cuda.last_solve()
    # The same jitted call after the cache was cleared (a setup inside the
    # call), and with values that change every call (a resetup inside it).
    setups = []
    for _ in range(3):
        cuda.clear_cache()
        cuda.peak_device_bytes(reset=True)
        t0 = time.perf_counter()
        sync(solve(Mg, bg))
        setups.append((time.perf_counter() - t0, cuda.last_solve().get("refresh_ms")))
    # The most jaxamg held at once during the last setup (scratch included).
    setup_peak_bytes = cuda.peak_device_bytes()
    hierarchy_bytes = cuda.live_device_bytes()
    jit_setup, jit_setup_ms = min(setups)
    resetups = []
    for i in range(6):
        t0 = time.perf_counter()
        sync(solve(M2 if i % 2 == 0 else Mg, bg))
        resetups.append((time.perf_counter() - t0, cuda.last_solve().get("refresh_ms")))
    jit_resetup, jit_resetup_ms = sorted(resetups)[len(resetups) // 2]
    sync(solve(Mg, bg))
    its = int(info["iterations"])
    levels = last["levels"]
    op_cx = sum(l[1] for l in levels) / levels[0][1]
    relres = true_relres(Mg, x, bg)
    bytes_it = last["bytes"] / max(its, 1)

    # value_and_grad of a loss that uses the solution (so XLA cannot drop the
    # forward solve), with respect to the matrix values and b, jitted, warm:
    # one forward solve, one adjoint solve on the forward's setup, and the
    # outer product over the pattern.
    def loss(data, rhs):
        M = jsparse.BCSR((data, Mg.indices, Mg.indptr), shape=Mg.shape)
        return jnp.sum(jaxamg.solve(M, rhs, config=cfg)[0] ** 2)

    vg = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))
    # Its own cache entry (another executable): the solve's hierarchy goes
    # first, so that the largest hierarchies fit once, not twice.
    cuda.clear_cache()
    sync(vg(Mg.data, bg))
    grad_med, _, _ = timed(lambda: vg(Mg.data, bg), repeat=5)
    row = {
        "method": f"jaxamg {name}",
        "n": A.shape[0],
        "nnz": A.nnz,
        "setup_on_device": setup_on_device,
        "setup_s": first - eager_med,
        "first_call_s": first,
        "resetup_s": resetup_total - eager_med,
        "solve_s": solve_med,
        "solve_min_s": solve_min,
        "handler_setup_ms": eager_setup_ms,
        "handler_resetup_ms": eager_resetup_ms,
        "jit_setup_s": jit_setup - solve_med,
        "jit_setup_handler_ms": jit_setup_ms,
        "jit_resetup_s": jit_resetup - solve_med,
        "jit_resetup_handler_ms": jit_resetup_ms,
        "setup_peak_device_bytes": setup_peak_bytes,
        "device_bytes_after_setup": hierarchy_bytes,
        "solve_direct_call_s": eager_med,
        "iterations": its,
        "status": int(info["status"]),
        "true_relres": relres,
        "levels": len(levels),
        "op_complexity": op_cx,
        "bytes_per_iter": bytes_it,
        "model_s_per_iter": bytes_it / bw,
        "measured_s_per_iter": solve_med / max(its, 1),
        "value_and_grad_s": grad_med,
        "value_and_grad_over_solve": grad_med / solve_med,
    }
    out.append(row)
    print(json.dumps(row), flush=True)


def bench_jax_cg(A, Mg, bg, out):
    from jax.scipy.sparse.linalg import cg

    @jax.jit
    def run(M, b):
        return cg(lambda v: M @ v, b, tol=TOL, atol=0.0, maxiter=20000)[0]

    sync(run(Mg, bg))  # compile
    med, mn, x = timed(lambda: run(Mg, bg), repeat=3)
    row = {
        "method": "jax.scipy cg (BCSR argument)",
        "n": A.shape[0],
        "nnz": A.nnz,
        "solve_s": med,
        "solve_min_s": mn,
        "true_relres": true_relres(Mg, x, bg),
    }
    out.append(row)
    print(json.dumps(row), flush=True)


def bench_cupy_cg(A, b, out):
    import cupy as cp
    import cupyx.scipy.sparse as csp
    from cupyx.scipy.sparse.linalg import cg

    Ag = csp.csr_matrix(A)
    bg = cp.asarray(b)
    its = [0]

    def count(_):
        its[0] += 1

    cg(Ag, bg, rtol=TOL, maxiter=20000)
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(3):
        its[0] = 0
        t0 = time.perf_counter()
        x, _ = cg(Ag, bg, rtol=TOL, maxiter=20000, callback=count)
        cp.cuda.Device().synchronize()
        ts.append(time.perf_counter() - t0)
    rel = float(cp.linalg.norm(bg - Ag @ x) / cp.linalg.norm(bg))
    row = {
        "method": "cupy cg",
        "n": A.shape[0],
        "nnz": A.nnz,
        "solve_s": statistics.median(ts),
        "solve_min_s": min(ts),
        "iterations": its[0],
        "true_relres": rel,
    }
    out.append(row)
    print(json.dumps(row), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[128, 192])
    ap.add_argument("--configs", nargs="+", default=["pcg_classical_l1"])
    ap.add_argument("--peers", action="store_true", help="also jax.scipy CG and CuPy CG")
    ap.add_argument(
        "--amg-precision",
        nargs="+",
        default=["SAME"],
        choices=["SAME", "FLOAT"],
        help="x_amg_precision of the AMG scopes (FLOAT: float32 hierarchy)",
    )
    ap.add_argument(
        "--spmv",
        nargs="+",
        default=["own"],
        choices=["own", "cusparse"],
        help="JAXAMG_SPMV: the fused own kernels or cuSPARSE's SpMV",
    )
    ap.add_argument(
        "--convection",
        type=float,
        default=0.0,
        help="upwind convection coefficient: a nonsymmetric matrix, solved "
        "with PBICGSTAB in place of PCG (the jax/CuPy CG peers are skipped)",
    )
    args = ap.parse_args()
    dev = jax.devices("gpu")[0]
    print(
        f"# {datetime.datetime.now(datetime.UTC).isoformat()} device: "
        f"{dev.device_kind}; jax {jax.__version__}",
        flush=True,
    )
    bw = copy_bandwidth()
    print(
        f"# measured device-to-device copy bandwidth: {bw / 1e12:.2f} TB/s (read + write)",
        flush=True,
    )
    out = []
    rng = np.random.default_rng(0)
    for m in args.sizes:
        t0 = time.perf_counter()
        A = poisson3d(m, args.convection)
        b = rng.normal(size=A.shape[0])
        print(
            f"# poisson3d-{m}: n={A.shape[0]} nnz={A.nnz} (built in "
            f"{time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
        Mg = jax.device_put(
            jsparse.BCSR(
                (jnp.asarray(A.data), jnp.asarray(A.indices), jnp.asarray(A.indptr)), shape=A.shape
            ),
            dev,
        )
        bg = jax.device_put(jnp.asarray(b), dev)
        for name in args.configs:
            for precision in args.amg_precision:
                for spmv in args.spmv:
                    # Read when a device solver is built, i.e. after the cache is cleared.
                    os.environ["JAXAMG_SPMV"] = spmv
                    label = name if precision == "SAME" else f"{name} amg={precision}"
                    label += "" if spmv == "own" else f" spmv={spmv}"
                    try:
                        cfg = with_amg_precision(CONFIGS[name], precision)
                        if args.convection:
                            cfg["solver"]["solver"] = "PBICGSTAB"
                            label += f" convection={args.convection:g}"
                        bench_jaxamg(label, cfg, A, Mg, bg, bw, out)
                    except Exception as e:  # keep the other measurements
                        print(
                            f"# jaxamg {label} at {m}: FAILED {type(e).__name__}: {e}", flush=True
                        )
                    _ffi.cuda_native().clear_cache()
        os.environ.pop("JAXAMG_SPMV", None)
        if args.peers and not args.convection:
            for fn, a in ((bench_jax_cg, (A, Mg, bg, out)), (bench_cupy_cg, (A, b, out))):
                try:
                    fn(*a)
                except Exception as e:
                    print(f"# {fn.__name__} at {m}: FAILED {type(e).__name__}: {e}", flush=True)
        _ffi.cuda_native().clear_cache()
    print(
        "\n| method | n | setup s | resetup s | solve s | direct call s | iters | true relres | "
        "op. cx | bytes/iter (model) | model s/iter | measured s/iter | value_and_grad s | v&g/solve |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    f = lambda v, fmt: (fmt % v) if v is not None else ""
    for r in out:
        print(
            f"| {r['method']} | {r['n']} | {f(r.get('setup_s'), '%.3f')} | "
            f"{f(r.get('resetup_s'), '%.3f')} | {f(r.get('solve_s'), '%.4f')} | "
            f"{f(r.get('solve_direct_call_s'), '%.4f')} | "
            f"{f(r.get('iterations'), '%d')} | {f(r.get('true_relres'), '%.2e')} | "
            f"{f(r.get('op_complexity'), '%.2f')} | {f(r.get('bytes_per_iter'), '%.3g')} | "
            f"{f(r.get('model_s_per_iter'), '%.2e')} | {f(r.get('measured_s_per_iter'), '%.2e')} | "
            f"{f(r.get('value_and_grad_s'), '%.4f')} | "
            f"{f(r.get('value_and_grad_over_solve'), '%.2f')} |"
        )


if __name__ == "__main__":
    main()
