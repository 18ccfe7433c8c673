"""Sparsity detection by jaxpr tracing (`jaxamg.sparsity.trace_sparsity_pattern`).

Every traced pattern is compared with the nonzeros of a dense matrix built in
the test by applying the operator to the basis vectors (or, for nonlinear
maps, with the dense Jacobian at a random point), and with SciPy for the
stencils. Operators use random coefficients drawn per test.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax import lax

from jaxamg.matrices import poisson3d_operator, poisson_operator, tridiagonal_operator
from jaxamg.sparsity import trace_sparsity_pattern

N = 12


def dense_matrix(op, n_global: int) -> np.ndarray:
    """Column j is op(e_j)."""
    return np.asarray(jax.jit(jax.vmap(op))(jnp.eye(n_global))).T


def jacobian_pattern(op, n_global: int, rng) -> set:
    x = jnp.asarray(rng.uniform(0.5, 1.5, n_global), dtype=jnp.float32)
    J = np.asarray(jax.jacfwd(op)(x))
    return set(zip(*map(np.ndarray.tolist, np.nonzero(J))))


def pattern_set(pattern) -> set:
    rows, cols = pattern
    return set(zip(rows.tolist(), cols.tolist()))


def traced(op, shape):
    result = trace_sparsity_pattern(op, shape)
    assert result is not None, "tracing gave up"
    return pattern_set(result)


def nonzeros(M: np.ndarray) -> set:
    return set(zip(*map(np.ndarray.tolist, np.nonzero(M))))


def _roll_sum(x):
    return 2.0 * x - jnp.roll(x, 1) - jnp.roll(x, -1)


# Linear operators, each exercising a primitive rule (named by its id); the
# traced pattern must equal the dense matrix's nonzeros exactly.
LINEAR = {
    "scale": lambda x: 2.0 * x - 0.5 * x,
    "reshape_transpose": lambda x: (x.reshape(4, 3).T).reshape(-1),
    "rev": lambda x: jnp.flip(x),
    "concatenate": lambda x: jnp.concatenate([x[1:], x[:1]]),
    "slice_pad": lambda x: jnp.pad(x[1:], (0, 1)),
    "pad_interior_negative": lambda x: jnp.concatenate(
        [lax.pad(x[:6], 0.0, ((1, -2, 1),)), x[10:]]
    ),
    "dynamic_slice": lambda x: jnp.pad(lax.dynamic_slice(x, (2,), (5,)), (2, 5)),
    "gather_permutation": lambda x: x[jnp.array([3, 1, 0, 2, 5, 4, 7, 6, 9, 8, 11, 10])],
    "gather_computed_index": lambda x: x[(jnp.arange(N) + 3) % N],
    "gather_fill": lambda x: (
        x.at[jnp.array([0, 5, 20, -30])].get(mode="fill", fill_value=0.0).repeat(3)
    ),
    "reduce_then_broadcast": lambda x: jnp.repeat(x.reshape(4, 3).sum(axis=1), 3),
    "reduce_all": lambda x: x + jnp.sum(x),
    "squeeze_expand_dims": lambda x: jnp.squeeze(jnp.expand_dims(x, 1), 1) + jnp.roll(x, 1),
    "periodic_wrap": _roll_sum,
    "jit_wrapped": lambda x: jax.jit(lambda v: 2.0 * v - jnp.roll(v, 1))(x),
    "checkpoint": lambda x: jax.checkpoint(lambda v: 3.0 * v + jnp.roll(v, 2))(x),
    "reverse_scan": lambda x: lax.scan(lambda c, xt: (xt, xt + c), 0.0, x, reverse=True)[1],
    "static_where": lambda x: jnp.where(jnp.arange(N) < N // 2, x, jnp.roll(x, 1)),
    "select_n_int": lambda x: lax.select_n(
        jnp.array([0, 1, 2] * 4), x, jnp.roll(x, 1), jnp.roll(x, -1)
    ),
    "scatter_replace": lambda x: (3.0 * x).at[2:6].set(x[0:4] + x[4:8]),
    "scatter_add_overlap": lambda x: jnp.zeros(N).at[jnp.repeat(jnp.arange(N // 2), 2)].add(x),
    "scatter_add_window": lambda x: jnp.concatenate(
        [jnp.zeros((4, 2)).at[jnp.array([0, 1, 1])].add(x[:6].reshape(3, 2)).reshape(-1), x[8:]]
    ),
    "dynamic_update_slice": lambda x: lax.dynamic_update_slice(3.0 * x, x[0:4] + x[4:8], (7,)),
    "dynamic_update_slice_clamped": lambda x: lax.dynamic_update_slice(3.0 * x, x[:4], (99,)),
    "dynamic_update_slice_2d": lambda x: lax.dynamic_update_slice(
        (2.0 * x).reshape(4, 3), x[:6].reshape(2, 3), (1, 0)
    ).reshape(-1),
    "zero_scalar_term": lambda x: 2.0 * x + x * 0.0,
    "custom_jvp": lambda x: jax.nn.relu(1.0) * jnp.roll(x, 3),
}


@pytest.mark.parametrize("name", sorted(LINEAR))
def test_linear_rule_is_exact(name):
    op = LINEAR[name]
    assert traced(op, (N, N)) == nonzeros(dense_matrix(op, N))


def test_nonlinear_elementwise_is_exact(rng):
    op = lambda x: jnp.sin(x) * jnp.exp(jnp.roll(x, 1)) + x**3
    assert traced(op, (N, N)) == jacobian_pattern(op, N, rng)


def test_custom_vjp_is_read_through():
    @jax.custom_vjp
    def f(v):
        return jnp.roll(v, 1) * 2.0

    f.defvjp(lambda v: (f(v), None), lambda _, g: (jnp.roll(g, -1) * 2.0,))
    assert traced(f, (N, N)) == nonzeros(dense_matrix(f, N))


def test_random_coefficient_matmuls(rng):
    dense_w = jnp.asarray(rng.standard_normal((N, N)), jnp.float32)
    band = np.where(
        np.abs(np.subtract.outer(np.arange(N), np.arange(N))) <= 1, rng.uniform(1, 2, (N, N)), 0
    )
    banded_w = jnp.asarray(band, jnp.float32)
    small = jnp.asarray(rng.standard_normal((4, 4)), jnp.float32)
    batch = jnp.asarray(rng.standard_normal((3, 4, 4)) * (rng.random((3, 4, 4)) > 0.5), jnp.float32)
    ops = [
        lambda x: dense_w @ x,
        lambda x: banded_w @ x,
        lambda x: x @ dense_w,  # data on the left of dot_general
        lambda x: (small @ x.reshape(4, 3)).reshape(-1),
        lambda x: jnp.einsum("bij,bj->bi", batch, x.reshape(3, 4)).reshape(-1),
        lambda x: jnp.einsum("bj,bij->ib", x.reshape(3, 4), batch).reshape(-1),
    ]
    for op in ops:
        assert traced(op, (N, N)) == nonzeros(dense_matrix(op, N))


def test_zero_skip_tightens_a_masked_product():
    n = 48
    L = jnp.asarray(np.tril(np.ones((n, n), np.float32)))
    keep = jnp.asarray((np.arange(n) < 4).astype(np.float32))
    tight = traced(lambda x: keep * (L @ x), (n, n))
    loose = traced(lambda x: L @ x, (n, n))
    assert tight == nonzeros(dense_matrix(lambda x: keep * (L @ x), n))
    assert tight < loose


@pytest.mark.parametrize(
    "op, n",
    [(tridiagonal_operator(-2.0), 16), (poisson_operator(), 25), (poisson_operator(0.7), 36)],
    ids=["tridiagonal", "poisson2d", "poisson2d_skew"],
)
def test_convolution_stencils(op, n):
    assert traced(op, (n, n)) == nonzeros(dense_matrix(op, n))


def test_convolution_parameters(rng):
    kernel = rng.standard_normal((6, 2, 3, 2)).astype(np.float32)
    kernel[0, 0, 1, 1] = 0.0  # a zero tap reads nothing
    k2 = rng.standard_normal((3, 3, 2, 5)).astype(np.float32)
    k3 = rng.standard_normal((4, 3, 2, 2)).astype(np.float32)
    cases = [
        (
            lambda x: lax.conv_general_dilated(
                x.reshape(2, 4, 7, 6),
                jnp.asarray(kernel, x.dtype),
                (2, 1),
                ((1, 2), (0, 1)),
                lhs_dilation=(1, 2),
                rhs_dilation=(2, 1),
                feature_group_count=2,
            ).reshape(-1),
            2 * 4 * 7 * 6,
        ),
        (
            lambda x: lax.conv_general_dilated(
                x.reshape(1, 6, 6, 2),
                jnp.asarray(k2, x.dtype),
                (1, 1),
                "SAME",
                dimension_numbers=("NHWC", "HWIO", "NHWC"),
            ).reshape(-1),
            72,
        ),
        (
            lambda x: lax.conv_general_dilated(
                x.reshape(4, 3, 5, 5),
                jnp.asarray(k3, x.dtype),
                (1, 1),
                "VALID",
                batch_group_count=2,
            ).reshape(-1),
            300,
        ),
    ]
    for op, n_in in cases:
        M = dense_matrix(op, n_in)
        assert traced(op, (M.shape[0], n_in)) == nonzeros(M)


def test_scan_carry_and_constants(rng):
    w = jnp.asarray(rng.uniform(1, 2, 4), jnp.float32)

    def op(x):
        def body(carry, xt):
            carry = 0.5 * carry + xt[0] * w[0]
            return carry, carry + xt[1] * w[1]

        return lax.scan(body, 0.0, x.reshape(6, 2))[1]

    M = dense_matrix(op, N)
    assert traced(op, (6, N)) == nonzeros(M)


def test_poisson3d_with_robin_matches_scipy():
    m = 6
    T = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(m, m))
    eye = sp.eye_array(m)
    L = (
        sp.kron(sp.kron(T, eye), eye)
        + sp.kron(sp.kron(eye, T), eye)
        + sp.kron(sp.kron(eye, eye), T)
    )
    assert traced(poisson3d_operator(robin=2.0), m**3) == nonzeros(L.toarray())


def test_distributed_row_block():
    n, start, stop = 6**3, 70, 150
    base = poisson3d_operator(robin=2.0)
    block = lambda x: base(x)[start:stop]
    M = dense_matrix(base, n)[start:stop]
    assert traced(block, (stop - start, n)) == nonzeros(M)


def test_variable_coefficient(rng):
    n = 5**3
    base = poisson3d_operator(robin=1.0)
    c = jnp.asarray(rng.uniform(0.5, 1.5, n), jnp.float32)
    op = lambda u: c * base(u)
    assert traced(op, n) == nonzeros(dense_matrix(op, n))


def test_3d_stencil_on_32_cubed_is_fast():
    m = 32
    start = time.perf_counter()
    rows, cols = trace_sparsity_pattern(poisson3d_operator(robin=1.0), m**3)
    elapsed = time.perf_counter() - start
    T = sp.diags_array([-1.0, 2.0, -1.0], offsets=[-1, 0, 1], shape=(m, m))
    eye = sp.eye_array(m)
    L = (
        sp.kron(sp.kron(T, eye), eye)
        + sp.kron(sp.kron(eye, T), eye)
        + sp.kron(sp.kron(eye, eye), T)
    ).tocoo()
    order = np.lexsort((L.col, L.row))
    np.testing.assert_array_equal(rows, L.row[order])
    np.testing.assert_array_equal(cols, L.col[order])
    assert elapsed < 10.0  # about 0.1 s; a quadratic rule would take minutes


class TestSupersets:
    def test_cond_unions_its_branches(self):
        op = lambda x: lax.cond(True, lambda v: jnp.roll(v, 1), lambda v: 2.0 * v, x)
        got = traced(op, (N, N))
        truth = nonzeros(dense_matrix(op, N))
        assert got == truth | {(i, i) for i in range(N)}

    def test_input_dependent_cond_index_reaches_every_row(self):
        op = lambda x: lax.cond(x[0] > 0, lambda v: jnp.roll(v, 1), lambda v: jnp.roll(v, -1), x)
        got = traced(op, (N, N))
        assert all((i, 0) in got for i in range(N))
        assert all((i, (i - 1) % N) in got and (i, (i + 1) % N) in got for i in range(N))

    def test_input_dependent_select_keeps_both_cases(self):
        got = traced(lambda x: jnp.where(x > 0.0, 2.0 * x, jnp.roll(x, 1)), (N, N))
        assert got == {(i, i) for i in range(N)} | {(i, (i - 1) % N) for i in range(N)}

    def test_local_opaque_callback_is_over_approximated(self):
        n = 16

        def op(x):
            corr = jax.pure_callback(
                lambda v: np.asarray(v) * 0.5,
                jax.ShapeDtypeStruct((2,), x.dtype),
                x[:2],
                vmap_method="sequential",
            )
            return _roll_sum(x).at[:2].add(corr)

        got = traced(op, (n, n))
        truth = nonzeros(dense_matrix(op, n))
        assert truth <= got
        assert got - truth <= {(0, 1), (1, 0)}

    def test_local_unhandled_primitive_is_over_approximated(self):
        op = lambda x: jnp.concatenate([jnp.cumsum(x[:3]), x[3:]])
        got = traced(op, (N, N))
        assert got == nonzeros(dense_matrix(op, N)) | {(0, 1), (0, 2), (1, 2)}


def test_dead_code_is_ignored():
    def op(x):
        _ = jnp.cumsum(x)  # unsupported and non-local, but unused
        return 2.0 * x

    assert traced(op, (N, N)) == {(i, i) for i in range(N)}


def test_zero_operator_gives_an_empty_pattern():
    rows, cols = trace_sparsity_pattern(lambda x: jnp.zeros_like(x), N)
    assert rows.size == 0 and cols.size == 0


def test_pattern_is_sorted_row_major_int64():
    rows, cols = trace_sparsity_pattern(_roll_sum, N)
    assert rows.dtype == np.int64 and cols.dtype == np.int64
    key = rows * N + cols
    assert np.all(np.diff(key) > 0)


FALLBACKS = {
    "opaque_callback": lambda x: jax.pure_callback(
        lambda v: np.asarray(v) * 2.0, jax.ShapeDtypeStruct(x.shape, x.dtype), x
    ),
    "argsort_gather": lambda x: x[jnp.argsort(x)],
    "cumsum": lambda x: jnp.cumsum(x),
    "argsort_scatter": lambda x: jnp.zeros(N).at[jnp.argsort(x)].add(x),
    "clip_scatter": lambda x: (3.0 * x).at[jnp.array([0, 2, 99])].set(x[:3], mode="clip"),
    "input_dependent_update_start": lambda x: lax.dynamic_update_slice(
        3.0 * x, x[:4], ((x[0] > 0.0).astype(jnp.int32),)
    ),
    "two_data_operands_in_dot": lambda x: jnp.ones(N) * (x @ x),
    "two_outputs": lambda x: (x, 2.0 * x),
    "wrong_output_size": lambda x: x[:5],
    "raises": lambda x: x.reshape(5, 5),
}


@pytest.mark.parametrize("name", sorted(FALLBACKS))
def test_untraceable_operators_return_none(name):
    assert trace_sparsity_pattern(FALLBACKS[name], (N, N)) is None


def test_shape_is_validated():
    with pytest.raises(ValueError, match=r"`jaxamg.trace_sparsity_pattern`: `shape` must be"):
        trace_sparsity_pattern(_roll_sum, (N, N, N))
    with pytest.raises(ValueError, match=r"got -3"):
        trace_sparsity_pattern(_roll_sum, -3)
