"""Many matrices sharing one pattern: jax.vmap(solve, in_axes=(0, 0)) over
the matrix values and the right-hand sides (one native call, each lane set
up on the shared symbolic structure) against a Python loop of jitted solves
of the same systems, one after another.

The matrices are the 3-D 7-point Poisson pattern with random positive
cell coefficients per lane (a_ij scaled by (c_i + c_j) / 2 off the diagonal,
the diagonal the negated row sum plus a small shift): different values,
one pattern, as in a parameter sweep or a batch of PDE coefficients. Every
lane's solution is checked against its own SciPy direct solve at the end.

Usage: python bench/batched_matrices.py [--n 32] [--lanes 8] [--repeat 5]
           [--configs default PCG_CLASSICAL_AGG1_CHEBY2]

Each round solves the K systems both ways (interleaved, so both see the same
load); times are medians over rounds, with the setup inside every timed call
(the values change between lanes, so every lane sets up its hierarchy).
Prints a markdown table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402
from jax.experimental import sparse  # noqa: E402

jax.config.update("jax_enable_x64", True)

from batched_rhs import load_config  # noqa: E402  (bench/ is the script's folder)

import jaxamg  # noqa: E402
from jaxamg import matrices  # noqa: E402


def lane_values(A, lanes, rng):
    """(lanes, nnz) values on A's pattern: random cell coefficients per lane."""
    n = A.shape[0]
    indptr, indices = np.asarray(A.indptr), np.asarray(A.indices)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    off = rows != indices
    values = np.empty((lanes, indices.size))
    for k in range(lanes):
        c = np.exp(rng.uniform(-1.0, 1.0, n))
        v = np.zeros(indices.size)
        v[off] = -(c[rows[off]] + c[indices[off]]) / 2
        diagonal = -np.bincount(rows[off], weights=v[off], minlength=n) + 0.01
        v[~off] = diagonal[rows[~off]]
        values[k] = v
    return jnp.asarray(values)


def run(n, lanes, repeat, config_name):
    A = matrices.poisson3d_matrix(n, dtype=jnp.float64)
    rng = np.random.default_rng(0)
    V = lane_values(A, lanes, rng)
    B = jnp.asarray(rng.normal(size=(lanes, A.shape[0])))
    config = load_config(config_name)

    def solve(values, b):
        M = sparse.BCSR((values, A.indices, A.indptr), shape=A.shape)
        return jaxamg.solve(M, b, config=config)

    one = jax.jit(solve)
    batched = jax.jit(jax.vmap(solve, in_axes=(0, 0)))

    def loop():
        return [one(V[k], B[k]) for k in range(lanes)]

    x_batched, info = jax.block_until_ready(batched(V, B))  # compile
    x_loop = jax.block_until_ready(loop())
    t_batched, t_loop = [], []
    for _ in range(repeat):
        for fn, times in ((lambda: batched(V, B), t_batched), (loop, t_loop)):
            start = time.perf_counter()
            jax.block_until_ready(fn())
            times.append(time.perf_counter() - start)
    errors = []
    for k in range(lanes):
        M = sp.csr_matrix((np.asarray(V[k]), np.asarray(A.indices), np.asarray(A.indptr)))
        reference = spla.spsolve(M.tocsc(), np.asarray(B[k]))
        for x in (x_batched[k], x_loop[k][0]):
            errors.append(np.linalg.norm(np.asarray(x) - reference) / np.linalg.norm(reference))
    its = [int(i) for i in np.asarray(info["iterations"])]
    med = statistics.median
    return {
        "config": "default" if config is None else Path(config_name).stem,
        "iterations": f"{min(its)}-{max(its)}",
        "batched": med(t_batched),
        "loop": med(t_loop),
        "speedup": med([s / b for s, b in zip(t_loop, t_batched)]),
        "max_error": max(errors),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=32, help="grid points per axis (n^3 unknowns)")
    p.add_argument("--lanes", type=int, default=8)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--configs", nargs="+", default=["default", "PCG_CLASSICAL_AGG1_CHEBY2"])
    a = p.parse_args()
    print(
        f"3-D Poisson pattern {a.n}^3 = {a.n**3} unknowns, {a.lanes} matrices (random "
        f"coefficients) and right-hand sides, median of {a.repeat} rounds, "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'default')}, {os.cpu_count()} CPUs\n"
    )
    print(
        f"| config | iterations (lanes) | vmap over {a.lanes} matrices (s) | Python loop of "
        f"{a.lanes} jitted solves (s) | loop / vmap | max error vs SciPy |"
    )
    print("|---|---|---|---|---|---|")
    for name in a.configs:
        r = run(a.n, a.lanes, a.repeat, name)
        print(
            f"| {r['config']} | {r['iterations']} | {r['batched']:.3f} | {r['loop']:.3f} "
            f"| {r['speedup']:.2f} | {r['max_error']:.1e} |"
        )


if __name__ == "__main__":
    main()
