"""Operators to matrices: `cache_coloring`, probing, materialisation and
`materialize_operator` (jaxamg.sparsity).

References are independent of the code under test: dense matrices built in
the test by applying the operator to every basis vector, the assembled test
matrices of `jaxamg.matrices`, SciPy, and finite differences for gradients.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax.experimental import sparse as jsparse

from jaxamg import sparsity
from jaxamg.matrices import (
    poisson3d_matrix,
    poisson3d_operator,
    poisson_matrix,
    poisson_operator,
    tridiagonal_matrix,
    tridiagonal_operator,
)
from jaxamg.sparsity import (
    cache_coloring,
    get_column_coloring,
    materialize_operator,
    materialize_sparse_matrix,
    probe_sparsity_pattern,
    trace_sparsity_pattern,
)


def dense_matrix(op, n_global: int) -> np.ndarray:
    """Column j is op(e_j), one application at a time (works for callbacks)."""
    return np.stack([np.asarray(op(e)) for e in jnp.eye(n_global)], axis=1)


def dense_vmapped(op, n_global: int) -> np.ndarray:
    return np.asarray(jax.jit(jax.vmap(op))(jnp.eye(n_global))).T


def materialized(op, info) -> np.ndarray:
    rows, cols, colors, n_colors, shape = info
    return np.asarray(materialize_sparse_matrix(op, shape, rows, cols, colors, n_colors).todense())


def roll_stencil(x):
    return 2.0 * x - jnp.roll(x, 1) - jnp.roll(x, -1)


def callback_stencil(n, **kwargs):
    def op(u):
        return jax.pure_callback(
            lambda v: np.asarray(v) * 2.0 - np.roll(np.asarray(v), 1, axis=-1),
            jax.ShapeDtypeStruct(u.shape, u.dtype),
            u,
            **kwargs,
        )

    return op


class TestCacheColoring:
    def test_traced_path_gives_the_exact_matrix(self, monkeypatch):
        def no_probing(*args, **kwargs):
            raise AssertionError("probing was used")

        monkeypatch.setattr(sparsity, "probe_pattern", no_probing)
        n = 6**3
        op = poisson3d_operator(robin=2.0)
        info = cache_coloring(op, (n, n))
        assert info[4] == (n, n) and info[3] >= 7
        np.testing.assert_allclose(materialized(op, info), dense_vmapped(op, n), atol=1e-5)

    def test_second_call_returns_the_cached_object(self):
        op = lambda x: 2.0 * x - jnp.roll(x, 1)
        first = cache_coloring(op, (16, 16))
        assert cache_coloring(op, 16) is first
        assert op._coloring_info is first

    def test_other_shape_raises(self):
        op = lambda x: 2.0 * x - jnp.roll(x, 1)
        cache_coloring(op, 16)
        with pytest.raises(
            ValueError,
            match=r"`jaxamg.cache_coloring`: `shape` \(17, 17\) does not match the cached "
            r"coloring's \(16, 16\)",
        ):
            cache_coloring(op, (17, 17))

    def test_int_shape_is_square(self):
        info = cache_coloring(lambda x: 3.0 * x, 16)
        assert info[4] == (16, 16) and info[3] == 1

    def test_bad_shape_is_reported(self):
        with pytest.raises(
            ValueError, match=r"`jaxamg.cache_coloring`: `shape` must be .* got 2.5"
        ):
            cache_coloring(lambda x: x, 2.5)

    @pytest.mark.parametrize(
        "vmap_method", ["sequential", None], ids=["vmappable", "not_vmappable"]
    )
    def test_opaque_operator_is_probed(self, vmap_method):
        n = 16
        kwargs = {"vmap_method": vmap_method} if vmap_method else {}
        op = callback_stencil(n, **kwargs)
        assert trace_sparsity_pattern(op, n) is None
        info = cache_coloring(op, n)
        np.testing.assert_allclose(materialized(op, info), dense_matrix(op, n), atol=1e-5)

    def test_local_opaque_part_is_traced_and_verified(self, monkeypatch):
        monkeypatch.setattr(sparsity, "probe_pattern", None)  # must not be needed
        n = 16

        def op(x):
            corr = jax.pure_callback(
                lambda v: np.asarray(v) * 0.5,
                jax.ShapeDtypeStruct((2,), x.dtype),
                x[:2],
                vmap_method="sequential",
            )
            return roll_stencil(x).at[:2].add(corr)

        info = cache_coloring(op, n)
        truth = dense_matrix(op, n)
        assert len(info[0]) == np.count_nonzero(truth)  # the superset entries were zero and dropped
        np.testing.assert_allclose(materialized(op, info), truth, atol=1e-5)

    def test_wrong_traced_pattern_is_rejected(self, monkeypatch):
        n = 16
        diagonal = (np.arange(n), np.arange(n))
        monkeypatch.setattr(sparsity, "trace_pattern", lambda *a, **k: diagonal)
        info = cache_coloring(roll_stencil, n)  # verification fails -> probing
        np.testing.assert_allclose(
            materialized(roll_stencil, info), dense_matrix(roll_stencil, n), atol=1e-6
        )

    def test_zero_operator(self):
        info = cache_coloring(lambda x: jnp.zeros_like(x), 12)
        assert len(info[0]) == 0 and info[3] == 0
        assert not materialized(lambda x: jnp.zeros_like(x), info).any()

    def test_numerical_zeros_are_dropped(self, rng):
        n = 16
        c = jnp.asarray(rng.uniform(0.5, 2.0, n) * (rng.random(n) < 0.5), jnp.float32)
        op = lambda x: c * roll_stencil(x)
        info = cache_coloring(op, n)
        truth = dense_vmapped(op, n)
        assert len(info[0]) == np.count_nonzero(truth)
        np.testing.assert_allclose(materialized(op, info), truth, atol=1e-5)

    def test_distributed_row_block(self):
        n, start, stop = 6**3, 70, 150
        base = poisson3d_operator(robin=1.0)
        block = lambda x: base(x)[start:stop]
        info = cache_coloring(block, (stop - start, n))
        np.testing.assert_allclose(
            materialized(block, info), dense_vmapped(base, n)[start:stop], atol=1e-5
        )

    def test_object_without_attributes_is_reported(self):
        class Frozen:
            __slots__ = ()

            def __call__(self, x):
                return 2.0 * x

        with pytest.raises(TypeError, match=r"`jaxamg.cache_coloring`: cannot attach the coloring"):
            cache_coloring(Frozen(), 8)


class TestMaterialize:
    @pytest.mark.parametrize("skew", [0.0, 0.8])
    def test_poisson_operator_is_the_transpose_of_poisson_matrix(self, skew):
        m = 7
        op = poisson_operator(skew)
        info = cache_coloring(op, m * m)
        ref = np.asarray(poisson_matrix(m, skew).todense())
        np.testing.assert_allclose(materialized(op, info), ref.T, atol=1e-6)

    def test_float64_operator(self, rng):
        skew = float(rng.uniform(0.1, 0.9))
        with jax.enable_x64(True):
            op = poisson_operator(skew)
            info = cache_coloring(op, 49)
            A = materialize_sparse_matrix(op, 49, *info[:4])
            assert A.data.dtype == jnp.float64
            ref = np.asarray(poisson_matrix(7, skew, dtype=jnp.float64).todense())
            np.testing.assert_allclose(np.asarray(A.todense()), ref.T, rtol=1e-14, atol=1e-14)

    def test_3d_and_1d_operators_match_their_matrices(self):
        op3 = poisson3d_operator(robin=0.0)
        np.testing.assert_allclose(
            materialized(op3, cache_coloring(op3, 125)),
            np.asarray(poisson3d_matrix(5).todense()),
            atol=1e-6,
        )
        op1 = tridiagonal_operator(2.5)
        np.testing.assert_allclose(
            materialized(op1, cache_coloring(op1, 20)),
            np.asarray(tridiagonal_matrix(20, 2.5).todense()),
            atol=1e-6,
        )

    def test_under_jit_and_with_a_traced_pattern(self, rng):
        n = 20
        c = jnp.asarray(rng.uniform(1, 2, n), jnp.float32)
        op = lambda x: c * roll_stencil(x)
        rows, cols = trace_sparsity_pattern(op, n)
        colors, n_colors = get_column_coloring(rows, cols, n)
        truth = dense_vmapped(op, n)
        jitted = jax.jit(lambda: materialize_sparse_matrix(op, n, rows, cols, colors, n_colors))()
        np.testing.assert_allclose(np.asarray(jitted.todense()), truth, atol=1e-6)
        traced_pattern = jax.jit(
            lambda r, cc, col: materialize_sparse_matrix(op, n, r, cc, col, n_colors).todense()
        )(rows.astype(np.int32), cols.astype(np.int32), colors)
        np.testing.assert_allclose(np.asarray(traced_pattern), truth, atol=1e-6)

    def test_unsorted_pattern_with_duplicates(self, rng):
        n = 20
        rows, cols = trace_sparsity_pattern(roll_stencil, n)
        colors, n_colors = get_column_coloring(rows, cols, n)
        order = rng.permutation(rows.size)
        rows2 = np.concatenate([rows[order], rows[:5]])
        cols2 = np.concatenate([cols[order], cols[:5]])
        A = materialize_sparse_matrix(roll_stencil, n, rows2, cols2, colors, n_colors)
        assert A.nse == rows.size
        np.testing.assert_allclose(
            np.asarray(A.todense()), dense_vmapped(roll_stencil, n), atol=1e-6
        )

    def test_gradient_matches_finite_differences(self, rng):
        n = 27
        base = poisson3d_operator(robin=1.0)
        info = cache_coloring(lambda x: base(x) + 1.0 * x, n)
        weights = jnp.asarray(rng.standard_normal(len(info[0])), jnp.float32)

        def loss(theta):
            op = lambda x: base(x) + theta * jnp.roll(x, 1) * 0.0 + theta**2 * x
            A = materialize_sparse_matrix(op, n, *info[:4])
            return jnp.sum(weights * A.data**2)

        theta, h = 1.3, 1e-2
        grad = float(jax.grad(loss)(theta))
        fd = (float(loss(theta + h)) - float(loss(theta - h))) / (2 * h)
        np.testing.assert_allclose(grad, fd, rtol=2e-3)
        grad_jit = float(jax.jit(jax.grad(loss))(theta))
        np.testing.assert_allclose(grad_jit, grad, rtol=1e-5)

    def test_errors_name_the_argument(self):
        rows, cols = trace_sparsity_pattern(roll_stencil, 8)
        colors, n_colors = get_column_coloring(rows, cols, 8)
        with pytest.raises(
            ValueError, match=r"`colors` has 7 entries but the operator has 8 columns"
        ):
            materialize_sparse_matrix(roll_stencil, 8, rows, cols, colors[:7], n_colors)
        bad = np.array(colors)
        bad[3] = -1
        with pytest.raises(ValueError, match=r"column 3 has entries but colour -1"):
            materialize_sparse_matrix(roll_stencil, 8, rows, cols, bad, n_colors)
        with pytest.raises(ValueError, match=r"entries outside the shape \(4, 8\)"):
            materialize_sparse_matrix(roll_stencil, (4, 8), rows, cols, colors, n_colors)


class TestProbing:
    def test_tridiagonal_matches_scipy(self):
        n = 10
        rows, cols = probe_sparsity_pattern(tridiagonal_operator(-2.0), n)
        ref = sp.coo_array(sp.diags_array([1.0, 1.0, 1.0], offsets=[-1, 0, 1], shape=(n, n)))
        order = np.lexsort((ref.col, ref.row))
        np.testing.assert_array_equal(rows, ref.row[order])
        np.testing.assert_array_equal(cols, ref.col[order])

    def test_values_at_or_below_tol_are_not_entries(self, rng):
        n = 12
        d = jnp.asarray(np.where(rng.random(n) < 0.5, 1e-12, 1.0), jnp.float32)
        rows, cols = probe_sparsity_pattern(lambda x: d * x, n)
        np.testing.assert_array_equal(rows, np.flatnonzero(np.asarray(d) > 1e-10))
        rows, _ = probe_sparsity_pattern(lambda x: d * x, n, tol=1e-13)
        assert rows.size == n

    def test_rectangular_and_empty_shapes(self):
        rows, cols = probe_sparsity_pattern(lambda x: x[:3] + x[3:6], (3, 8))
        np.testing.assert_array_equal(rows, [0, 0, 1, 1, 2, 2])
        np.testing.assert_array_equal(cols, [0, 3, 1, 4, 2, 5])
        rows, cols = probe_sparsity_pattern(lambda x: x, 0)
        assert rows.size == 0 and cols.size == 0

    def test_block_is_halved_when_out_of_memory(self):
        n, seen = 16, []

        def host(v):
            v = np.asarray(v)
            seen.append(v.shape[0] if v.ndim == 2 else 1)
            if v.ndim == 2 and v.shape[0] > 4:
                raise RuntimeError("RESOURCE_EXHAUSTED: out of memory while probing")
            return v * 2.0 - np.roll(v, 1, axis=-1)

        op = lambda u: jax.pure_callback(
            host, jax.ShapeDtypeStruct(u.shape, u.dtype), u, vmap_method="broadcast_all"
        )
        rows, cols = probe_sparsity_pattern(op, n)
        assert max(seen) == 16 and seen[-1] == 4
        M = np.zeros((n, n), bool)
        M[rows, cols] = True
        np.testing.assert_array_equal(M, dense_matrix(op, n) != 0)

    def test_batch_size_budget(self):
        assert sparsity._probe_batch_size(16, 16, 4) == 16
        assert sparsity._probe_batch_size(10**9, 10**9, 8) == 1
        assert sparsity._probe_batch_size(262144, 131072, 8) == sparsity._PROBE_BATCH_BYTES // (
            393216 * 8
        )


def test_verify_recovery_accepts_correct_and_rejects_perturbed():
    n = 16
    rows, cols, colors, n_colors, _ = cache_coloring(roll_stencil, n)
    good = materialize_sparse_matrix(roll_stencil, n, rows, cols, colors, n_colors)
    assert sparsity._verify_recovery(roll_stencil, good, n) is True
    bad = jsparse.BCSR((np.asarray(good.data) * 1.001, good.indices, good.indptr), shape=(n, n))
    assert sparsity._verify_recovery(roll_stencil, bad, n) is False


def test_drop_zeros():
    rows, cols, values = sparsity._drop_zeros([0, 0, 1, 2], [0, 1, 1, 2], [1.0, 1e-10, -2e-9, 0.0])
    np.testing.assert_array_equal(rows, [0, 1])
    np.testing.assert_array_equal(cols, [0, 1])


class TestMaterializeOperator:
    def test_cached_coloring_works_under_jit(self):
        op = poisson_operator()
        cache_coloring(op, 25)
        A = jax.jit(lambda: materialize_operator(op, 25))()
        np.testing.assert_allclose(
            np.asarray(A.todense()), np.asarray(poisson_matrix(5).todense()), atol=1e-6
        )

    def test_uncached_operator_under_jit_is_reported(self):
        op = poisson_operator()
        with pytest.raises(
            ValueError,
            match=r"must be pre-scanned before JIT: call jaxamg.cache_coloring\(op, shape\) or "
            r"jaxamg.with_cache\(op, coloring=...\) outside jit",
        ):
            jax.jit(lambda: materialize_operator(op, 25))()
        assert not hasattr(op, "_coloring_info")

    def test_eager_call_colors_and_caches(self):
        op = tridiagonal_operator(3.0)
        A = materialize_operator(op, 9)
        assert op._coloring_info[4] == (9, 9)
        np.testing.assert_allclose(
            np.asarray(A.todense()), np.asarray(tridiagonal_matrix(9, 3.0).todense()), atol=1e-6
        )

    def test_explicit_coloring_is_used(self):
        op = tridiagonal_operator(3.0)
        info = cache_coloring(tridiagonal_operator(3.0), 9)
        A = jax.jit(lambda: materialize_operator(op, 9, info))()
        np.testing.assert_allclose(np.asarray(A.todense()), dense_vmapped(op, 9), atol=1e-6)

    def test_row_count_mismatch_is_reported(self):
        op = tridiagonal_operator(3.0)
        cache_coloring(op, 9)
        with pytest.raises(
            ValueError, match=r"the operator's cached coloring has 9 rows but `b` has 10"
        ):
            materialize_operator(op, 10)

    def test_malformed_coloring_is_reported(self):
        with pytest.raises(ValueError, match=r"must be the 5-tuple .* got dict"):
            materialize_operator(roll_stencil, 8, {"rows": []})
