"""Learn a source strength through a large 3-D Poisson solve.

The right-hand side is b(theta) = theta * b0 on an n^3 grid; the target x*
solves A x = b(theta*) for theta* = 2. Gradient descent on
L(theta) = 1/2 |x(theta) - x*|^2 / |x*|^2, starting from theta = 0.5, takes
its gradient through jaxamg's solve (the adjoint solve reuses the forward
AMG setup). L is quadratic in theta with curvature |x(1)|^2 / |x*|^2 = 1/4,
so the step 4 is Newton's and one step lands on theta*; the demo takes a
smaller step (2) and converges geometrically.

    python demo/large_3d_poisson_optimization.py --n 128     # 2.1 M unknowns
    JAXAMG_DEMO_SMALL=1 python demo/large_3d_poisson_optimization.py   # 12^3

Checks: theta within 1e-6 of 2 and the last gradient within 1e-5 of the
exact (theta - 2) / 4.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 64)")
    parser.add_argument("--steps", type=int, default=25)
    args = parser.parse_args(argv)
    n = args.n or (12 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 64)

    import time

    import jax
    import jax.numpy as jnp

    import jaxamg
    from jaxamg import matrices

    jax.config.update("jax_enable_x64", True)
    A = matrices.poisson3d_matrix(n, dtype=jnp.float64)
    b0 = matrices.rhs_random(n**3, seed=2, dtype=jnp.float64)
    config = {"solver": "PCG", "tolerance": 1e-12, "preconditioner": {"solver": "AMG"}}
    true_theta = 2.0
    x_target, _ = jaxamg.solve(A, true_theta * b0, config=config)

    def loss(theta):
        x, _ = jaxamg.solve(A, theta * b0, config=config)
        return 0.5 * jnp.sum((x - x_target) ** 2) / jnp.sum(x_target**2)

    step_fn = jax.jit(jax.value_and_grad(loss))
    theta = jnp.asarray(0.5)
    start = time.perf_counter()
    for step in range(args.steps):
        value, grad = step_fn(theta)
        if step % 5 == 0:
            print(
                f"step {step:3d}: theta {float(theta):.8f}, loss {float(value):.3e}, gradient {float(grad):+.3e}"
            )
        theta = theta - 2.0 * grad
    seconds = time.perf_counter() - start
    _, last_grad = step_fn(theta)
    exact = (float(theta) - true_theta) / 4
    print(
        f"{n}^3 grid: theta {float(theta):.8f} (true {true_theta}) after {args.steps} jitted "
        f"steps in {seconds:.2f} s; gradient {float(last_grad):+.3e}, exact {exact:+.3e}"
    )
    ok = abs(float(theta) - true_theta) < 1e-6 and abs(float(last_grad) - exact) < 1e-5
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
