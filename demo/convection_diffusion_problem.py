"""Convection-diffusion with a manufactured solution.

-eps Laplace(u) + v . grad(u) = f on a square, discretised by
``jaxamg.matrices.convection_diffusion_matrix_2d`` (5-point diffusion,
first-order upwind convection, spacing h = 1/(n-1), node (i, j) at
y = i h, x = j h, zero values outside the grid). The exact solution is
u = sin(pi (x + h) / (1 + 2h)) sin(pi (y + h) / (1 + 2h)), which vanishes on
the ring of points just outside the grid, exactly where the discretisation
assumes zeros; f is computed from u analytically. The discrete solution then
differs from u by the discretisation error only, O(h) for upwinding.

    python demo/convection_diffusion_problem.py     # 256 x 256 grid
    JAXAMG_DEMO_SMALL=1 python demo/convection_diffusion_problem.py

The problem is solved on the grid and on one with half the points per side.
Checks: both solves converge, and the observed order of accuracy
log2(error(n/2) / error(n)) is between 0.8 and 1.3 (first order).
"""

from __future__ import annotations

import argparse
import math
import os
import sys


def solve_grid(n: int, epsilon: float, theta: float, velocity: float):
    import jax.numpy as jnp

    import jaxamg
    from jaxamg.matrices import convection_diffusion_matrix_2d

    h = 1.0 / (n - 1)
    a = math.pi / (1.0 + 2.0 * h)
    coords = jnp.arange(n, dtype=jnp.float64) * h
    y, x = jnp.meshgrid(coords, coords, indexing="ij")  # row index i is y
    sx, sy = jnp.sin(a * (x + h)), jnp.sin(a * (y + h))
    cx, cy = jnp.cos(a * (x + h)), jnp.cos(a * (y + h))
    u = sx * sy
    vx, vy = velocity * math.cos(theta), velocity * math.sin(theta)
    f = epsilon * 2 * a**2 * u + vx * a * cx * sy + vy * a * sx * cy
    A = convection_diffusion_matrix_2d(n, epsilon, theta, velocity, dtype=jnp.float64)
    x_h, info = jaxamg.solve(A, f.ravel(), tolerance=1e-10)
    error = float(jnp.max(jnp.abs(x_h - u.ravel())))
    rel_l2 = float(jnp.linalg.norm(x_h - u.ravel()) / jnp.linalg.norm(u))
    return info, error, rel_l2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 256)")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--velocity", type=float, default=100.0)
    parser.add_argument("--theta", type=float, default=math.pi / 6)
    args = parser.parse_args(argv)
    n = args.n or (48 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 256)

    import time

    import jax

    import jaxamg

    jax.config.update("jax_enable_x64", True)
    print(
        f"-{args.epsilon} Laplace(u) + v . grad(u) = f, |v| = {args.velocity}, "
        f"angle {args.theta:.3f} rad"
    )
    errors = {}
    ok = True
    for size in (n // 2, n):
        start = time.perf_counter()
        info, error, rel_l2 = solve_grid(size, args.epsilon, args.theta, args.velocity)
        seconds = time.perf_counter() - start
        errors[size] = error
        print(
            f"  {size:4d} x {size:<4d}: {info['status']}, {info['iterations']} iterations, "
            f"{seconds:.2f} s; max error {error:.3e}, relative L2 error {rel_l2:.3e}"
        )
        ok &= info["status"] == jaxamg.AMGXStatus.SUCCESS
    h_ratio = (n - 1) / (n // 2 - 1)
    order = math.log(errors[n // 2] / errors[n]) / math.log(h_ratio)
    print(f"observed order of accuracy: {order:.2f} (first-order upwinding: 1)")
    ok &= 0.8 < order < 1.3
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
