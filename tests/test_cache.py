"""The native solver cache: an unchanged matrix is set up once; new values on
the same pattern resetup; structures and configs are keyed apart."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg import matrices
from helpers import cache_entries

jax.config.update("jax_enable_x64", True)


pytestmark = pytest.mark.usefixtures("fresh_cache")


def test_default_solve_creates_one_entry():
    A = matrices.tridiagonal_matrix(16)
    jaxamg.solve(A, matrices.rhs_ones(16))
    (e,) = cache_entries()
    assert e["n_rows"] == 16 and e["nnz"] == 46 and e["mode"] == "float32"
    assert e["config"]["solver"]["solver"] == "PBICGSTAB"
    assert e["setups"] == 1


def test_grad_shares_one_setup_between_forward_and_adjoint(rng):
    A = matrices.poisson_matrix(8, skew=0.5, dtype=jnp.float64)
    b = jnp.asarray(rng.normal(size=64))
    jax.grad(lambda r: jnp.sum(jaxamg.solve(A, r)[0] ** 2))(b)
    (e,) = cache_entries()
    assert e["setups"] == 1 and e["transpose_solve"]


def test_jitted_loop_solving_twice_sets_up_once(rng):
    A = matrices.poisson_matrix(8, dtype=jnp.float64)
    b = jnp.asarray(rng.normal(size=64))

    @jax.jit
    def twice(data, rhs):
        M = jsparse.BCSR((data, A.indices, A.indptr), shape=A.shape)
        x1, _ = jaxamg.solve(M, rhs)
        x2, _ = jaxamg.solve(M, x1)
        return x2

    twice(A.data, b).block_until_ready()
    (e,) = cache_entries()
    assert e["setups"] == 1 and e["reuses"] >= 1


def test_new_values_resetup_and_stay_correct(rng):
    A = matrices.poisson_matrix(8, dtype=jnp.float64)
    b = jnp.asarray(rng.normal(size=64))
    f = jax.jit(lambda d, r: jaxamg.solve(
        jsparse.BCSR((d, A.indices, A.indptr), shape=A.shape), r, tolerance=1e-10)[0])
    for scale in (1.0, 2.0, 3.5):
        x = f(scale * A.data, b)
        np.testing.assert_allclose(np.asarray(scale * (A.todense() @ x)), np.asarray(b), atol=1e-8)
    (e,) = cache_entries()
    assert e["setups"] == 1 and e["resetups"] == 2


def test_same_row_pointers_different_columns_miss():
    import scipy.sparse as sp

    n = 8
    b = jnp.arange(1.0, n + 1)
    for shift in (1, 3):
        M = (4 * sp.eye(n) - sp.csr_matrix((np.ones(n), (np.arange(n), (np.arange(n) + shift) % n)),
                                           shape=(n, n))).tocsr()
        assert np.array_equal(M.indptr, np.arange(0, 2 * n + 1, 2))
        x, _ = jaxamg.solve(jsparse.BCSR.from_scipy_sparse(M), b, tolerance=1e-10)
        np.testing.assert_allclose(M @ np.asarray(x), np.asarray(b), rtol=1e-8)
    assert len(cache_entries()) == 2


def test_reuse_setup_keeps_the_hierarchy(rng):
    A = matrices.poisson_matrix(8, dtype=jnp.float64)
    b = jnp.asarray(rng.normal(size=64))
    jaxamg.solve(A, b, tolerance=1e-10)
    A2 = jsparse.BCSR((1.01 * A.data, A.indices, A.indptr), shape=A.shape)
    x, info = jaxamg.solve(A2, b, reuse_setup=True, tolerance=1e-10)
    np.testing.assert_allclose(np.asarray(A2.todense() @ x), np.asarray(b), atol=1e-8)
    (e,) = cache_entries()
    assert e["setups"] == 1 and e["resetups"] == 1
