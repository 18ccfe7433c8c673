"""jaxamg.lineax.AMGSolver inside lineax.linear_solve: solutions against
SciPy's direct solve and against lineax.CG preconditioned by jaxamg's AMG,
the transposed operator, function operators, gradients with respect to the
matrix and the right-hand side against the dense formulas, forward mode,
vmap, and a solve that runs out of iterations reported as lineax's result."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse.linalg as spla
from helpers import random_nonsymmetric, random_spd

import jaxamg

lx = pytest.importorskip("lineax")
jl = pytest.importorskip("jaxamg.lineax")

jax.config.update("jax_enable_x64", True)


def _rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - b) / np.linalg.norm(b))


def test_spd_matrix_operator_like_scipy_and_like_preconditioned_cg():
    rng = np.random.default_rng(1)
    A = random_spd(80, 0.06, rng)
    b = rng.standard_normal(80)
    reference = spla.spsolve(A.tocsc(), b)
    op = lx.MatrixLinearOperator(jnp.asarray(A.toarray()), lx.positive_semidefinite_tag)
    solver = jl.AMGSolver({"solver": "PCG", "tolerance": 1e-12, "max_iters": 100})
    state = solver.init(op, {})  # sparse, outside jit
    assert isinstance(state[0], jax.experimental.sparse.BCSR)
    assert state[0].nse == A.nnz
    solution = lx.linear_solve(op, jnp.asarray(b), solver, state=state)
    assert solution.result == lx.RESULTS.successful
    assert _rel(solution.value, reference) < 1e-10
    assert 0 < int(solution.stats["num_steps"]) < 100
    # The same system through lineax's own CG with our AMG as preconditioner.
    cg = lx.linear_solve(
        op,
        jnp.asarray(b),
        lx.CG(rtol=1e-12, atol=0.0, max_steps=500),
        options={"preconditioner": jaxamg.make_lineax_preconditioner(op)},
    )
    assert _rel(solution.value, np.asarray(cg.value)) < 1e-9
    # Without a state (init traced inside linear_solve's jit: the dense pattern).
    traced = lx.linear_solve(op, jnp.asarray(b), solver)
    assert _rel(traced.value, reference) < 1e-10


def test_transposed_and_function_operators_and_initial_guess():
    rng = np.random.default_rng(2)
    A = random_nonsymmetric(60, 0.08, rng)
    b = rng.standard_normal(60)
    M = jnp.asarray(A.toarray())
    solver = jl.AMGSolver(solver="FGMRES", tolerance=1e-12, max_iters=200)
    op = lx.MatrixLinearOperator(M)
    xt = lx.linear_solve(op.T, jnp.asarray(b), solver).value
    assert _rel(xt, spla.spsolve(A.T.tocsc(), b)) < 1e-10
    state_t, _ = solver.transpose(solver.init(op, {}), {})
    xt2 = lx.linear_solve(op.T, jnp.asarray(b), solver, state=state_t).value
    assert _rel(xt2, spla.spsolve(A.T.tocsc(), b)) < 1e-10

    function_op = lx.FunctionLinearOperator(lambda v: M @ v, jax.ShapeDtypeStruct((60,), M.dtype))
    state = solver.init(function_op, {})  # detected and coloured: the true pattern
    assert state[0].nse == A.nnz
    reference = spla.spsolve(A.tocsc(), b)
    x = lx.linear_solve(function_op, jnp.asarray(b), solver, state=state).value
    assert _rel(x, reference) < 1e-10
    # An absolute tolerance that the initial guess (the answer) already
    # meets: no iteration, and the guess comes back.
    absolute = jl.AMGSolver(solver="FGMRES", tolerance=1e-8, convergence="ABSOLUTE")
    warm = lx.linear_solve(
        function_op, jnp.asarray(b), absolute, state=state, options={"y0": jnp.asarray(reference)}
    )
    assert warm.result == lx.RESULTS.successful
    assert int(warm.stats["num_steps"]) == 0
    assert _rel(warm.value, reference) < 1e-10
    cold = lx.linear_solve(function_op, jnp.asarray(b), absolute, state=state)
    assert int(cold.stats["num_steps"]) > 0


def test_gradients_forward_mode_and_vmap_against_dense_formulas():
    rng = np.random.default_rng(3)
    A = random_nonsymmetric(40, 0.1, rng)
    b, w, v = (rng.standard_normal(40) for _ in range(3))
    Ad = A.toarray()
    x = np.linalg.solve(Ad, b)
    lam = np.linalg.solve(Ad.T, w)
    solver = jl.AMGSolver(solver="FGMRES", tolerance=1e-12, max_iters=200)

    def loss(M, rhs):
        return jnp.dot(
            jnp.asarray(w), lx.linear_solve(lx.MatrixLinearOperator(M), rhs, solver).value
        )

    gM, gb = jax.jit(jax.grad(loss, argnums=(0, 1)))(jnp.asarray(Ad), jnp.asarray(b))
    assert _rel(gb, lam) < 1e-9
    assert _rel(gM, -np.outer(lam, x)) < 1e-9

    op = lx.MatrixLinearOperator(jnp.asarray(Ad))
    tangent = jax.jvp(
        lambda r: lx.linear_solve(op, r, solver).value, (jnp.asarray(b),), (jnp.asarray(v),)
    )[1]
    assert _rel(tangent, np.linalg.solve(Ad, v)) < 1e-9

    B = rng.standard_normal((3, 40))
    X = jax.vmap(lambda r: lx.linear_solve(op, r, solver).value)(jnp.asarray(B))
    assert _rel(X, np.linalg.solve(Ad, B.T).T) < 1e-9


def test_running_out_of_iterations_is_lineax_max_steps_reached():
    rng = np.random.default_rng(4)
    A = random_nonsymmetric(50, 0.1, rng)
    op = lx.MatrixLinearOperator(jnp.asarray(A.toarray()))
    solver = jl.AMGSolver(solver="FGMRES", max_iters=1, tolerance=1e-14)
    b = jnp.asarray(rng.standard_normal(50))
    solution = lx.linear_solve(op, b, solver, throw=False)
    assert solution.result == lx.RESULTS.max_steps_reached
    assert int(solution.stats["num_steps"]) == 1
    with pytest.raises(Exception, match="maximum number of solver steps"):
        lx.linear_solve(op, b, solver)


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="`AMGSolver`: `config` must be a config dict"):
        jl.AMGSolver(3)
    with pytest.raises(TypeError, match="`AMGSolver`: `operator` must be a lineax"):
        jl.AMGSolver().init(np.eye(3), {})
    rectangular = lx.MatrixLinearOperator(jnp.ones((3, 4)))
    with pytest.raises(ValueError, match="`AMGSolver`: the operator must be square"):
        jl.AMGSolver().init(rectangular, {})
