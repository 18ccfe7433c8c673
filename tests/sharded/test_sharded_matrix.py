"""make_sharded_matrix / ShardedMatrix: the packed values equal each rank's
CSR values plus zero padding, the structure stays rank-local, operators with
a cached coloring and null spaces attached with with_cache are accepted, and
every documented error is raised on every rank alike."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax.experimental import sparse as jsparse
from jax.sharding import PartitionSpec as P
from mpi_testing import assert_all, assert_all_raise
from sharded_problems import (
    assert_all_raise_local,
    local_block,
    partition,
    random_system,
)

import jaxamg
from jaxamg.matrices import poisson_operator
from jaxamg.mpi_utils import get_partition_info, partition_operator


def _system(comm, unequal, nonsymmetric=False, n=40):
    M = random_system(n, seed=3, nonsymmetric=nonsymmetric)
    starts = partition(n, comm.size, unequal)
    A_local = local_block(M, starts, comm.rank)
    b_local = np.random.default_rng(comm.rank).standard_normal(A_local.shape[0])
    b = jaxamg.make_sharded_vector(b_local, global_size=n)
    return M, starts, A_local, b


@pytest.mark.parametrize("unequal", [False, True])
@pytest.mark.parametrize("form", ["scipy", "bcsr", "dense"])
def test_packed_values_are_local_values_with_padding(comm, unequal, form):
    M, starts, A_local, b = _system(comm, unequal)
    given = {
        "scipy": A_local,
        "bcsr": jsparse.BCSR.from_scipy_sparse(A_local),
        "dense": A_local.toarray(),
    }[form]
    A = jaxamg.make_sharded_matrix(given, b)
    nnz = comm.allgather(A_local.nnz)
    max_nnz = max(nnz)
    assert_all(comm, A.data.shape == (comm.size * max_nnz,), f"data shape {A.data.shape}")
    assert_all(comm, A.data.sharding.spec == P("rank"), str(A.data.sharding))
    shard = np.asarray(A.data.addressable_shards[0].data)
    expected = np.zeros(max_nnz)
    expected[: A_local.nnz] = A_local.data
    assert_all(comm, np.array_equal(shard, expected), "packed shard")
    counts = list(np.diff(starts))
    assert_all(comm, list(A.row_counts) == counts, f"{A.row_counts} vs {counts}")
    assert_all(
        comm, A.partition_info == (starts[comm.rank], starts[comm.rank + 1]), str(A.partition_info)
    )
    assert_all(comm, A.max_local_size == max(counts) and A.global_size == M.shape[0], repr(A))
    assert_all(comm, A.local_nnz == A_local.nnz and A.max_local_nnz == max_nnz, repr(A))
    assert_all(comm, A.shape == M.shape and A.local_shape == A_local.shape, repr(A))
    assert_all(comm, A.mesh == b.sharding.mesh and A.axis_name == "rank", repr(A))
    back = A.local_matrix()
    same = isinstance(back, jsparse.BCSR) and back.shape == A_local.shape
    same = same and np.array_equal(np.asarray(back.todense()), A_local.toarray())
    assert_all(comm, same, "local_matrix() is not this rank's block")


def test_local_matrix_of_a_packed_array(comm):
    _, _, A_local, b = _system(comm, unequal=True)
    A = jaxamg.make_sharded_matrix(A_local, b)
    doubled = jax.jit(lambda d: 2.0 * d)(A.data)
    local = A.local_matrix(doubled)
    ok = np.allclose(np.asarray(local.data), 2.0 * A_local.data)
    ok = ok and np.array_equal(np.asarray(local.indices), A_local.indices)
    assert_all(comm, ok, "local_matrix(2 * A.data)")
    with jax.set_mesh(A.mesh):
        assert_all(
            comm,
            np.array_equal(np.asarray(A.local_matrix().data), A_local.data),
            "local_matrix under jax.set_mesh",
        )


def test_local_matrix_errors(comm):
    _, _, A_local, b = _system(comm, unequal=False)
    A = jaxamg.make_sharded_matrix(A_local, b)
    assert_all_raise(comm, ValueError, lambda: A.local_matrix(b), match="has shape")
    assert_all_raise(
        comm, ValueError, lambda: A.local_matrix(A.data.astype(jnp.float32)), match="dtype"
    )
    local_copy = jnp.zeros(A.data.shape, A.data.dtype)
    assert_all_raise_local(comm, ValueError, lambda: A.local_matrix(local_copy), match="sharded as")
    assert_all_raise(comm, ValueError, lambda: jax.jit(A.local_matrix)(A.data), match="eagerly")


def test_operator_with_cached_coloring(comm):
    n = 6
    N = n * n
    rs, re, n_local = get_partition_info(N, comm.rank, comm.size)
    op, _, _ = partition_operator(poisson_operator(0.5), N, comm.rank, comm.size)
    coloring = jaxamg.cache_coloring(op, shape=(n_local, N))
    b = jaxamg.make_sharded_vector(np.ones(n_local), global_size=N)
    A = jaxamg.make_sharded_matrix(jaxamg.with_cache(op, coloring=coloring), b)
    # Reference: the global operator applied to every unit vector.
    columns = jax.vmap(poisson_operator(0.5))(jnp.eye(N))
    expected = np.asarray(columns).T[rs:re]
    got = np.asarray(A.local_matrix().todense())
    assert_all(comm, np.allclose(got, expected), "materialized operator block")
    assert_all(comm, A._coloring_info is coloring, "coloring kept")


def test_operator_without_coloring_is_rejected(comm):
    N = 16
    _, _, n_local = get_partition_info(N, comm.rank, comm.size)
    op, _, _ = partition_operator(poisson_operator(), N, comm.rank, comm.size)
    b = jaxamg.make_sharded_vector(np.ones(n_local), global_size=N)
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.make_sharded_matrix(op, b),
        match="with_cache(op, coloring=",
    )


def test_null_spaces_and_symmetry_are_kept(comm):
    _, starts, A_local, b = _system(comm, unequal=False)
    n_local = A_local.shape[0]
    V = np.random.default_rng(1 + comm.rank).standard_normal(n_local)
    M = jsparse.BCSR.from_scipy_sparse(A_local)
    jaxamg.with_cache(M, nullspace="constant", transpose_nullspace=V, is_symmetric=True)
    A = jaxamg.make_sharded_matrix(M, b)
    ok = A._nullspace == "constant" and A._transpose_nullspace is V and A._is_symmetric
    assert_all(comm, ok, "with_cache metadata kept")


def test_matrix_errors(comm):
    M, starts, A_local, b = _system(comm, unequal=True)
    assert_all_raise(
        comm,
        TypeError,
        lambda: jaxamg.make_sharded_matrix(A_local, np.ones(3)),
        match="concrete global jax.Array",
    )
    local_b = jnp.ones(b.shape)
    assert_all_raise_local(
        comm,
        ValueError,
        lambda: jaxamg.make_sharded_matrix(A_local, local_b),
        match="NamedSharding",
    )
    # The rows of the ranks must cover the square matrix exactly.
    short = A_local[:-1] if comm.rank == 0 else A_local
    assert_all_raise(
        comm, ValueError, lambda: jaxamg.make_sharded_matrix(short, b), match="row counts"
    )
    # A vector of another partition.
    other = jaxamg.make_sharded_vector(np.ones(3))
    assert_all_raise(
        comm, ValueError, lambda: jaxamg.make_sharded_matrix(A_local, other), match="row counts"
    )
    wrong_cols = sp.csr_matrix(A_local.toarray()[:, :-1]) if comm.rank == 0 else A_local
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.make_sharded_matrix(wrong_cols, b),
        match="different column counts",
    )
    f32 = A_local.astype(np.float32) if comm.rank == 0 else A_local
    assert_all_raise(
        comm, ValueError, lambda: jaxamg.make_sharded_matrix(f32, b), match="different dtypes"
    )
    assert_all_raise(
        comm,
        TypeError,
        lambda: jaxamg.make_sharded_matrix(A_local.astype(np.complex128), b),
        match="complex",
    )
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.make_sharded_matrix(A_local, b, axis_name="x"),
        match="one-dimensional",
    )
    stacked = jnp.stack([b, b])
    assert_all_raise(
        comm, ValueError, lambda: jaxamg.make_sharded_matrix(A_local, stacked), match="1-D vector"
    )


def test_matrix_with_empty_rank_is_rejected(comm):
    n = 10
    starts = [0] + [n] * comm.size  # rank 0 owns everything
    M = random_system(n, seed=0, nonsymmetric=False)
    A_local = local_block(M, starts, comm.rank)
    b = jaxamg.make_sharded_vector(np.ones(3))
    assert_all_raise(
        comm, ValueError, lambda: jaxamg.make_sharded_matrix(A_local, b), match="at least one row"
    )
