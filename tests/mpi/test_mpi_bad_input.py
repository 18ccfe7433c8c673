"""Bad input to the MPI solve: every rank raises the same clear error, also
when only one rank's input is wrong, and no rank is left waiting (a hang
fails the run through the conftest's timeout). These checks all happen
before the native call."""

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import jax.numpy as jnp  # noqa: E402
from mpi_testing import assert_all_raise  # noqa: E402

import jaxamg  # noqa: E402
from jaxamg import matrices  # noqa: E402
from jaxamg.mpi_utils import get_partition_info  # noqa: E402

N = 24


def problem(comm, n=N):
    rank, size = comm.Get_rank(), comm.Get_size()
    A, rs, re = matrices.tridiagonal_matrix_distributed(n, rank, size, 3.0, dtype=jnp.float64)
    return A, jnp.ones(re - rs, jnp.float64), rs, re


def last(comm):
    return comm.Get_rank() == comm.Get_size() - 1


def test_missing_nglobal_or_partition(comm):
    A, b, rs, re = problem(comm)
    assert_all_raise(
        comm, ValueError, lambda: jaxamg.solve(A, b, comm=comm, nglobal=N), match="partition_info"
    )
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.solve(A, b, comm=comm, partition_info=(rs, re)),
        match="nglobal",
    )


def test_nglobal_mismatch_on_one_rank(comm):
    A, b, rs, re = problem(comm)
    nglobal = N + 1 if last(comm) else N
    message = assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.solve(A, b, comm=comm, nglobal=nglobal, partition_info=(rs, re)),
    )
    # One rank: its own shape check; several: the ranks disagree on nglobal.
    assert "nglobal" in message or "shape" in message


def test_partition_gap(comm):
    if comm.Get_size() < 2:
        pytest.skip("a gap between ranks needs two ranks")
    rank, size = comm.Get_rank(), comm.Get_size()
    # Every rank's input is consistent by itself; only the blocks leave row
    # rs_last uncovered.
    bounds = [get_partition_info(N, r, size)[:2] for r in range(size)]
    rs, re = bounds[rank]
    if rank == size - 1:
        rs += 1
    A, _, _ = matrices.tridiagonal_matrix_distributed(N, 0, 1, 3.0, dtype=jnp.float64)
    import scipy.sparse as sp
    from mpi_testing import local_block

    M = sp.csr_matrix(np.asarray(A.todense()))
    block = local_block(M, rs, re)
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.solve(
            block, jnp.ones(re - rs), comm=comm, nglobal=N, partition_info=(rs, re)
        ),
        match="gap",
    )


def test_partition_overlap(comm):
    if comm.Get_size() < 2:
        pytest.skip("an overlap needs two ranks")
    rank, size = comm.Get_rank(), comm.Get_size()
    bounds = [get_partition_info(N, r, size)[:2] for r in range(size)]
    rs, re = bounds[rank]
    if rank == 1:
        rs -= 1
    import scipy.sparse as sp
    from mpi_testing import local_block

    A, _, _ = matrices.tridiagonal_matrix_distributed(N, 0, 1, 3.0, dtype=jnp.float64)
    block = local_block(sp.csr_matrix(np.asarray(A.todense())), rs, re)
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.solve(
            block, jnp.ones(re - rs), comm=comm, nglobal=N, partition_info=(rs, re)
        ),
        match="overlap",
    )


def test_rank_with_zero_rows(comm):
    if comm.Get_size() < 2:
        pytest.skip("an empty rank needs two ranks")
    rank = comm.Get_rank()
    # Rank 0 owns every row, the others none.
    rs, re = (0, N) if rank == 0 else (N, N)
    import scipy.sparse as sp
    from mpi_testing import local_block

    A, _, _ = matrices.tridiagonal_matrix_distributed(N, 0, 1, 3.0, dtype=jnp.float64)
    block = local_block(sp.csr_matrix(np.asarray(A.todense())), rs, re)
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.solve(
            block, jnp.ones(re - rs), comm=comm, nglobal=N, partition_info=(rs, re)
        ),
        match="owns no rows",
    )


def test_config_differs_on_one_rank(comm):
    if comm.Get_size() < 2:
        pytest.skip("needs two ranks")
    A, b, rs, re = problem(comm)
    tolerance = 1e-6 if last(comm) else 1e-8
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.solve(
            A, b, comm=comm, nglobal=N, partition_info=(rs, re), tolerance=tolerance
        ),
        match="solver configuration",
    )


def test_dtype_differs_on_one_rank(comm):
    if comm.Get_size() < 2:
        pytest.skip("needs two ranks")
    A, b, rs, re = problem(comm)
    if last(comm):
        A = jaxamg.matrices.tridiagonal_matrix_distributed(
            N, comm.Get_rank(), comm.Get_size(), 3.0, dtype=jnp.float32
        )[0]
        b = b.astype(jnp.float32)
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.solve(A, b, comm=comm, nglobal=N, partition_info=(rs, re)),
        match="precision",
    )


def test_x0_on_one_rank_only(comm):
    if comm.Get_size() < 2:
        pytest.skip("needs two ranks")
    A, b, rs, re = problem(comm)
    x0 = jnp.zeros_like(b) if last(comm) else None
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.solve(A, b, x0=x0, comm=comm, nglobal=N, partition_info=(rs, re)),
        match="initial guess",
    )


@pytest.mark.parametrize(
    "defect",
    ["b length", "nan in b", "column range", "A shape", "x0 shape", "block_dim", "complex b"],
)
def test_bad_input_on_one_rank_only(comm, defect):
    A, b, rs, re = problem(comm)
    x0, block_dim = None, 1
    culprit = comm.Get_size() - 1
    if comm.Get_rank() == culprit:
        if defect == "b length":
            b = jnp.ones(re - rs + 1)
        elif defect == "nan in b":
            b = b.at[0].set(jnp.nan)
        elif defect == "column range":
            A = type(A)((A.data, A.indices.at[-1].set(N + 5), A.indptr), shape=A.shape)
        elif defect == "A shape":
            A = matrices.tridiagonal_matrix(re - rs + 1, dtype=jnp.float64)
        elif defect == "x0 shape":
            x0 = jnp.zeros(re - rs + 2)
        elif defect == "block_dim":
            block_dim = 5
        elif defect == "complex b":
            b = b.astype(jnp.complex128)
    else:
        if defect == "x0 shape":
            x0 = jnp.zeros_like(b)
        if defect == "block_dim":
            block_dim = 5
    if defect == "block_dim":
        # Every rank gets block_dim=5, which divides no rank's rows of 24.
        expected = ValueError
    else:
        expected = TypeError if defect == "complex b" else ValueError
    message = assert_all_raise(
        comm,
        expected,
        lambda: jaxamg.solve(
            A, b, x0=x0, block_dim=block_dim, comm=comm, nglobal=N, partition_info=(rs, re)
        ),
    )
    if defect != "block_dim":
        assert message.startswith(f"rank {culprit}:"), message


def test_not_a_communicator():
    A = matrices.tridiagonal_matrix(4)
    with pytest.raises(TypeError, match="mpi4py communicator"):
        jaxamg.solve(A, jnp.ones(4), comm="world", nglobal=4, partition_info=(0, 4))


def test_nglobal_without_comm():
    A = matrices.tridiagonal_matrix(4)
    with pytest.raises(ValueError, match="without `comm`"):
        jaxamg.solve(A, jnp.ones(4), nglobal=4, partition_info=(0, 4))


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_setup_failure_on_one_rank_raises_everywhere_within_10_s(comm, jit):
    """A failure inside the native setup of one rank (a zero diagonal entry
    that the Jacobi smoother divides by, which no Python check sees): every
    rank raises the culprit's message, quickly, instead of waiting in a
    collective."""
    import time

    import jax

    A, b, rs, re = problem(comm)
    culprit = comm.Get_size() - 1
    data = A.data
    if comm.Get_rank() == culprit:
        # The local block's first row: its diagonal is the entry at column rs.
        row = np.asarray(A.indices[A.indptr[0] : A.indptr[1]])
        data = data.at[int(A.indptr[0]) + int(np.flatnonzero(row == rs)[0])].set(0.0)
    config = {
        "config_version": 2,
        "solver": {
            "scope": "main",
            "solver": "PCG",
            "max_iters": 50,
            "tolerance": 1e-8,
            "preconditioner": {"scope": "jac", "solver": "BLOCK_JACOBI", "max_iters": 1},
        },
    }

    def run(values):
        M = type(A)((values, A.indices, A.indptr), shape=A.shape)
        return jaxamg.solve(M, b, comm=comm, nglobal=N, partition_info=(rs, re), config=config)

    fn = jax.jit(run) if jit else run
    comm.Barrier()
    start = time.perf_counter()
    message = assert_all_raise(comm, Exception, lambda: jax.block_until_ready(fn(data)))
    elapsed = comm.allreduce(time.perf_counter() - start, op=_max_op())
    assert f"rank {culprit}" in message and "diagonal" in message, message
    if comm.Get_rank() == 0:
        print(f"all {comm.Get_size()} ranks raised after {elapsed:.2f} s: {message}")
    assert elapsed < 10.0, f"ranks took {elapsed:.1f} s to raise"


def _max_op():
    from mpi4py import MPI

    return MPI.MAX


# What solve(config="auto") says where no single matrix chooses the config.
AUTO_REFUSED = (
    "`config='auto'` is chosen per matrix by `jaxamg.solve` on one process; here (an MPI or "
    "sharded solve, or a preconditioner) pass a config dict or a shipped config's name, e.g. "
    "the one `jaxamg.config.auto_config(A)` picks."
)


def test_float_hierarchy_is_refused_naming_same(comm):
    A, b, rs, re = problem(comm)
    config = {"solver": "PCG", "preconditioner": {"solver": "AMG", "x_amg_precision": "FLOAT"}}
    # ConfigError on one rank; on several, every rank raises the agreed
    # ValueError that names the first failing rank.
    assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.solve(A, b, comm=comm, nglobal=N, partition_info=(rs, re), config=config),
        match="does not run on a matrix distributed over several processes; use SAME",
    )


def test_auto_config_is_refused_on_every_rank_naming_auto_config(comm):
    A, b, rs, re = problem(comm)
    # Every rank raises the agreed error, naming the first failing rank.
    message = assert_all_raise(
        comm,
        ValueError,
        lambda: jaxamg.solve(A, b, comm=comm, nglobal=N, partition_info=(rs, re), config="auto"),
        match=AUTO_REFUSED,
    )
    assert message.startswith("rank 0: " + AUTO_REFUSED), message
