"""A jitted solve's time before and after one eager (un-jitted) gradient in the
same process.

XLA runs eager custom calls on its worker threads; a solve there would start a
second OpenMP thread team and slow every later parallel region of the process
(see docs/performance.md). The CPU handler keeps one team, so the two times
should match.

    .venv/bin/python bench/eager_gradient_threads.py
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
from jax.experimental import sparse as jsparse

jax.config.update("jax_enable_x64", True)

import jaxamg  # noqa: E402
from jaxamg import matrices  # noqa: E402

CONFIG = {"solver": "CG", "tolerance": 1e-8, "max_iters": 200}


def main() -> None:
    A = matrices.tridiagonal_matrix(10_000, 2.5, dtype=jnp.float64)
    b = matrices.rhs_random(10_000, seed=0, dtype=jnp.float64)
    solve = jax.jit(
        lambda d, r: jaxamg.solve(
            jsparse.BCSR((d, A.indices, A.indptr), shape=A.shape), r, config=CONFIG
        )[0]
    )

    def fastest_us(calls: int = 200) -> float:
        solve(A.data, b).block_until_ready()
        times = []
        for _ in range(calls):
            t0 = time.perf_counter()
            solve(A.data, b).block_until_ready()
            times.append(time.perf_counter() - t0)
        return min(times) * 1e6

    before = fastest_us()
    jax.grad(lambda r: jnp.sum(jaxamg.solve(A, r, config=CONFIG)[0] ** 2))(b).block_until_ready()
    after = fastest_us()
    print(
        f"jitted 10^4 CG solve: {before:.0f} µs before an eager gradient, {after:.0f} µs after "
        f"({after / before:.2f}x)"
    )


if __name__ == "__main__":
    main()
