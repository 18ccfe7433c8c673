"""jaxamg.mpi_utils and the distributed builders under mpirun: partitions
round-trip, gathers return the original, builders equal the serial rows."""

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from mpi_testing import assert_all, assert_all_raise, split_rows  # noqa: E402

from jaxamg import matrices, mpi_utils  # noqa: E402


def test_partition_info_covers_every_row_once(rng):
    for _ in range(20):
        n = int(rng.integers(0, 200))
        nranks = int(rng.integers(1, 9))
        parts = [mpi_utils.get_partition_info(n, r, nranks) for r in range(nranks)]
        assert parts[0][0] == 0 and parts[-1][1] == n
        for (rs, re, nl), nxt in zip(parts, parts[1:] + [(n, n, 0)]):
            assert re - rs == nl and re == nxt[0]
        sizes = [p[2] for p in parts]
        assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)


def test_partition_info_rejects_bad_arguments():
    with pytest.raises(ValueError, match="rank"):
        mpi_utils.get_partition_info(10, 3, 3)
    with pytest.raises(ValueError, match="nranks"):
        mpi_utils.get_partition_info(10, 0, 0)
    with pytest.raises(ValueError, match="n_global"):
        mpi_utils.get_partition_info(-1, 0, 1)


def test_partition_then_gather_vector_is_the_original(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    for dtype in (np.float32, np.float64, np.int32):
        n = int(rng.integers(size, 300))
        x = rng.standard_normal(n).astype(dtype)
        local, rs, re = mpi_utils.partition_vector(jnp.asarray(x), rank, size)
        gathered = mpi_utils.gather_vector(local, comm, root=size - 1)
        if rank == size - 1:
            expected = np.float64 if dtype == np.int32 else dtype
            ok = gathered.dtype == expected and np.array_equal(np.asarray(gathered), x)
        else:
            ok = gathered is None
        assert_all(comm, ok, f"gather_vector round trip, dtype {dtype}")


def test_gather_vector_of_unequal_pieces(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    n = int(rng.integers(size + 1, 100))
    x = rng.standard_normal(n)
    (rs, re) = split_rows(n, size, rng, equal=False)[rank]
    gathered = mpi_utils.gather_vector(x[rs:re], comm)
    assert_all(comm, rank != 0 or np.array_equal(np.asarray(gathered), x))


def test_gather_vector_bad_root_raises_on_every_rank(comm):
    size = comm.Get_size()
    assert_all_raise(
        comm,
        ValueError,
        lambda: mpi_utils.gather_vector(jnp.ones(2), comm, root=size),
        match="root",
    )


def test_partition_csr_matrix_round_trip(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    n = int(rng.integers(size, 80))
    A = sp.random(n, n, density=0.2, random_state=int(rng.integers(1 << 30)), format="csr")
    for source, dtype in (
        (A.astype(np.float32), np.float32),
        (matrices.random_matrix(n, 0.2, dtype=jnp.float64), np.float64),
    ):
        local, rs, re = mpi_utils.partition_csr_matrix(source, rank, size)
        ok = (
            local.shape == (re - rs, n)
            and local.dtype == dtype
            and local.indices.dtype == jnp.int32
            and local.indptr.dtype == jnp.int32
        )
        dense = np.asarray(source.todense())
        ok = ok and np.array_equal(np.asarray(local.todense()), dense[rs:re])
        mpi_utils.validate_partition(local, n, rs, re)
        assert_all(comm, ok, "partition_csr_matrix block")


def test_validate_partition_names_the_problem():
    A, rs, re = matrices.tridiagonal_matrix_distributed(10, 0, 2)
    with pytest.raises(ValueError, match="shape"):
        mpi_utils.validate_partition(A, 10, 0, 4)
    with pytest.raises(ValueError, match="row_end"):
        mpi_utils.validate_partition(A, 10, 6, 4)
    assert mpi_utils.validate_partition(A, 10, rs, re)


def test_partition_operator_gives_the_local_rows(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    n = 7
    op = matrices.poisson_operator(0.0)
    local_op, rs, re = mpi_utils.partition_operator(op, n * n, rank, size)
    x = jnp.asarray(rng.standard_normal(n * n))
    assert_all(comm, np.allclose(local_op(x), op(x)[rs:re], rtol=0, atol=0))


@pytest.mark.parametrize("builder", ["tridiagonal", "poisson", "poisson3d"])
def test_distributed_builders_equal_the_serial_rows(comm, builder):
    rank, size = comm.Get_rank(), comm.Get_size()
    if builder == "tridiagonal":
        serial = matrices.tridiagonal_matrix(23, 3.5)
        local, rs, re = matrices.tridiagonal_matrix_distributed(23, rank, size, 3.5)
    elif builder == "poisson":
        serial = matrices.poisson_matrix(6, skew=0.8)
        local, rs, re = matrices.poisson_matrix_distributed(6, 6, rank, size, skew=0.8)
    else:
        serial = matrices.poisson3d_matrix(4, skew=0.4)
        local, rs, re = matrices.poisson3d_matrix_distributed(4, rank, size, skew=0.4)
    dense = np.asarray(serial.todense())
    ok = (
        local.shape == (re - rs, dense.shape[1])
        and local.indices.dtype == jnp.int32
        and np.array_equal(np.asarray(local.todense()), dense[rs:re])
    )
    assert_all(comm, ok, f"{builder} rows {rs}:{re}")


def test_distributed_builder_is_differentiable_in_its_parameter(comm):
    rank, size = comm.Get_rank(), comm.Get_size()

    def total(d):
        A, _, _ = matrices.tridiagonal_matrix_distributed(12, rank, size, d)
        return jnp.sum(A.data)

    rs, re, _ = mpi_utils.get_partition_info(12, rank, size)
    assert_all(comm, float(jax.grad(total)(2.0)) == re - rs)


def test_random_matrix_distributed_is_diagonally_dominant(comm):
    rank, size = comm.Get_rank(), comm.Get_size()
    A, rs, re = matrices.random_matrix_distributed(60, rank, size, density=0.1, seed=3)
    dense = np.asarray(A.todense(), dtype=np.float64)
    diagonal = dense[np.arange(re - rs), np.arange(rs, re)]
    off = np.abs(dense).sum(axis=1) - np.abs(diagonal)
    assert_all(comm, np.all(diagonal > off) and A.shape == (re - rs, 60))


def test_allgather_vector_forward_and_vjp(comm, rng):
    rank, size = comm.Get_rank(), comm.Get_size()
    n = int(rng.integers(size + 1, 50))
    bounds = split_rows(n, size, rng, equal=False)
    rs, re = bounds[rank]
    x = rng.standard_normal(n)
    weights = rng.standard_normal(n)
    allgather = mpi_utils.make_allgather_vector(comm, (rs, re), n, backend="host")
    default = mpi_utils.make_allgather_vector(comm, (rs, re), n)
    local = jnp.asarray(x[rs:re])
    ok = default.backend == "host" and np.array_equal(np.asarray(default(local)), x)
    ok = ok and np.array_equal(np.asarray(allgather(local)), x)
    ok = ok and np.array_equal(np.asarray(jax.jit(allgather)(local)), x)

    def loss(v):
        return jnp.sum(jnp.asarray(weights) * allgather(v) ** 2)

    grad = jax.grad(loss)(local)
    ok = ok and np.allclose(grad, 2 * weights[rs:re] * x[rs:re], rtol=1e-12, atol=0)
    ok = ok and np.allclose(jax.jit(jax.grad(loss))(local), grad, rtol=1e-12, atol=0)
    assert_all(comm, ok, "allgather forward, jit and VJP")


def test_allgather_vector_errors_on_every_rank(comm):
    rank, size = comm.Get_rank(), comm.Get_size()
    rs, re, _ = mpi_utils.get_partition_info(10 * size, rank, size)
    assert_all_raise(
        comm,
        ValueError,
        lambda: mpi_utils.make_allgather_vector(comm, (rs, re), 10 * size + 1, backend="host"),
        match="sum to",
    )
    assert_all_raise(
        comm,
        ValueError,
        lambda: mpi_utils.make_allgather_vector(comm, (rs, re), 10 * size, backend="nccl"),
        match="unknown backend",
    )
    try:
        import mpi4jax  # noqa: F401
    except ImportError:
        assert_all_raise(
            comm,
            ImportError,
            lambda: mpi_utils.make_allgather_vector(comm, (rs, re), 10 * size, backend="mpi4jax"),
            match="pip install mpi4jax",
        )
    # A wrong piece on one rank only: every rank raises, none waits.
    allgather = mpi_utils.make_allgather_vector(comm, (rs, re), 10 * size, backend="host")
    bad = jnp.ones(re - rs + (1 if rank == size - 1 else 0))
    assert_all_raise(comm, ValueError, lambda: allgather(bad), match=f"rank {size - 1}")
