"""A 1-D tridiagonal system (diagonal 4, off-diagonals -1) solved with CG.

    python demo/tridiagonal_system.py          # 1024 unknowns
    JAXAMG_DEMO_SMALL=1 python demo/tridiagonal_system.py

Checks: CG converges and the relative residual |b - A x| / |b| is below 1e-5.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="unknowns (default 1024)")
    args = parser.parse_args(argv)
    n = args.n or (128 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 1024)

    import jax.numpy as jnp

    import jaxamg
    from jaxamg import matrices

    A = matrices.tridiagonal_matrix(n, diagonal_value=4.0)
    b = matrices.rhs_random(n, seed=1)
    x, info = jaxamg.solve(A, b, solver="CG")
    rel = float(jnp.linalg.norm(b - A @ x) / jnp.linalg.norm(b))
    print(f"tridiagonal system, n = {n}, diagonal 4, solver CG ({x.dtype})")
    print(f"status: {info['status']}")
    print(f"iterations: {info['iterations']}")
    print(f"relative residual: {rel:.3e}")
    ok = info["status"] == jaxamg.AMGXStatus.SUCCESS and rel < 1e-5
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
