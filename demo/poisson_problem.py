"""2-D Poisson problem with three right-hand sides (ones, linear, random),
solved one at a time and then as one vmapped batch.

    python demo/poisson_problem.py            # 32 x 32 grid
    python demo/poisson_problem.py --n 64
    JAXAMG_DEMO_SMALL=1 python demo/poisson_problem.py

Checks: every solve converges, the relative residual |b - A x| / |b| is below
1e-5, and the batched solutions equal the individual ones.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 32)")
    args = parser.parse_args(argv)
    n = args.n or (12 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 32)

    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxamg
    from jaxamg import matrices

    jax.config.update("jax_enable_x64", True)
    size = n * n
    A = matrices.poisson_matrix(n, dtype=jnp.float64)
    rhs = {
        "ones": matrices.rhs_ones(size, dtype=jnp.float64),
        "linear": matrices.rhs_linear(size, dtype=jnp.float64),
        "random": matrices.rhs_random(size, seed=0, dtype=jnp.float64),
    }
    print(f"2-D Poisson, {n} x {n} grid: {size} unknowns, {A.nse} nonzeros")

    ok = True
    individual = {}
    for name, b in rhs.items():
        x, info = jaxamg.solve(A, b)
        rel = float(jnp.linalg.norm(b - A @ x) / jnp.linalg.norm(b))
        individual[name] = x
        print(
            f"  {name:>6}: {info['status']}, {info['iterations']} iterations, "
            f"relative residual {rel:.3e}"
        )
        ok &= info["status"] == jaxamg.AMGXStatus.SUCCESS and rel < 1e-5

    B = jnp.stack(list(rhs.values()))
    X, info = jax.vmap(lambda b: jaxamg.solve(A, b))(B)
    rel = jnp.linalg.norm(B - jax.vmap(lambda x: A @ x)(X), axis=1) / jnp.linalg.norm(B, axis=1)
    diff = max(float(jnp.max(jnp.abs(X[i] - individual[name]))) for i, name in enumerate(rhs))
    print(
        f"  batch of {B.shape[0]} (jax.vmap): iterations {np.asarray(info['iterations'])}, "
        f"max relative residual {float(rel.max()):.3e}"
    )
    print(f"max |x_batch - x_individual| = {diff:.3e}")
    ok &= bool(rel.max() < 1e-5) and diff < 1e-10
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
