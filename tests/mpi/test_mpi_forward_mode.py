"""Forward-mode derivatives of the distributed solve (jax.jvp, jax.jacfwd,
jax.linearize): each rank's tangent of its x slice equals the matching slice
of the serial single-process jvp, central differences of the distributed
solve itself, and dense-inverse formulas (dx = A^-1 (db - dA x)); under
jax.jit the derivative is the primal solve, at most one halo exchange and
one tangent solve."""

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import sparse as jsparse  # noqa: E402
from mpi_testing import (  # noqa: E402
    assert_all,
    assert_all_raise,
    block_matrix,
    config,
    local_block,
    needs_native_mpi,
    nonsymmetric_matrix,
    relative,
    spd_matrix,
    split_rows,
)

import jaxamg  # noqa: E402

pytestmark = needs_native_mpi

KINDS = ["symmetric", "nonsymmetric", "block-nonsym"]


class Problem:
    """A random global system, this rank's row block of it, and the
    distributed solve ``x_local = solve(local values, local b)`` beside the
    serial ``x = solve(global values, global b)``."""

    def __init__(self, comm, rng, kind, equal, n=60):
        size, rank = comm.Get_size(), comm.Get_rank()
        self.block_dim = 2 if kind == "block-nonsym" else 1
        if kind == "block-nonsym":
            A = block_matrix(n // 2, rng, symmetric=False)
            bounds = [(2 * a, 2 * b) for a, b in split_rows(n // 2, size, rng, equal=equal)]
        else:
            A = spd_matrix(n, rng) if kind == "symmetric" else nonsymmetric_matrix(n, rng)
            bounds = split_rows(n, size, rng, equal=equal)
        A.sort_indices()
        self.A, self.n, self.symmetric = A, A.shape[0], kind == "symmetric"
        self.rs, self.re = bounds[rank]
        self.lo, self.hi = int(A.indptr[self.rs]), int(A.indptr[self.re])
        self.local = local_block(A, self.rs, self.re)
        self.cfg = config(self.symmetric)
        self.comm = comm

    def solve(self, data, b):
        M = jsparse.BCSR((data, self.local.indices, self.local.indptr), shape=self.local.shape)
        if self.symmetric:
            jaxamg.with_cache(M, is_symmetric=True)
        x, _ = jaxamg.solve(
            M,
            b,
            comm=self.comm,
            nglobal=self.n,
            partition_info=(self.rs, self.re),
            block_dim=self.block_dim,
            config=self.cfg,
        )
        return x

    def serial_solve(self, data, b):
        G = jsparse.BCSR.from_scipy_sparse(self.A)
        M = jsparse.BCSR((data, G.indices, G.indptr), shape=G.shape)
        if self.symmetric:
            jaxamg.with_cache(M, is_symmetric=True)
        x, _ = jaxamg.solve(M, b, block_dim=self.block_dim, config=self.cfg)
        return x

    def rows(self, v):
        return np.asarray(v)[..., self.rs : self.re]

    def values(self, v):
        return jnp.asarray(np.asarray(v)[self.lo : self.hi])


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("equal", [True, False], ids=["equal", "unequal"])
def test_jvp_equals_serial_and_central_differences(comm, rng, kind, equal):
    p = Problem(comm, rng, kind, equal)
    data_g, b_g = p.A.data, rng.standard_normal(p.n)
    d_data_g, d_b_g = rng.standard_normal(data_g.shape), rng.standard_normal(p.n)
    data, b = p.values(data_g), jnp.asarray(p.rows(b_g))
    d_data, d_b = p.values(d_data_g), jnp.asarray(p.rows(d_b_g))

    # The three tangent kinds: a tangent of b only and of the values only
    # (the other one a symbolic zero), and of both.
    cases = {
        "b": (lambda b_: p.solve(data, b_), (b,), (d_b,), (0.0, 1.0)),
        "values": (lambda d_: p.solve(d_, b), (data,), (d_data,), (1.0, 0.0)),
        "both": (p.solve, (data, b), (d_data, d_b), (1.0, 1.0)),
    }
    checks, differences = {}, {}
    for name, (f, primals, tangents, (s_data, s_b)) in cases.items():
        # A compiled call returns before its native calls end: wait, so that
        # the next solve's host-side checks (an allgather) cannot interleave
        # with its collectives on the same communicator.
        x, t = jax.block_until_ready(jax.jvp(f, primals, tangents))
        x_jit, t_jit = jax.block_until_ready(
            jax.jit(lambda prim, tan: jax.jvp(f, prim, tan))(primals, tangents)
        )
        x_s, t_s = jax.jvp(
            p.serial_solve,
            (jnp.asarray(data_g), jnp.asarray(b_g)),
            (jnp.asarray(s_data * d_data_g), jnp.asarray(s_b * d_b_g)),
        )
        h = 1e-5
        plus = f(*(u + h * v for u, v in zip(primals, tangents)))
        minus = f(*(u - h * v for u, v in zip(primals, tangents)))
        central = (np.asarray(plus) - np.asarray(minus)) / (2 * h)
        x_ref, t_ref = p.rows(x_s), p.rows(t_s)
        checks[f"{name} x vs serial"] = relative(comm, np.asarray(x) - x_ref, x_ref)
        checks[f"{name} vs serial"] = relative(comm, np.asarray(t) - t_ref, t_ref)
        checks[f"{name} jit x"] = relative(comm, np.asarray(x_jit) - np.asarray(x), x_ref)
        checks[f"{name} jit"] = relative(comm, np.asarray(t_jit) - np.asarray(t), t_ref)
        differences[name] = relative(comm, np.asarray(t) - central, t_ref)
    assert_all(comm, max(checks.values()) <= 1e-8, f"{kind}: {checks}")
    # Central differences of solves converged to a relative residual of
    # 1e-12 carry about 1e-12 / h = 1e-7 of solver error (and h^2 = 1e-10
    # of truncation): compared at 1e-6.
    assert_all(comm, max(differences.values()) <= 1e-6, f"{kind}: {differences}")


@pytest.mark.parametrize("kind", ["symmetric", "nonsymmetric"])
@pytest.mark.parametrize("equal", [True, False], ids=["equal", "unequal"])
def test_jacfwd_equals_the_dense_inverse(comm, rng, kind, equal):
    """jacfwd with respect to global vectors (the same batch on every rank):
    d x_local / d b = rows of A^-1, d x_local / d A_kl = -A^-1[:, k] x_l."""
    p = Problem(comm, rng, kind, equal, n=24)
    b_g = rng.standard_normal(p.n)
    A_inv = np.linalg.inv(p.A.toarray())
    x_ref = A_inv @ b_g
    entry_rows = np.repeat(np.arange(p.n), np.diff(p.A.indptr))
    data = jnp.asarray(p.values(p.A.data))

    def of_b(b_global):
        return p.solve(data, b_global[p.rs : p.re])

    def of_values(data_global):
        return p.solve(data_global[p.lo : p.hi], jnp.asarray(p.rows(b_g)))

    J_b = jax.block_until_ready(jax.jacfwd(of_b)(jnp.asarray(b_g)))
    J_b_jit = jax.block_until_ready(jax.jit(jax.jacfwd(of_b))(jnp.asarray(b_g)))
    J_values = jax.block_until_ready(jax.jacfwd(of_values)(jnp.asarray(p.A.data)))
    ref_b = A_inv[p.rs : p.re]
    ref_values = -A_inv[p.rs : p.re][:, entry_rows] * x_ref[p.A.indices][None, :]
    checks = {
        "d/db": relative(comm, np.asarray(J_b) - ref_b, ref_b),
        "d/db jit": relative(comm, np.asarray(J_b_jit) - ref_b, ref_b),
        "d/dvalues": relative(comm, np.asarray(J_values) - ref_values, ref_values),
    }
    assert_all(comm, max(checks.values()) <= 1e-8, f"{kind}: {checks}")


@pytest.mark.parametrize("kind", ["symmetric", "nonsymmetric"])
def test_linearize_reuses_one_solve_for_several_tangents(comm, rng, kind):
    p = Problem(comm, rng, kind, equal=False)
    data, b = p.values(p.A.data), jnp.asarray(p.rows(rng.standard_normal(p.n)))
    x, f_jvp = jax.block_until_ready(jax.linearize(p.solve, data, b))
    checks = {}
    for trial in range(2):
        d_data_g, d_b_g = rng.standard_normal(p.A.data.shape), rng.standard_normal(p.n)
        d_data, d_b = p.values(d_data_g), jnp.asarray(p.rows(d_b_g))
        _, t_ref = jax.block_until_ready(jax.jvp(p.solve, (data, b), (d_data, d_b)))
        t = jax.block_until_ready(f_jvp(d_data, d_b))
        # dx = A^-1 (db - dA x) with the dense inverse.
        dA = p.A.copy()
        dA.data = d_data_g
        x_g = np.linalg.solve(p.A.toarray(), np.concatenate(comm.allgather(np.asarray(b))))
        dense = p.rows(np.linalg.solve(p.A.toarray(), d_b_g - dA @ x_g))
        checks[f"{trial} vs jvp"] = relative(comm, np.asarray(t) - np.asarray(t_ref), dense)
        checks[f"{trial} vs dense"] = relative(comm, np.asarray(t) - dense, dense)
    checks["x"] = relative(comm, np.asarray(x) - p.rows(x_g), p.rows(x_g))
    assert_all(comm, max(checks.values()) <= 1e-8, f"{kind}: {checks}")


def test_second_derivatives_in_b_work_and_in_values_raise(comm, rng):
    """The hessian of sum(x^3) in the global b, summed over the ranks,
    is A^-T diag(6 x) A^-1; a second derivative in the values raises the
    same NotImplementedError on every rank."""
    p = Problem(comm, rng, "nonsymmetric", equal=False, n=24)
    b_g = rng.standard_normal(p.n)
    data = p.values(p.A.data)
    A_inv = np.linalg.inv(p.A.toarray())
    x_ref = A_inv @ b_g

    def cubic(b_global):
        return jnp.sum(p.solve(data, b_global[p.rs : p.re]) ** 3)

    H = np.asarray(jax.hessian(cubic)(jnp.asarray(b_g)))  # np.asarray waits for it
    H_total = sum(comm.allgather(H))
    ref = A_inv.T @ np.diag(6 * x_ref) @ A_inv
    assert_all(comm, relative(comm, H_total - ref, ref) <= 1e-8, "hessian in b")

    b = jnp.asarray(p.rows(b_g))
    assert_all_raise(
        comm,
        NotImplementedError,
        lambda: jax.hessian(lambda d: jnp.sum(p.solve(d, b) ** 2))(data),
        match="first order only",
    )
    assert_all_raise(
        comm,
        NotImplementedError,
        lambda: jax.jacfwd(jax.grad(lambda d, b_: jnp.sum(p.solve(d, b_) ** 2)), argnums=1)(
            data, b
        ),
        match="first order only",
    )


def test_compiled_derivatives_call_one_solve_each_and_one_exchange(comm, rng):
    """Under jax.jit: jvp in b = forward + tangent solve; jvp in the values
    adds one halo exchange of x; the gradient in the values is forward solve,
    exchange and adjoint solve, as before forward mode existed."""
    p = Problem(comm, rng, "nonsymmetric", equal=False)
    data, b = p.values(p.A.data), jnp.asarray(p.rows(rng.standard_normal(p.n)))

    def targets(fun, *args):
        text = jax.jit(fun).lower(*args).as_text()
        return text.count("jaxamg_solve_mpi"), text.count("jaxamg_mpi_gather_columns")

    counts = {
        "jvp b": targets(lambda b_, t: jax.jvp(lambda u: p.solve(data, u), (b_,), (t,)), b, b),
        "jvp values": targets(
            lambda d, t: jax.jvp(lambda u: p.solve(u, b), (d,), (t,)), data, data
        ),
        "grad values": targets(jax.grad(lambda d: jnp.sum(p.solve(d, b) ** 2)), data),
        "grad b": targets(jax.grad(lambda b_: jnp.sum(p.solve(data, b_) ** 2)), b),
    }
    expected = {"jvp b": (2, 0), "jvp values": (2, 1), "grad values": (2, 1), "grad b": (2, 0)}
    assert_all(comm, counts == expected, f"{counts}")
