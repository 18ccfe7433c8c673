"""Linear elasticity with smoothed aggregation: the jaxamg engine with and
without the rigid-body modes, and PyAMG's smoothed_aggregation_solver with
them, as PCG preconditioners to a relative residual of 1e-8.

Problems (assembled with scikit-fem): a unit square (Q1, 2D) or cube (Hex1,
3D) of isotropic material (E = 1, nu = 0.3 or --nu) clamped on the face x = 0, under
its own weight (a uniform body force -e_y). Unknowns are node-interleaved
(block_dim = dimension); the near null space is the 3 (2D) or 6 (3D)
rigid-body modes of the free nodes.

    .venv/bin/python bench/elasticity.py                 # 2D 32..256, 3D 8..24
    .venv/bin/python bench/elasticity.py --dims 2 --sizes2 32 64
    .venv/bin/python bench/elasticity.py --dims 3 --sizes3 16 --nu 0.3 0.45 0.49 --classical

--classical adds classical AMG (the shipped PCG_CLASSICAL_MCGS_T025: PMIS,
D2 with 4 entries a row, theta 0.25, symmetric multicolour GS; a coarsest
level of up to 64 rows) on the block system (unknown-based coarsening) and
on the same matrix as a scalar one (every coupling), both as PCG
preconditioners.

Prints one markdown table: level, unknowns, solver, iterations, setup and
solve seconds (wall clock around the calls), operator complexity
(sum of nnz over levels / nnz of A). Threads: OMP_NUM_THREADS.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from fem_problems import elasticity

HERE = os.path.dirname(os.path.abspath(__file__))
CONFIG = "PCG_SA_NEAR_NULLSPACE"  # a shipped config
TOL = 1e-8


# Classical AMG: the shipped tuned config, with a coarsest level of up to
# 64 rows (a block system's coarse levels shrink slowly) and this file's
# tolerance.
CLASSICAL = "PCG_CLASSICAL_MCGS_T025"
CLASSICAL_OVERRIDES = {"min_coarse_rows": 64, "dense_lu_num_rows": 64}


def classical_config() -> str:
    import jaxamg

    cfg = jaxamg.config.load(CLASSICAL)
    cfg["solver"]["tolerance"] = TOL
    cfg["solver"]["preconditioner"].update(CLASSICAL_OVERRIDES)
    return json.dumps(cfg)


def relative_residual(A, x, b) -> float:
    return float(np.linalg.norm(b - A @ x) / np.linalg.norm(b))


def run_engine(A, b, dim, modes, config_text):
    import jaxamg._engine as engine

    t0 = time.perf_counter()
    s = engine.EngineSolver(config_text, "float64")
    s.setup(
        A.indptr.astype(np.int32),
        A.indices.astype(np.int32),
        A.data,
        block_dim=dim,
        near_nullspace=None if modes is None else np.ascontiguousarray(modes),
    )
    t1 = time.perf_counter()
    x, info = s.solve(b)
    t2 = time.perf_counter()
    levels = s.hierarchy()
    complexity = sum(nnz for _, nnz in levels) / A.nnz
    return {
        "iterations": info["iterations"],
        "setup": t1 - t0,
        "solve": t2 - t1,
        "complexity": complexity,
        "levels": len(levels),
        "residual": relative_residual(A, np.asarray(x), b),
        "status": info["status_name"],
    }


def run_pyamg(A, b, dim, modes):
    import pyamg

    t0 = time.perf_counter()
    ml = pyamg.smoothed_aggregation_solver(A.tobsr(blocksize=(dim, dim)), B=modes, max_coarse=300)
    t1 = time.perf_counter()
    residuals: list[float] = []
    x = ml.solve(b, tol=TOL, accel="cg", maxiter=500, residuals=residuals)
    t2 = time.perf_counter()
    return {
        "iterations": len(residuals) - 1,
        "setup": t1 - t0,
        "solve": t2 - t1,
        "complexity": ml.operator_complexity(),
        "levels": len(ml.levels),
        "residual": relative_residual(A, x, b),
        "status": "",
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dims", type=int, nargs="+", default=[2, 3])
    p.add_argument(
        "--sizes2", type=int, nargs="+", default=[32, 64, 128, 256], help="cells per side in 2D"
    )
    p.add_argument(
        "--sizes3", type=int, nargs="+", default=[8, 16, 24], help="cells per side in 3D"
    )
    p.add_argument(
        "--config", default=CONFIG, help="engine config: a shipped config's name or a JSON file"
    )
    p.add_argument("--nu", type=float, nargs="+", default=[0.3], help="Poisson ratios")
    p.add_argument("--classical", action="store_true", help="add classical AMG (see above)")
    p.add_argument("--no-pyamg", action="store_true")
    args = p.parse_args()

    import jaxamg

    if os.path.exists(args.config):
        with open(args.config) as fh:
            config_text = json.dumps(json.load(fh))
    else:
        config_text = json.dumps(jaxamg.config.load(args.config))
    classical = classical_config()
    rows = []
    for dim, cells, nu in [
        (d, c, nu)
        for d in args.dims
        for c in (args.sizes2 if d == 2 else args.sizes3)
        for nu in args.nu
    ]:
        A, b, coords = elasticity(dim, cells, nu)
        modes = jaxamg.rigid_body_modes(coords)
        runs = [
            ("jaxamg SA + rigid modes", run_engine(A, b, dim, modes, config_text)),
            ("jaxamg SA, translations only", run_engine(A, b, dim, None, config_text)),
        ]
        if args.classical:
            runs.append(("jaxamg classical, unknown-based", run_engine(A, b, dim, None, classical)))
            runs.append(("jaxamg classical, every coupling", run_engine(A, b, 1, None, classical)))
        if not args.no_pyamg:
            runs.append(("PyAMG SA + rigid modes", run_pyamg(A, b, dim, modes)))
        for name, r in runs:
            rows.append((f"{dim}D {cells}^{dim}, nu {nu}", A.shape[0], name, r))
            print(f"# {dim}D {cells} nu {nu}: {name}: {r}", flush=True)
    print()
    print(
        "| problem | unknowns | solver | iterations | setup s | solve s | op. complexity "
        "| levels | final rel. residual |"
    )
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for problem, n, name, r in rows:
        print(
            f"| {problem} | {n} | {name} | {r['iterations']} | {r['setup']:.3f} | "
            f"{r['solve']:.3f} | {r['complexity']:.2f} | {r['levels']} | "
            f"{r['residual']:.1e} |"
        )


if __name__ == "__main__":
    main()
