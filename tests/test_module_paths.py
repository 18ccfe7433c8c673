"""JAX-AMG's module paths: ``jaxamg.sharding``, ``jaxamg.sparsity_tracing``,
``jaxamg.jaxamg`` (with ``HAS_MPI``) and ``jaxamg.cache.cache_mpi_metadata``
import, hold the package's own objects, and work (checked against SciPy and
dense NumPy)."""

import importlib
import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from jax.experimental import sparse as jsparse

import jaxamg

jax.config.update("jax_enable_x64", True)


@pytest.mark.parametrize(
    "path,names",
    [
        (
            "jaxamg.sharding",
            [
                "make_sharded_vector",
                "make_sharded_matrix",
                "ShardedMatrix",
                "make_sharded_solver",
                "ShardedSolve",
            ],
        ),
        (
            "jaxamg.jaxamg",
            [
                "solve",
                "AMGXStatus",
                "with_cache",
                "cache_coloring",
                "cache_mpi_metadata",
                "get_solver_cache_info",
                "clear_solver_cache",
                "finalize",
            ],
        ),
        (
            "jaxamg.cache",
            [
                "with_cache",
                "cache_mpi_metadata",
                "get_solver_cache_info",
                "clear_solver_cache",
                "finalize",
            ],
        ),
    ],
)
def test_paths_re_export_the_top_level_objects(path, names):
    module = importlib.import_module(path)
    assert "re-export" in module.__doc__
    for name in names:
        assert getattr(module, name) is getattr(jaxamg, name), name
        assert name in module.__all__


def test_submodules_are_attributes_of_the_package():
    for name in ("sharding", "sparsity_tracing", "jaxamg", "utils"):
        assert getattr(jaxamg, name) is importlib.import_module(f"jaxamg.{name}")


def test_jaxamg_jaxamg_carries_the_utils_helpers():
    from jaxamg import jaxamg as main
    from jaxamg import utils

    for name in (
        "to_scipy",
        "get_preferred_dtype",
        "to_bcsr_matrix",
        "format_amgx_stats",
        "temp_enable_x64",
        "ensure_int64_array",
        "deep_merge",
    ):
        assert getattr(main, name) is getattr(utils, name)


def test_has_mpi_says_whether_mpi_solves_can_load():
    from jaxamg.jaxamg import HAS_MPI

    def loads(name):
        try:
            importlib.import_module(name)
            return True
        except ImportError:
            return False

    assert isinstance(HAS_MPI, bool)
    assert HAS_MPI == (loads("mpi4py") and loads("jaxamg._mpi"))


def test_sparsity_tracing_recovers_a_random_operator(rng):
    from jaxamg.sparsity_tracing import trace_sparsity_pattern

    n = 30
    M = sp.random(n, n, density=0.1, random_state=rng.integers(1 << 31), format="csr")
    M.data[:] = rng.uniform(1, 2, M.nnz)  # no structural zero among the values
    dense = jnp.asarray(M.toarray())
    rows, cols = trace_sparsity_pattern(lambda x: dense @ x, (n, n))
    # A dense matmul depends on every column: tracing reports the full pattern
    # (a superset), never less than the true nonzeros.
    found = set(zip(np.asarray(rows).tolist(), np.asarray(cols).tolist()))
    assert set(zip(*M.nonzero())) <= found

    # A stencil operator: exactly its pattern.
    def stencil(x):
        return 2 * x - jnp.roll(x, 1) - jnp.roll(x, -1)

    rows, cols = trace_sparsity_pattern(stencil, (n, n))
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n)).tolil()
    T[0, n - 1] = T[n - 1, 0] = -1
    assert set(zip(np.asarray(rows).tolist(), np.asarray(cols).tolist())) == set(zip(*T.nonzero()))


def test_cache_mpi_metadata_from_jaxamg_cache_solves_on_one_rank(rng):
    """The path's cache_mpi_metadata on a one-rank communicator: the metadata
    makes solve distributed with no comm argument; the answer is SciPy's."""
    if (
        importlib.util.find_spec("mpi4py") is None
        or importlib.util.find_spec("jaxamg._mpi") is None
    ):
        pytest.skip("needs mpi4py and jaxamg's MPI module")
    from mpi4py import MPI

    from jaxamg.cache import cache_mpi_metadata, with_cache

    comm = MPI.COMM_SELF
    n = 60
    R = sp.random(n, n, density=0.05, random_state=rng.integers(1 << 31))
    A = (R @ R.T + sp.diags(np.full(n, 4.0))).tocsr()
    b = rng.standard_normal(n)
    config = {
        "solver": "PCG",
        "tolerance": 1e-12,
        "max_iters": 300,
        "preconditioner": {"solver": "BLOCK_JACOBI"},
    }
    M = jsparse.BCSR.from_scipy_sparse(A)
    meta = cache_mpi_metadata(config, comm, n, (0, n), M, is_symmetric=True)
    assert meta["nglobal"] == n and meta["recvcounts_tuple"] == (n,)
    x, info = jaxamg.solve(with_cache(M, mpi=meta), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(x), spla.spsolve(A.tocsc(), b), rtol=1e-8, atol=1e-10)
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
