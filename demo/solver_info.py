"""What ``info`` tells you: iterations, final residual, status and the
residual history, for a well and a badly conditioned system.

Both are 500-point tridiagonal matrices solved with plain CG: diagonal 4
(condition number about 3) and diagonal 2 (the 1-D Laplacian, condition
number about 1e5). With at most 50 iterations the first converges and the
second stops with NOT_CONVERGED; with at most one iteration both stop. The
residual histories are plotted (matplotlib, no display needed).

    python demo/solver_info.py                      # writes solver_info_convergence.png
    python demo/solver_info.py --plot /tmp/conv.png
    JAXAMG_DEMO_SMALL=1 python demo/solver_info.py

Checks: the statuses above, the history starts at |b| and ends at the
reported residual, and the plot file is written.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="unknowns (default 500)")
    parser.add_argument("--plot", default="solver_info_convergence.png", help="PNG to write")
    args = parser.parse_args(argv)
    n = args.n or (200 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 500)

    import jax
    import jax.numpy as jnp
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import jaxamg
    from jaxamg import matrices

    jax.config.update("jax_enable_x64", True)
    S = jaxamg.AMGXStatus
    b = matrices.rhs_ones(n, dtype=jnp.float64)
    b_norm = float(jnp.linalg.norm(b))
    cases = [
        ("well conditioned (diagonal 4)", 4.0, 50, S.SUCCESS),
        ("badly conditioned (diagonal 2)", 2.0, 50, S.NOT_CONVERGED),
        ("well conditioned (diagonal 4)", 4.0, 1, S.NOT_CONVERGED),
        ("badly conditioned (diagonal 2)", 2.0, 1, S.NOT_CONVERGED),
    ]
    ok = True
    fig, ax = plt.subplots(figsize=(6, 4))
    for label, diagonal, max_iters, expected in cases:
        A = matrices.tridiagonal_matrix(n, diagonal, dtype=jnp.float64)
        _, info = jaxamg.solve(A, b, solver="CG", max_iters=max_iters)
        history = info["residual_history"]
        print(f"{label}, CG, max_iters={max_iters}:")
        print(f"  status:     {info['status']}")
        print(f"  iterations: {info['iterations']}")
        print(f"  residual:   {info['residual']:.3e} (relative {info['residual'] / b_norm:.3e})")
        print(f"  history:    {len(history)} entries, {history[0]:.3e} ... {history[-1]:.3e}")
        ok &= info["status"] == expected
        ok &= len(history) == info["iterations"] + 1
        ok &= abs(history[0] - b_norm) <= 1e-12 * b_norm and history[-1] == info["residual"]
        if max_iters > 1:
            ax.semilogy([r / b_norm for r in history], label=label)
    ax.axhline(1e-6, color="gray", linestyle=":", label="tolerance 1e-6 (RELATIVE_INI)")
    ax.set_xlabel("CG iteration")
    ax.set_ylabel("|r_k| / |b|")
    ax.set_title(f"CG on {n}-point tridiagonal matrices")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=100)
    plt.close(fig)
    written = os.path.getsize(args.plot) if os.path.exists(args.plot) else 0
    print(f"convergence plot: {args.plot} ({written} bytes)")
    ok &= written > 0
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
