"""jaxamg against JAX's own sparse solvers on one tridiagonal system.

A tridiagonal matrix with diagonal 2.5 (well conditioned, so even plain
Krylov methods converge quickly) is solved with:

- jaxamg's CG and BiCGSTAB (``jaxamg.solve(..., solver=...)``, no
  preconditioner, RELATIVE_MAX to 1e-6, at most 100 iterations, as
  JAX-AMG's demo);
- ``jax.scipy.sparse.linalg.cg`` and ``bicgstab`` on the same BCSR matrix
  (tol 1e-6, maxiter 100);
- ``jax.experimental.sparse.linalg.spsolve`` (a direct solve; on the CPU it
  calls SciPy).

For each it reports the jitted forward time, the jitted gradient time of
loss(b) = sum(x(b)^2) (the loss uses x, so the solve cannot be dropped), and
the error against SciPy's direct solve; a bar chart of the times is written
as a PNG (--plot), and the demo says where.

    python demo/jax_sparse_solver_comparison.py              # n = 1 000 000
    JAXAMG_DEMO_SMALL=1 python demo/jax_sparse_solver_comparison.py --plot /tmp/c.png

Checks: every solver's solution within 1e-5 of SciPy's direct solve, and
the gradients of jaxamg's CG and JAX's CG agree to 1e-5.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="unknowns (default 1000000)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--plot", default="jax_sparse_solver_comparison.png", help="PNG to write")
    args = parser.parse_args(argv)
    n = args.n or (2000 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 1_000_000)

    import time

    import jax
    import jax.numpy as jnp
    import matplotlib
    import numpy as np
    import scipy.sparse.linalg as spla
    from jax.experimental.sparse.linalg import spsolve

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import jaxamg
    from jaxamg import matrices, utils

    jax.config.update("jax_enable_x64", True)
    A = matrices.tridiagonal_matrix(n, diagonal_value=2.5, dtype=jnp.float64)
    b = matrices.rhs_random(n, seed=0, dtype=jnp.float64)
    reference = spla.spsolve(utils.to_scipy(A, "csc"), np.asarray(b))
    options = {"tolerance": 1e-6, "max_iters": 100, "convergence": "RELATIVE_MAX"}

    solvers = {
        "jaxamg CG": lambda rhs: jaxamg.solve(A, rhs, solver="CG", **options)[0],
        "jaxamg BiCGSTAB": lambda rhs: jaxamg.solve(A, rhs, solver="BICGSTAB", **options)[0],
        "jax.scipy cg": lambda rhs: jax.scipy.sparse.linalg.cg(
            lambda v: A @ v, rhs, tol=1e-6, maxiter=100
        )[0],
        "jax.scipy bicgstab": lambda rhs: jax.scipy.sparse.linalg.bicgstab(
            lambda v: A @ v, rhs, tol=1e-6, maxiter=100
        )[0],
        "sparse spsolve": lambda rhs: spsolve(A.data, A.indices, A.indptr, rhs),
    }

    def median_time(fn, *fn_args) -> float:
        jax.block_until_ready(fn(*fn_args))  # compile and warm up
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            jax.block_until_ready(fn(*fn_args))
            times.append(time.perf_counter() - start)
        return float(np.median(times))

    print(f"tridiagonal n = {n:,} (diagonal 2.5), median of {args.repeats} jitted calls")
    print(f"{'solver':20s} {'forward (ms)':>13s} {'gradient (ms)':>14s} {'error':>10s}")
    rows, gradients, ok = [], {}, True
    for name, solve in solvers.items():
        forward = jax.jit(solve)
        x = np.asarray(forward(b))
        error = float(np.linalg.norm(x - reference) / np.linalg.norm(reference))
        ok = ok and error < 1e-5
        t_forward = median_time(forward, b)
        if name == "sparse spsolve":
            t_gradient = float("nan")  # no reverse-mode rule for the CPU fallback
        else:
            gradient = jax.jit(jax.grad(lambda rhs, f=solve: jnp.sum(f(rhs) ** 2)))
            gradients[name] = np.asarray(gradient(b))
            t_gradient = median_time(gradient, b)
        rows.append((name, t_forward, t_gradient))
        print(f"{name:20s} {t_forward * 1e3:13.2f} {t_gradient * 1e3:14.2f} {error:10.1e}")
    g_ours, g_jax = gradients["jaxamg CG"], gradients["jax.scipy cg"]
    gradient_gap = float(np.linalg.norm(g_ours - g_jax) / np.linalg.norm(g_jax))
    print(
        f"gradient of sum(x^2): jaxamg CG vs jax.scipy cg, relative difference {gradient_gap:.1e}"
    )
    ok = ok and gradient_gap < 1e-5

    names = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4))
    positions = np.arange(len(rows))
    ax.bar(positions - 0.2, [r[1] * 1e3 for r in rows], 0.4, label="forward")
    ax.bar(positions + 0.2, [r[2] * 1e3 for r in rows], 0.4, label="gradient")
    ax.set_xticks(positions, names, rotation=15)
    ax.set_ylabel("ms (median, jitted)")
    ax.set_title(f"tridiagonal n = {n:,}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=100)
    plt.close(fig)
    print(f"plot written to {os.path.abspath(args.plot)}")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
