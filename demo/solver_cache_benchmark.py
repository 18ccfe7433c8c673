"""What the solver cache saves: the same jitted solve with the cache cleared
before every call (a full AMG setup each time) and with a warm cache (the
setup of the first call reused by the next ones).

A 2-D Poisson problem, one JACOBI_L1-smoothed AMG V-cycle as preconditioner
of PCG to 1e-6, called repeatedly from a jitted function. JAX-AMG's demo
uses a 5000 x 5000 grid on a GPU; the default here is 1000 x 1000 (1 M
unknowns). ``JAXAMG_CACHE_SIZE`` sets how many setups the cache keeps.

    python demo/solver_cache_benchmark.py --n 1000
    JAXAMG_DEMO_SMALL=1 python demo/solver_cache_benchmark.py      # 64 x 64

Checks: both variants give the same solution (to 1e-12); the times and the
speedup are reported.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 1000)")
    parser.add_argument("--calls", type=int, default=5)
    args = parser.parse_args(argv)
    n = args.n or (64 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 1000)

    import time

    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import sparse

    import jaxamg
    from jaxamg import matrices

    jax.config.update("jax_enable_x64", True)
    A = matrices.poisson_matrix(n, dtype=jnp.float64)
    b = matrices.rhs_random(n * n, seed=0, dtype=jnp.float64)
    config = {
        "solver": "PCG",
        "tolerance": 1e-6,
        "max_iters": 500,
        "preconditioner": {
            "solver": "AMG",
            "max_iters": 1,
            "smoother": {"solver": "JACOBI_L1", "scope": "jacobi"},
        },
    }

    def solve_values(values, rhs):
        matrix = sparse.BCSR((values, A.indices, A.indptr), shape=A.shape)
        return jaxamg.solve(matrix, rhs, config=config)[0]

    solve = jax.jit(solve_values)
    jax.block_until_ready(solve(A.data, b))  # compile

    def timed(clear: bool) -> tuple[float, np.ndarray]:
        times = []
        for _ in range(args.calls):
            if clear:
                jaxamg.clear_solver_cache()
            start = time.perf_counter()
            x = jax.block_until_ready(solve(A.data, b))
            times.append(time.perf_counter() - start)
        return float(np.median(times)), np.asarray(x)

    cold, x_cold = timed(clear=True)
    warm, x_warm = timed(clear=False)
    print(f"{n} x {n} Poisson ({n * n:,} unknowns), median of {args.calls} jitted calls:")
    print(f"  cache cleared before each call: {cold * 1e3:9.1f} ms")
    print(f"  warm cache:                     {warm * 1e3:9.1f} ms")
    print(f"  speedup from the cache: {cold / warm:.1f}x")
    difference = float(np.max(np.abs(x_cold - x_warm)) / np.max(np.abs(x_cold)))
    print(f"max |x_cold - x_warm| / max |x| = {difference:.1e}")
    ok = difference < 1e-12  # the timings are reported, not asserted
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
