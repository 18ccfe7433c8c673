"""One AMG hierarchy, three ways to use it.

On a 2-D Poisson matrix (symmetric, and skewed to make it nonsymmetric) in
float64, compare:

* ``jaxamg.solve`` with AMG-preconditioned Krylov configs (all inside the
  engine);
* ``jax.scipy.sparse.linalg`` cg / bicgstab / gmres with
  ``M = jaxamg.preconditioners.make_preconditioner(A)`` (one AMG V-cycle per
  application, the Krylov loop in JAX);
* lineax CG / BiCGStab / GMRES with
  ``make_lineax_preconditioner(operator)``, where the operator is matrix-free
  (``v -> A @ v``) and its preconditioner matrix is assembled from its
  detected sparsity.

CG needs a symmetric matrix, so it runs on the symmetric problem only. Times
are of a second, warm call (compilation and AMG setup excluded).

    python demo/preconditioned_solver.py       # 64 x 64 grid
    JAXAMG_DEMO_SMALL=1 python demo/preconditioned_solver.py

Checks: every method reaches a relative residual |b - A x| / |b| below 1e-6
(tolerance 1e-8).
"""

from __future__ import annotations

import argparse
import os
import sys


def methods_for(A, symmetric: bool, tol: float) -> dict:
    """name -> jitted b -> x, for one matrix."""
    import jax
    import jax.numpy as jnp
    import lineax as lx

    import jaxamg
    from jaxamg.preconditioners import make_lineax_preconditioner, make_preconditioner

    def matvec(v):
        return A @ v

    M = make_preconditioner(A)
    tags = (lx.symmetric_tag, lx.positive_semidefinite_tag) if symmetric else ()
    vector = jax.ShapeDtypeStruct((A.shape[0],), jnp.float64)
    operator = lx.FunctionLinearOperator(matvec, vector, tags)
    P = make_lineax_preconditioner(operator)

    def engine(solver, **extra):
        return jax.jit(lambda b: jaxamg.solve(A, b, solver=solver, tolerance=tol, **extra)[0])

    def jax_krylov(name, **extra):
        method = getattr(jax.scipy.sparse.linalg, name)
        return jax.jit(lambda b: method(matvec, b, M=M, tol=tol, maxiter=500, **extra)[0])

    def lineax(solver):
        options = {"preconditioner": P}
        return jax.jit(lambda b: lx.linear_solve(operator, b, solver, options=options).value)

    methods = {}
    if symmetric:
        methods["jaxamg.solve PCG+AMG"] = engine("PCG")
    methods["jaxamg.solve PBICGSTAB+AMG"] = engine("PBICGSTAB")
    methods["jaxamg.solve FGMRES+AMG"] = engine("FGMRES", gmres_n_restart=30)
    if symmetric:
        methods["jax cg, M = AMG"] = jax_krylov("cg")
    methods["jax bicgstab, M = AMG"] = jax_krylov("bicgstab")
    methods["jax gmres, M = AMG"] = jax_krylov("gmres", restart=30)
    if symmetric:
        methods["lineax CG, AMG"] = lineax(lx.CG(rtol=tol, atol=0.0, max_steps=500))
    methods["lineax BiCGStab, AMG"] = lineax(lx.BiCGStab(rtol=tol, atol=0.0, max_steps=500))
    methods["lineax GMRES, AMG"] = lineax(lx.GMRES(rtol=tol, atol=0.0, max_steps=500, restart=30))
    return methods


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=None, help="grid points per side (default 64)")
    parser.add_argument("--skew", type=float, default=1.0)
    args = parser.parse_args(argv)
    n = args.n or (16 if os.environ.get("JAXAMG_DEMO_SMALL") == "1" else 64)

    import time

    import jax
    import jax.numpy as jnp

    from jaxamg.matrices import poisson_matrix, rhs_random

    jax.config.update("jax_enable_x64", True)
    size = n * n
    b = rhs_random(size, seed=0, dtype=jnp.float64)
    ok = True
    for skew in (0.0, args.skew):
        A = poisson_matrix(n, skew, dtype=jnp.float64)
        methods = methods_for(A, symmetric=skew == 0.0, tol=1e-8)
        kind = "symmetric" if skew == 0.0 else f"skew {skew}, nonsymmetric"
        print(f"2-D Poisson {n} x {n} ({kind}), {size} unknowns")
        print(f"  {'method':<28} {'time (s)':>9} {'relative residual':>18}")
        for name, solve in methods.items():
            jax.block_until_ready(solve(b))  # compile, AMG setup
            start = time.perf_counter()
            x = jax.block_until_ready(solve(b))
            seconds = time.perf_counter() - start
            rel = float(jnp.linalg.norm(b - A @ x) / jnp.linalg.norm(b))
            print(f"  {name:<28} {seconds:9.4f} {rel:18.3e}")
            ok &= rel < 1e-6
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
