"""The native solver cache: an unchanged matrix is set up once; new values on
the same pattern resetup; structures and configs are keyed apart."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import cache_entries
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg import matrices

jax.config.update("jax_enable_x64", True)


pytestmark = pytest.mark.usefixtures("fresh_cache")


def test_default_solve_creates_one_entry():
    A = matrices.tridiagonal_matrix(16)
    jax.block_until_ready(jaxamg.solve(A, matrices.rhs_ones(16)))
    (e,) = cache_entries()
    assert e["n_rows"] == 16 and e["nnz"] == 46 and e["mode"] == "float32"
    assert e["config"]["solver"]["solver"] == "PBICGSTAB"
    assert e["setups"] == 1


def test_grad_shares_one_setup_between_forward_and_adjoint(rng):
    A = matrices.poisson_matrix(8, skew=0.5, dtype=jnp.float64)
    b = jnp.asarray(rng.normal(size=64))
    jax.grad(lambda r: jnp.sum(jaxamg.solve(A, r)[0] ** 2))(b).block_until_ready()
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
    f = jax.jit(
        lambda d, r: jaxamg.solve(
            jsparse.BCSR((d, A.indices, A.indptr), shape=A.shape), r, tolerance=1e-10
        )[0]
    )
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
        M = (
            4 * sp.eye(n)
            - sp.csr_matrix((np.ones(n), (np.arange(n), (np.arange(n) + shift) % n)), shape=(n, n))
        ).tocsr()
        assert np.array_equal(M.indptr, np.arange(0, 2 * n + 1, 2))
        x, _ = jaxamg.solve(jsparse.BCSR.from_scipy_sparse(M), b, tolerance=1e-10)
        np.testing.assert_allclose(M @ np.asarray(x), np.asarray(b), rtol=1e-8)
    assert len(cache_entries()) == 2


def test_reuse_setup_keeps_the_hierarchy(rng):
    A = matrices.poisson_matrix(8, dtype=jnp.float64)
    b = jnp.asarray(rng.normal(size=64))
    jax.block_until_ready(jaxamg.solve(A, b, tolerance=1e-10))
    A2 = jsparse.BCSR((1.01 * A.data, A.indices, A.indptr), shape=A.shape)
    x, info = jaxamg.solve(A2, b, reuse_setup=True, tolerance=1e-10)
    np.testing.assert_allclose(np.asarray(A2.todense() @ x), np.asarray(b), atol=1e-8)
    (e,) = cache_entries()
    assert e["setups"] == 1 and e["resetups"] == 1


def test_device_structure_hash_separates_patterns(rng):
    """The hash a GPU-resident structure is keyed by (computed with JAX
    operations, so it runs on the CPU too): equal structures in different
    arrays agree; one changed column, two swapped entries, an entry moved to
    another row, or one row more all give another digest."""
    from jaxamg._core.matrix import _device_digest

    n = 300
    counts = rng.integers(1, 8, size=n)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    indices = rng.integers(0, n, size=int(indptr[-1])).astype(np.int32)

    def digest(p, i):
        return _device_digest(jnp.asarray(p), jnp.asarray(i))

    base = digest(indptr, indices)
    assert len(base) == 16
    assert digest(indptr.copy(), indices.copy()) == base
    changed = indices.copy()
    k = int(rng.integers(indices.size))
    changed[k] = (changed[k] + 1 + int(rng.integers(n - 1))) % n
    swapped = indices.copy()
    a, b = 5, 6 + int(np.argmax(indices[6:] != indices[5]))
    swapped[a], swapped[b] = swapped[b], swapped[a]
    moved = indptr.copy()
    row = int(np.argmax(counts[:-1] > 1))
    moved[row + 1] -= 1  # the last entry of `row` now belongs to row + 1
    longer = np.concatenate([indptr, [indptr[-1]]]).astype(np.int32)
    others = {
        digest(indptr, changed),
        digest(indptr, swapped),
        digest(moved, indices),
        digest(longer, indices),
    }
    assert base not in others and len(others) == 4


def test_accelerator_structure_path_bakes_no_constants(monkeypatch):
    """The path of a GPU-resident structure (device hash, rows computed on
    the device; forced here on the CPU) runs compiled code on the arrays:
    nothing of the matrix's size is captured as a constant of a compiled
    program (at 256³ that cost a 2 GB constant-folding compile)."""
    import warnings

    from jaxamg._core import matrix as _matrix
    from jaxamg._core import structure as _structure

    def on_device(*arrays):
        return all(isinstance(a, jax.Array) and not isinstance(a, jax.core.Tracer) for a in arrays)

    monkeypatch.setattr(_matrix, "on_accelerator", on_device)
    monkeypatch.setattr(_structure, "on_accelerator", on_device)
    monkeypatch.setattr(_matrix, "_DEVICE_HASH_MIN_NNZ", 0)
    A = matrices.poisson3d_matrix(12, dtype=jnp.float64)
    M = jsparse.BCSR(
        (jnp.asarray(A.data), jnp.asarray(A.indices), jnp.asarray(A.indptr)), shape=A.shape
    )
    b = matrices.rhs_random(12**3, seed=2, dtype=jnp.float64)
    limit = jax.config.jax_captured_constants_warn_bytes
    jax.config.update("jax_captured_constants_warn_bytes", 4 * 12**3)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", message="A large amount of constants")
            x, info = jaxamg.solve(M, b, config={"solver": "CG", "tolerance": 1e-10})
    finally:
        jax.config.update("jax_captured_constants_warn_bytes", limit)
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
    np.testing.assert_allclose(
        np.asarray(M.todense()) @ np.asarray(x),
        np.asarray(b),
        atol=1e-7 * float(jnp.linalg.norm(b)),
    )
    (e,) = cache_entries()
    assert e["setups"] == 1


def test_cache_info_has_jax_amgs_keys_and_types(rng):
    """JAX-AMG's schema: its keys with its types (structure_hash an int);
    the hash is the 128-bit fingerprint Python computed for the pattern
    (an independent path: NumPy's blake2b of the CSR arrays), equal for the
    same pattern with new values and different for another pattern."""
    from jaxamg._core.matrix import structure_fingerprint

    A = matrices.poisson_matrix(6, skew=0.3, dtype=jnp.float64)
    b = jnp.asarray(rng.normal(size=36))
    jax.block_until_ready(jaxamg.solve(A, b))
    info = jaxamg.get_solver_cache_info()
    assert set(info) >= {"single_gpu", "mpi", "isolated_mode"}
    assert isinstance(info["isolated_mode"], bool) and info["isolated_mode"] is False
    for section in ("single_gpu", "mpi"):
        assert {"size", "capacity", "entries"} <= set(info[section])
        assert isinstance(info[section]["size"], int)
    (e,) = info["single_gpu"]["entries"]
    types = {
        "n_rows": int,
        "nnz": int,
        "mode": str,
        "transpose_solve": bool,
        "block_dim": int,
        "structure_hash": int,
        "config": dict,
    }
    for key, kind in types.items():
        assert type(e[key]) is kind, (key, type(e[key]))
    assert (e["n_rows"], e["nnz"], e["mode"], e["block_dim"]) == (36, A.nse, "float64", 1)
    assert e["transpose_solve"] is False  # no gradient yet
    hi, lo = structure_fingerprint(np.asarray(A.indptr), np.asarray(A.indices))
    assert e["structure_hash"] == ((hi % 2**64) << 64) | (lo % 2**64)
    # New values on the same pattern: the same hash; another pattern: another.
    B = jsparse.BCSR((A.data * 2, A.indices, A.indptr), shape=A.shape)
    jax.grad(lambda r: jnp.sum(jaxamg.solve(B, r)[0]))(b).block_until_ready()
    C = matrices.poisson_matrix(7, dtype=jnp.float64)
    jax.block_until_ready(jaxamg.solve(C, jnp.ones(49)))
    entries = jaxamg.get_solver_cache_info()["single_gpu"]["entries"]
    by_rows = {x["n_rows"]: x for x in entries}
    assert by_rows[36]["structure_hash"] == e["structure_hash"]
    assert by_rows[36]["transpose_solve"] is True  # the gradient's adjoint ran on it
    assert by_rows[49]["structure_hash"] != e["structure_hash"]
    # Our extra keys stay.
    assert {"device", "setups", "resetups", "reuses"} <= set(by_rows[36])
