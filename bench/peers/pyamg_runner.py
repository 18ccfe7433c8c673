"""PyAMG peer: ruge_stuben_solver or smoothed_aggregation_solver, Krylov-accelerated.

Setup is the hierarchy construction with PyAMG's defaults (RS: classical
strength theta = 0.25, RS splitting, classical interpolation, symmetric
Gauss-Seidel; SA: symmetric strength, standard aggregation, Jacobi-smoothed
prolongation, symmetric block GS; ``symmetry='nonsymmetric'`` for
nonsymmetric matrices).  A problem with a near null space (the rigid-body
modes of elasticity) gives SA ``B`` = those vectors and the matrix as BSR
with its block size, so aggregates keep whole nodes.  Solve is ``ml.solve(b, tol, accel=...)`` from
x0 = 0.  PyAMG is single-threaded.
"""

from __future__ import annotations

import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import runner_common as rc  # noqa: E402


def main() -> None:
    p = rc.base_parser(__doc__)
    p.add_argument("--method", choices=["rs", "sa"], required=True)
    p.add_argument("--accel", default="cg", help="cg, gmres, fgmres, ... (PyAMG names)")
    p.add_argument("--nonsymmetric", action="store_true")
    args = p.parse_args()

    import numpy as np
    import pyamg

    A, b = rc.load_problem(args.npz)
    structure = rc.load_structure(args.npz)

    def build(M=A, structure=structure):
        if args.method == "rs":
            return pyamg.ruge_stuben_solver(M)
        if args.nonsymmetric:
            return pyamg.smoothed_aggregation_solver(M, symmetry="nonsymmetric")
        if structure["near_nullspace"] is not None:
            k = structure["block_dim"]
            return pyamg.smoothed_aggregation_solver(
                M.tobsr(blocksize=(k, k)), B=structure["near_nullspace"]
            )
        return pyamg.smoothed_aggregation_solver(M)

    Aw, bw = rc.warmup_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build(Aw, {"near_nullspace": None}).solve(bw, tol=args.tol, accel=args.accel)
    del Aw, bw

    def run_once(first: bool) -> dict:
        setup_mem = rc.PhaseMemory()
        solve_mem = rc.PhaseMemory()
        with setup_mem:
            t0 = rc.now()
            ml = build()
            t1 = rc.now()
        residuals: list[float] = []
        with solve_mem:
            t2 = rc.now()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                x, info = ml.solve(
                    b,
                    tol=args.tol,
                    maxiter=args.maxiter,
                    accel=args.accel,
                    residuals=residuals,
                    return_info=True,
                )
            t3 = rc.now()
        out = {"setup_seconds": t1 - t0, "solve_seconds": t3 - t2}
        if first:
            levels = [(lv.A.shape[0], lv.A.nnz) for lv in ml.levels]
            out.update(rc.hierarchy_stats(levels))
            out.update(
                {
                    "x": x,
                    "iterations": max(0, len(residuals) - 1),
                    "reported_residual": (residuals[-1] / residuals[0])
                    if residuals and residuals[0]
                    else None,
                    "status": "SUCCESS" if info == 0 else f"NOT_CONVERGED (info={info})",
                    "setup_peak_increase_bytes": setup_mem.increase,
                    "solve_peak_increase_bytes": solve_mem.increase,
                    "hwm_reset": setup_mem.hwm_reset,
                }
            )
        del ml
        return out

    res = rc.timed_repeats(run_once, args.repeat, args.repeat_budget)
    x = res.pop("x")
    res.update(
        {
            "threads": 1,
            "version": f"pyamg {pyamg.__version__}, numpy {np.__version__}",
            "settings": f"{args.method} defaults, accel={args.accel}, tol={args.tol:g}, "
            f"maxiter={args.maxiter}",
        }
    )
    rc.emit(res, x, args.xout)


if __name__ == "__main__":
    main()
