"""A large random sparse system: FGMRES with aggregation AMG.

``jaxamg.matrices.random_matrix(n, density)`` is a random sparse matrix
made diagonally dominant (unsymmetric, no grid behind it). The default
100 000 x 100 000 at density 1e-3 holds about 10 M nonzeros; JAX-AMG's demo
uses density 1e-2 (about 1e8 nonzeros, for a GPU). The solve is checked
against the true residual, and for a small system against SciPy's direct
solver.

    python demo/large_random_matrix.py --n 100000 --density 0.001
    JAXAMG_DEMO_SMALL=1 python demo/large_random_matrix.py     # n = 2000, density 1e-2

Checks: status SUCCESS, a true relative residual below 1e-8, and (n <= 5000)
agreement with SciPy's direct solve to 1e-7.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="unknowns (default 100000)")
    parser.add_argument("--density", type=float, default=None, help="default 1e-3 (small: 1e-2)")
    args = parser.parse_args(argv)
    small = os.environ.get("JAXAMG_DEMO_SMALL") == "1"
    n = args.n or (2000 if small else 100_000)
    density = args.density or (1e-2 if small else 1e-3)

    import time

    import jax
    import jax.numpy as jnp
    import numpy as np
    import scipy.sparse.linalg as spla

    import jaxamg
    from jaxamg import matrices, utils

    jax.config.update("jax_enable_x64", True)
    start = time.perf_counter()
    A = matrices.random_matrix(n, density=density, dtype=jnp.float64, seed=3)
    b = matrices.rhs_random(n, seed=4, dtype=jnp.float64)
    print(f"random {n:,} x {n:,}, {A.nse:,} nonzeros, built in {time.perf_counter() - start:.2f} s")
    config = {
        "solver": "FGMRES",
        "tolerance": 1e-10,
        "max_iters": 300,
        "gmres_n_restart": 30,
        "preconditioner": {
            "solver": "AMG",
            "algorithm": "AGGREGATION",
            "selector": "SIZE_4",
            "max_iters": 1,
        },
    }
    start = time.perf_counter()
    x, info = jaxamg.solve(A, b, config=config)
    x = jax.block_until_ready(x)
    residual = float(jnp.linalg.norm(b - A @ x) / jnp.linalg.norm(b))
    print(
        f"FGMRES + AMG: {time.perf_counter() - start:.2f} s, {int(info['iterations'])} iterations, "
        f"status {jaxamg.AMGXStatus(int(info['status']))}, true relative residual {residual:.2e}"
    )
    ok = int(info["status"]) == 0 and residual < 1e-8
    if n <= 5000:
        reference = spla.spsolve(utils.to_scipy(A, "csc"), np.asarray(b))
        error = float(np.linalg.norm(np.asarray(x) - reference) / np.linalg.norm(reference))
        print(f"relative error against SciPy's direct solve: {error:.2e}")
        ok = ok and error < 1e-7
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
