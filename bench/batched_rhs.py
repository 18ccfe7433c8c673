"""Batched right-hand sides: one solve against 8 solved together (jax.vmap
over b: one FFI call, one setup, multi-vector kernels) and 8 solved one after
another (8 jitted calls on the same cached setup), on the 3-D 7-point
Poisson matrix.

Usage: python bench/batched_rhs.py [--n 64] [--lanes 8] [--repeat 5]
           [--configs default PCG_CLASSICAL_AGG1_CHEBY2]  (shipped names or JSON files)

Every timing is the median of --repeat rounds with the solver cache warm (the
setup is done once, before timing); a round runs the three cases one after
another, and the ratios are medians of the ratios within a round, which a
busy machine disturbs less than the times. Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxamg  # noqa: E402
from jaxamg import matrices  # noqa: E402


def seconds(fn):
    """Wall-clock and process CPU seconds of fn()."""
    t, c = time.perf_counter(), time.process_time()
    jax.block_until_ready(fn())
    return time.perf_counter() - t, time.process_time() - c


def interleaved(fns, repeat):
    """Per function, the list of its times over `repeat` rounds; each round
    runs every function once, so that they share the machine's load."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for k, fn in enumerate(fns):
            times[k].append(seconds(fn))
    return times


def load_config(name):
    if name == "default":
        return None
    if Path(name).exists():
        return json.loads(Path(name).read_text())
    return jaxamg.config.load(name)


def run(n, lanes, repeat, config_name):
    A = matrices.poisson3d_matrix(n, dtype=jnp.float64)
    rng = np.random.default_rng(0)
    B = jnp.asarray(rng.normal(size=(lanes, A.shape[0])))
    config = load_config(config_name)

    one = jax.jit(lambda b: jaxamg.solve(A, b, config=config))
    many = jax.jit(jax.vmap(lambda b: jaxamg.solve(A, b, config=config)))

    def sequential():
        return [one(B[k]) for k in range(lanes)]

    # Warm up: compile, and the one setup every timed call then reuses.
    _, info_one = jax.block_until_ready(one(B[0]))
    _, info_many = jax.block_until_ready(many(B))
    jax.block_until_ready(sequential())
    times = interleaved([lambda: one(B[0]), lambda: many(B), sequential], repeat)
    t_one, t_many, t_seq = ([w for w, _ in ts] for ts in times)
    c_one, c_many, c_seq = ([c for _, c in ts] for ts in times)
    its = [int(i) for i in np.asarray(info_many["iterations"])]
    med = statistics.median
    return {
        # CPU time: insensitive to waiting for a busy machine's cores.
        "cpu_batched_ratio": med(c_many) / med(c_one),
        "cpu_sequential_ratio": med(c_seq) / med(c_one),
        "config": "default" if config is None else Path(config_name).stem,
        "iterations_one": int(info_one["iterations"]),
        "iterations_batched": f"{min(its)}-{max(its)}",
        "one": med(t_one),
        "batched": med(t_many),
        "sequential": med(t_seq),
        # Ratios within a round (same load), then their median.
        "batched_ratio": med([m / o for m, o in zip(t_many, t_one)]),
        "sequential_ratio": med([s / o for s, o in zip(t_seq, t_one)]),
        "speedup": med([s / m for s, m in zip(t_seq, t_many)]),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=64, help="grid points per axis (n^3 unknowns)")
    p.add_argument("--lanes", type=int, default=8)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument(
        "--configs",
        nargs="+",
        default=["default", "PCG_CLASSICAL_AGG1_CHEBY2"],
    )
    a = p.parse_args()
    print(
        f"3-D Poisson {a.n}^3 = {a.n**3} unknowns, {a.lanes} right-hand sides, "
        f"median of {a.repeat} rounds, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'default')}, "
        f"{os.cpu_count()} CPUs\n"
    )
    print(
        f"| config | iterations (1 / batched lanes) | 1 solve (s) | {a.lanes} batched (s) "
        f"| {a.lanes} sequential (s) | batched / 1 | sequential / 1 | sequential / batched "
        f"| CPU batched / 1 | CPU sequential / 1 |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name in a.configs:
        r = run(a.n, a.lanes, a.repeat, name)
        print(
            f"| {r['config']} | {r['iterations_one']} / {r['iterations_batched']} "
            f"| {r['one']:.3f} | {r['batched']:.3f} | {r['sequential']:.3f} "
            f"| {r['batched_ratio']:.2f} | {r['sequential_ratio']:.2f} | {r['speedup']:.2f} "
            f"| {r['cpu_batched_ratio']:.2f} | {r['cpu_sequential_ratio']:.2f} |"
        )


if __name__ == "__main__":
    main()
