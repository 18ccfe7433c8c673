"""SciPy peer: unpreconditioned CG (SPD) or restarted GMRES (nonsymmetric).

``scipy.sparse.linalg.cg(A, b, rtol=tol, atol=0, maxiter=...)`` and
``gmres(..., restart=30)``, from x0 = 0.  Both are bounded by an iteration cap
(--maxiter, total inner iterations) and a wall-clock cap (--time-cap); a run
stopped by either is reported as NOT_CONVERGED with the iterate reached.
There is no setup phase.  Single-threaded.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import runner_common as rc  # noqa: E402


class _Stop(Exception):
    pass


def main() -> None:
    p = rc.base_parser(__doc__)
    p.add_argument("--method", choices=["cg", "gmres"], required=True)
    p.add_argument("--restart", type=int, default=30)
    p.add_argument("--time-cap", type=float, default=120.0)
    args = p.parse_args()

    import numpy as np
    import scipy
    import scipy.sparse.linalg as sla

    A, b = rc.load_problem(args.npz)
    Aw, bw = rc.warmup_problem()
    (sla.cg if args.method == "cg" else sla.gmres)(Aw, bw, rtol=args.tol)
    del Aw, bw

    def run_once(first: bool) -> dict:
        state = {"it": 0, "x": None, "stopped": None}
        solve_mem = rc.PhaseMemory()
        with solve_mem:
            t0 = rc.now()
            deadline = t0 + args.time_cap
            if args.method == "cg":

                def cb(xk):
                    state["it"] += 1
                    state["x"] = xk
                    if rc.now() > deadline:
                        state["stopped"] = "time cap"
                        raise _Stop

                try:
                    x, info = sla.cg(
                        A, b, rtol=args.tol, atol=0.0, maxiter=args.maxiter, callback=cb
                    )
                except _Stop:
                    x, info = np.array(state["x"]), 1
            else:
                x = np.zeros_like(b)
                info = 1

                def cb(_):
                    state["it"] += 1

                while state["it"] < args.maxiter and rc.now() < deadline:
                    cycle = min(args.restart, args.maxiter - state["it"])
                    x, info = sla.gmres(
                        A,
                        b,
                        x0=x,
                        rtol=args.tol,
                        atol=0.0,
                        restart=cycle,
                        maxiter=1,
                        callback=cb,
                        callback_type="pr_norm",
                    )
                    if info == 0:
                        break
                if info != 0 and rc.now() >= deadline:
                    state["stopped"] = "time cap"
            t1 = rc.now()
        if info != 0 and state["stopped"] is None:
            state["stopped"] = "iteration cap"
        out = {"setup_seconds": 0.0, "solve_seconds": t1 - t0}
        if first:
            out.update(
                {
                    "x": x,
                    "iterations": state["it"],
                    "reported_residual": None,
                    "status": "SUCCESS" if info == 0 else f"NOT_CONVERGED ({state['stopped']})",
                    "setup_peak_increase_bytes": 0,
                    "solve_peak_increase_bytes": solve_mem.increase,
                    "hwm_reset": solve_mem.hwm_reset,
                    "levels": [],
                    "operator_complexity": None,
                    "grid_complexity": None,
                }
            )
        return out

    res = rc.timed_repeats(run_once, args.repeat, args.repeat_budget)
    x = res.pop("x")
    settings = f"{args.method}, rtol={args.tol:g}, iteration cap {args.maxiter}, time cap {args.time_cap:g} s"
    if args.method == "gmres":
        settings += f", restart {args.restart}"
    res.update(
        {
            "threads": 1,
            "version": f"scipy {scipy.__version__}, numpy {np.__version__}",
            "settings": settings,
        }
    )
    rc.emit(res, x, args.xout)


if __name__ == "__main__":
    main()
