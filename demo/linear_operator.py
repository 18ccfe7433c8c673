"""Matrix-free operators next to the matrices they represent.

``jaxamg.matrices.tridiagonal_operator`` and ``poisson_operator`` are plain
JAX functions x -> A x (a 1-D and a 2-D convolution). jaxamg.sparsity finds
their sparsity pattern from the function's jaxpr, colours the columns so that
no two columns of one colour share a row, and assembles the sparse matrix
with one operator application per colour. The assembled matrix is then
solved like any other.

    python demo/linear_operator.py             # 1024 unknowns, 32 x 32 grid
    JAXAMG_DEMO_SMALL=1 python demo/linear_operator.py

Checks: each assembled matrix equals the builder's matrix of the same map
(for the skewed Poisson operator that is poisson_matrix(-skew), the
transpose of poisson_matrix(skew): the convolution flips the stencil), and
the solutions through the operator and through the matrix agree to 1e-10.
"""

from __future__ import annotations

import argparse
import os
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 32)")
    args = parser.parse_args(argv)
    m = args.n or (12 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 32)

    import time

    import jax
    import jax.numpy as jnp

    import jaxamg
    from jaxamg import matrices, sparsity

    jax.config.update("jax_enable_x64", True)
    f64 = jnp.float64
    # (name, unknowns, operator, the builder's matrix of the same map)
    cases = [
        (
            "tridiagonal, d = 3",
            m * m,
            matrices.tridiagonal_operator(3.0, dtype=f64),
            matrices.tridiagonal_matrix(m * m, 3.0, dtype=f64),
        ),
        (
            "Poisson, skew 0",
            m * m,
            matrices.poisson_operator(0.0, dtype=f64),
            matrices.poisson_matrix(m, 0.0, dtype=f64),
        ),
        # The convolution flips the stencil: poisson_operator(s) is
        # poisson_matrix(s) transposed, which is poisson_matrix(-s).
        (
            "Poisson, skew 1",
            m * m,
            matrices.poisson_operator(1.0, dtype=f64),
            matrices.poisson_matrix(m, -1.0, dtype=f64),
        ),
    ]
    ok = True
    for name, size, op, A in cases:
        start = time.perf_counter()
        coloring = sparsity.cache_coloring(op, size)
        A_op = sparsity.materialize_operator(op, size)
        seconds = time.perf_counter() - start
        same = bool(jnp.array_equal(A_op.todense(), A.todense()))
        b = matrices.rhs_random(size, seed=3, dtype=f64)
        x_op, info_op = jaxamg.solve(A_op, b, tolerance=1e-12)
        x_mat, _ = jaxamg.solve(A, b, tolerance=1e-12)
        diff = float(jnp.linalg.norm(x_op - x_mat) / jnp.linalg.norm(x_mat))
        print(
            f"{name}: {size} unknowns, {int(coloring[3])} colours, {A_op.nse} nonzeros, "
            f"assembled in {seconds:.2f} s; equals the builder's matrix: {same}"
        )
        print(
            f"  solve: {info_op['status']}, {info_op['iterations']} iterations; "
            f"|x_operator - x_matrix| / |x_matrix| = {diff:.2e}"
        )
        ok &= same and diff < 1e-10 and info_op["status"] == jaxamg.AMGXStatus.SUCCESS
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
