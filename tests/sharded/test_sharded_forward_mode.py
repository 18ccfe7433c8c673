"""Forward mode through the sharded solver: jax.jvp with respect to the packed
matrix values and b, eager and compiled, equals dx = A^-1 (db - dA x) from
SciPy's direct solver on the global system; under jit the off-rank x_j of
dA x travel by all_to_all inside shard_map. Needs the native MPI module."""

import jax
import numpy as np
import pytest
import scipy.sparse.linalg as spla
from mpi_testing import assert_all, config
from sharded_problems import local_block, partition, random_system

import jaxamg

pytestmark = pytest.mark.usefixtures("native_mpi")

RTOL = 1e-8  # the solves converge to a relative residual of 1e-12


def _close(got, ref):
    got, ref = np.asarray(got), np.asarray(ref)
    return float(np.linalg.norm(got - ref)) <= RTOL * max(float(np.linalg.norm(ref)), 1e-300)


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("unequal", [False, True])
def test_jvp_equals_the_direct_solve(comm, symmetric, unequal):
    n = 60
    rng = np.random.default_rng(11)
    M = random_system(n, 11, nonsymmetric=not symmetric)
    dM = M.copy()
    dM.data = rng.standard_normal(M.nnz)
    b_global, db_global = rng.standard_normal(n), rng.standard_normal(n)
    starts = partition(n, comm.size, unequal)
    rs, re = starts[comm.rank], starts[comm.rank + 1]
    b = jaxamg.make_sharded_vector(b_global[rs:re], global_size=n)
    db = jaxamg.make_sharded_vector(db_global[rs:re], global_size=n)
    A = jaxamg.make_sharded_matrix(local_block(M, starts, comm.rank), b)
    dA = jaxamg.make_sharded_matrix(local_block(dM, starts, comm.rank), b)
    solver = jaxamg.make_sharded_solver(A, b, config=config(symmetric), is_symmetric=symmetric)

    x_ref = spla.spsolve(M.tocsc(), b_global)
    dx_ref = spla.spsolve(M.tocsc(), db_global - dM @ x_ref)[rs:re]

    def solve(data, rhs):
        return solver(rhs, A=data)[0]

    with jax.set_mesh(A.mesh):
        _, eager = jax.block_until_ready(jax.jvp(solve, (A.data, b), (dA.data, db)))
        compiled = jax.jit(lambda p, t: jax.jvp(solve, p, t)[1])((A.data, b), (dA.data, db))
        compiled = jax.block_until_ready(compiled)
        text = (
            jax.jit(lambda p, t: jax.jvp(solve, p, t)[1])
            .lower((A.data, b), (dA.data, db))
            .as_text()
        )
    for label, t in (("eager", eager), ("jit", compiled)):
        assert_all(comm, _close(solver.local_vector(t), dx_ref), f"{label} dx")
        padding = np.asarray(t.addressable_shards[0].data)[re - rs :]
        assert_all(comm, not np.any(padding), f"{label}: tangent of padded slots")
    if comm.size > 1:
        assert_all(
            comm,
            "all_to_all" in text and "jaxamg_mpi_gather_columns" not in text,
            "dA x under jit must exchange by all_to_all",
        )
