"""CG needs a symmetric matrix; BiCGStab does not.

A 2-D Poisson matrix is symmetric; adding a skew (a convection-like term,
here 0.5) makes it nonsymmetric. Plain CG converges on the first and not on
the second; BiCGStab converges on both.

    python demo/nonsymmetric_system.py         # 32 x 32 grid
    JAXAMG_DEMO_SMALL=1 python demo/nonsymmetric_system.py

Checks: CG succeeds at skew 0 and reports NOT_CONVERGED at skew 0.5 (max_iters
1000); BiCGStab succeeds at skew 0.5 with relative residual below 1e-6.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 32)")
    parser.add_argument("--skew", type=float, default=0.5)
    args = parser.parse_args(argv)
    n = args.n or (16 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 32)

    import jax
    import jax.numpy as jnp

    import jaxamg
    from jaxamg import matrices

    jax.config.update("jax_enable_x64", True)
    b = matrices.rhs_ones(n * n, dtype=jnp.float64)
    results = {}
    print(f"2-D Poisson, {n} x {n} grid")
    for skew in (0.0, args.skew):
        A = matrices.poisson_matrix(n, skew, dtype=jnp.float64)
        for solver in ("CG", "BICGSTAB"):
            x, info = jaxamg.solve(A, b, solver=solver, max_iters=1000)
            rel = float(jnp.linalg.norm(b - A @ x) / jnp.linalg.norm(b))
            results[skew, solver] = (info["status"], rel)
            print(
                f"  skew {skew:<4} {solver:>8}: {info['status']}, "
                f"{info['iterations']} iterations, relative residual {rel:.3e}"
            )
    S = jaxamg.AMGXStatus
    ok = (
        results[0.0, "CG"][0] == S.SUCCESS
        and results[args.skew, "CG"][0] == S.NOT_CONVERGED
        and results[args.skew, "BICGSTAB"][0] == S.SUCCESS
        and results[args.skew, "BICGSTAB"][1] < 1e-6
    )
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
