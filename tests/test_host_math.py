"""The host products that avoid NumPy's threaded BLAS agree with NumPy's."""

import numpy as np
import pytest

from jaxamg._core import host_math


@pytest.mark.parametrize("k", [1, 3, 7])
def test_gram_matches_numpy(k):
    rng = np.random.default_rng(k)
    columns = rng.standard_normal((2000, k))
    np.testing.assert_allclose(host_math.gram(columns), columns.T @ columns, rtol=1e-12)


def test_norm_matches_numpy():
    rng = np.random.default_rng(4)
    v = rng.standard_normal(5000) * 1e3
    assert host_math.norm(v) == pytest.approx(np.linalg.norm(v), rel=1e-13)
    assert host_math.norm(np.zeros(3)) == 0.0


@pytest.mark.parametrize("k", [1, 4, 6])
def test_triangular_factor_has_the_singular_values(k):
    rng = np.random.default_rng(10 + k)
    # Columns of very different scales and a near-dependent pair.
    values = rng.standard_normal((3000, k)) * np.logspace(0, 4, k)
    if k > 1:
        values[:, -1] = values[:, 0] + 1e-6 * rng.standard_normal(3000)
    r = host_math.triangular_factor(values)
    assert np.allclose(np.tril(r, -1), 0)
    expected = np.linalg.svd(values, compute_uv=False)
    got = np.linalg.svd(r, compute_uv=False)
    np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-12 * expected[0])


def test_triangular_factor_of_dependent_columns_is_singular():
    rng = np.random.default_rng(7)
    values = rng.standard_normal((1000, 3))
    values = np.c_[values, 2 * values[:, 0] - values[:, 2]]
    s = np.linalg.svd(host_math.triangular_factor(values), compute_uv=False)
    assert s[-1] < 1e-12 * s[0]
