"""jaxamg.preconditioners: the config handed to solve (solve replaced by a
recorder), and real preconditioned Krylov solves (JAX's and lineax's)
checked against SciPy/NumPy direct solves."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import jaxamg
from jaxamg import matrices, preconditioners
from jaxamg.preconditioners import make_lineax_preconditioner, make_preconditioner

jax.config.update("jax_enable_x64", True)

lx = pytest.importorskip("lineax")

# One V-cycle of classical AMG, written out independently of the library.
EXPECTED_DEFAULT_OUTER = {
    "solver": "AMG",
    "algorithm": "CLASSICAL",
    "selector": "PMIS",
    "interpolator": "D2",
    "smoother": {"solver": "BLOCK_JACOBI", "relaxation_factor": 0.9},
    "presweeps": 1,
    "postsweeps": 1,
    "max_levels": 100,
    "strength_threshold": 0.5,
    "dense_lu_num_rows": 1,
    "aggressive_levels": 0,
    "coarse_solver": "DENSE_LU_SOLVER",
    "max_iters": 1,
    "cycle": "V",
    "convergence": "RELATIVE_INI",
    "tolerance": 1e-6,
    "norm": "L2",
    "exact_coarse_solve": 1,
}


class Recorder:
    """Stands in for jaxamg.solve: records each call, returns 3 r."""

    def __init__(self):
        self.calls = []

    def __call__(self, A, b, **kwargs):
        self.calls.append({"A": A, "b": b, **kwargs})
        info = {"iterations": 1, "residual": 0.5, "status": jaxamg.AMGXStatus.NOT_CONVERGED}
        return 3.0 * jnp.asarray(b), info


@pytest.fixture
def recorder(monkeypatch):
    rec = Recorder()
    monkeypatch.setattr(preconditioners, "solve", rec)
    return rec


def without_scopes(d):
    if isinstance(d, dict):
        return {k: without_scopes(v) for k, v in d.items() if k != "scope"}
    return d


def poisson(m, skew):
    """(BCSR float64, SciPy CSC) of the 2-D Poisson matrix on an m x m grid."""
    A = matrices.poisson_matrix(m, skew, dtype=jnp.float64)
    S = sp.csr_matrix(
        (np.asarray(A.data), np.asarray(A.indices), np.asarray(A.indptr)), shape=A.shape
    )
    return A, S.tocsc()


def counted(M, counter):
    """M with a host-side count of its applications (works inside jit)."""

    def apply(r):
        jax.debug.callback(lambda: counter.append(1))
        return M(r)

    return apply


# ---------------------------------------------------------------- recorded calls


def test_default_config_is_one_classical_amg_v_cycle(recorder, rng):
    A = matrices.poisson_matrix(4)
    r = jnp.asarray(rng.normal(size=16))
    x = make_preconditioner(A)(r)
    (call,) = recorder.calls
    cfg = call["config"]
    assert cfg["config_version"] == 2
    assert without_scopes(cfg["solver"]) == {**EXPECTED_DEFAULT_OUTER, "preconditioner": "NOSOLVER"}
    assert call["A"] is A and call["b"] is r
    np.testing.assert_array_equal(np.asarray(x), 3.0 * np.asarray(r))
    # The engine accepts it, and solve's own merge keeps it.
    text = jaxamg.config.prepare_config(cfg)
    assert without_scopes(json.loads(text)["solver"])["solver"] == "AMG"
    assert json.loads(text)["solver"]["max_iters"] == 1


def test_mpi_arguments_and_stats_file_are_forwarded(recorder, tmp_path):
    comm = object()
    stats = tmp_path / "stats.txt"
    M = make_preconditioner(
        matrices.tridiagonal_matrix(8),
        comm=comm,
        nglobal=16,
        partition_info=(0, 8),
        save_stats_file=stats,
    )
    M(jnp.ones(8))
    (call,) = recorder.calls
    assert call["comm"] is comm
    assert call["nglobal"] == 16
    assert call["partition_info"] == (0, 8)
    assert call["save_stats_file"] == stats


def test_without_mpi_the_mpi_arguments_are_none(recorder):
    make_preconditioner(matrices.tridiagonal_matrix(8))(jnp.ones(8))
    (call,) = recorder.calls
    assert call["comm"] is None and call["nglobal"] is None and call["partition_info"] is None
    assert call["save_stats_file"] is None


def test_nested_config_with_w_cycle_keeps_the_dense_lu_coarse_solver(recorder):
    A = matrices.tridiagonal_matrix(8)
    make_preconditioner(A, {"config_version": 2, "solver": {"cycle": "W"}})(jnp.ones(8))
    make_preconditioner(A, {"config_version": 2, "solver": {"presweeps": 2}}, cycle="W")(
        jnp.ones(8)
    )
    for call in recorder.calls:
        outer = call["config"]["solver"]
        assert outer["cycle"] == "W"
        assert outer["coarse_solver"] == "DENSE_LU_SOLVER"
        assert outer["solver"] == "AMG" and outer["max_iters"] == 1
        assert outer["algorithm"] == "CLASSICAL" and outer["selector"] == "PMIS"
    assert recorder.calls[1]["config"]["solver"]["presweeps"] == 2


def test_merge_rules(recorder):
    A = matrices.tridiagonal_matrix(8)
    cases = [
        # flat config, kwargs win over it
        ({"max_iters": 3, "presweeps": 2}, {"max_iters": 2}, {"max_iters": 2, "presweeps": 2}),
        # a dict merges into the default smoother, a string replaces it
        (
            None,
            {"smoother": {"relaxation_factor": 0.7}},
            {"smoother": {"solver": "BLOCK_JACOBI", "relaxation_factor": 0.7}},
        ),
        ({"smoother": "JACOBI_L1"}, {}, {"smoother": "JACOBI_L1"}),
    ]
    for config, kwargs, expected in cases:
        recorder.calls.clear()
        make_preconditioner(A, config, **kwargs)(jnp.ones(8))
        outer = without_scopes(recorder.calls[0]["config"]["solver"])
        for key, value in expected.items():
            assert outer[key] == value, (config, kwargs, key)
        assert outer["solver"] == "AMG" and outer["coarse_solver"] == "DENSE_LU_SOLVER"
    # Top-level keys of a nested config are kept.
    recorder.calls.clear()
    make_preconditioner(A, {"config_version": 2, "determinism_flag": 1, "solver": {}})(jnp.ones(8))
    assert recorder.calls[0]["config"]["determinism_flag"] == 1


@pytest.mark.parametrize("where", ["config", "kwargs"])
def test_another_solver_drops_the_amg_keys(recorder, where):
    A = matrices.tridiagonal_matrix(8)
    if where == "config":
        make_preconditioner(A, {"solver": "JACOBI_L1", "max_iters": 2})(jnp.ones(8))
    else:
        make_preconditioner(A, solver="JACOBI_L1", max_iters=2)(jnp.ones(8))
    outer = recorder.calls[0]["config"]["solver"]
    assert outer == {
        "solver": "JACOBI_L1",
        "max_iters": 2,
        "convergence": "RELATIVE_INI",
        "tolerance": 1e-6,
        "norm": "L2",
    }


def test_return_info_passes_solve_info_through(recorder):
    x, info = make_preconditioner(matrices.tridiagonal_matrix(8), return_info=True)(jnp.ones(8))
    np.testing.assert_array_equal(np.asarray(x), 3.0 * np.ones(8))
    assert info["status"] == jaxamg.AMGXStatus.NOT_CONVERGED and info["iterations"] == 1


def test_invalid_configs_fail_when_built():
    A = matrices.tridiagonal_matrix(8)
    with pytest.raises(TypeError, match="config"):
        make_preconditioner(A, '{"solver": "AMG"}')
    with pytest.raises(TypeError, match="list"):
        make_preconditioner(A, [("solver", "AMG")])
    with pytest.raises(ValueError, match="max_iters.*0"):
        make_preconditioner(A, max_iters=0)
    with pytest.raises(ValueError, match="presweeps"):
        make_preconditioner(A, {"config_version": 2, "solver": {"presweeps": -1}})


# ------------------------------------------------------------------- real solves


def test_one_v_cycle_reports_not_converged_and_its_true_residual(rng):
    A, S = poisson(16, 1.0)
    r = rng.normal(size=256)
    x, info = make_preconditioner(A, return_info=True)(jnp.asarray(r))
    assert info["status"] == jaxamg.AMGXStatus.NOT_CONVERGED
    assert info["iterations"] == 1
    assert isinstance(info["residual_history"], jax.Array)
    assert len(info["residual_history"]) == 2
    np.testing.assert_allclose(info["residual_history"][0], np.linalg.norm(r), rtol=1e-12)
    true_residual = np.linalg.norm(r - S @ np.asarray(x))
    np.testing.assert_allclose(info["residual"], true_residual, rtol=1e-9)
    assert true_residual < 0.5 * np.linalg.norm(r)  # a cycle does reduce it


def test_v_cycle_is_linear_and_symmetric_for_a_symmetric_matrix(rng):
    A, _ = poisson(16, 0.0)
    M = make_preconditioner(A)
    r1, r2 = (jnp.asarray(rng.normal(size=256)) for _ in range(2))
    a, b = rng.normal(size=2)
    combined = np.asarray(M(a * r1 + b * r2))
    separate = a * np.asarray(M(r1)) + b * np.asarray(M(r2))
    np.testing.assert_allclose(combined, separate, rtol=1e-10, atol=1e-12 * np.abs(separate).max())
    # <r2, M r1> = <r1, M r2> > 0: what CG needs of a preconditioner.
    left, right = float(r2 @ M(r1)), float(r1 @ M(r2))
    np.testing.assert_allclose(left, right, rtol=1e-10)
    assert float(r1 @ M(r1)) > 0


def test_configured_solver_reaches_the_engine(rng):
    A, S = poisson(8, 1.0)
    r = rng.normal(size=64)
    ref = spla.spsolve(S, r)
    exact = make_preconditioner(A, solver="DENSE_LU_SOLVER")(jnp.asarray(r))
    np.testing.assert_allclose(np.asarray(exact), ref, rtol=1e-10, atol=1e-12)
    x, info = make_preconditioner(A, max_iters=100, tolerance=1e-12, return_info=True)(
        jnp.asarray(r)
    )
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS and info["iterations"] > 1
    np.testing.assert_allclose(np.asarray(x), ref, rtol=1e-9, atol=1e-11)


def test_jit_vmap_and_dtype(rng):
    A, _ = poisson(8, 0.5)
    M = make_preconditioner(A)
    R = jnp.asarray(rng.normal(size=(3, 64)))
    eager = np.stack([np.asarray(M(r)) for r in R])
    np.testing.assert_allclose(np.asarray(jax.jit(M)(R[0])), eager[0], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(jax.vmap(M)(R)), eager, rtol=1e-12)
    # The result has the dtype of r (a float64 A would otherwise promote it).
    r32 = R[0].astype(jnp.float32)
    x32 = M(r32)
    assert x32.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(x32), eager[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "method, skew",
    [("cg", 0.0), ("bicgstab", 0.0), ("bicgstab", 1.0), ("bicgstab", 2.0), ("gmres", 2.0)],
)
def test_jax_krylov_with_amg_preconditioner(rng, method, skew):
    A, S = poisson(32, skew)
    b = rng.normal(size=A.shape[0])
    ref = spla.spsolve(S, b)
    krylov = getattr(jax.scipy.sparse.linalg, method)
    extra = {"restart": 30} if method == "gmres" else {}

    def run(M):
        count = []
        x, _ = jax.jit(
            lambda b: krylov(
                lambda v: A @ v, b, M=counted(M, count), tol=1e-10, maxiter=1000, **extra
            )
        )(jnp.asarray(b))
        return np.asarray(x), len(count)

    x, with_amg = run(make_preconditioner(A))
    np.testing.assert_allclose(x, ref, rtol=1e-7, atol=1e-9 * np.abs(ref).max())
    _, without = run(lambda r: r)
    assert with_amg * 3 < without, (with_amg, without)


# ------------------------------------------------------------------------ lineax


def lineax_poisson(m, skew):
    _, S = poisson(m, skew)
    tags = (lx.symmetric_tag, lx.positive_semidefinite_tag) if skew == 0 else ()
    return lx.MatrixLinearOperator(jnp.asarray(S.toarray()), tags), S


def test_lineax_tags_inherit_and_override():
    spd, _ = lineax_poisson(4, 0.0)
    assert make_lineax_preconditioner(spd).tags == frozenset(
        {lx.symmetric_tag, lx.positive_semidefinite_tag}
    )
    nonsym, _ = lineax_poisson(4, 1.0)
    assert make_lineax_preconditioner(nonsym).tags == frozenset()
    assert make_lineax_preconditioner(spd, tags=()).tags == frozenset()
    assert make_lineax_preconditioner(nonsym, tags=lx.symmetric_tag).tags == frozenset(
        {lx.symmetric_tag}
    )
    # Structural tags describe A, not an approximation of its inverse.
    diag = lx.MatrixLinearOperator(jnp.diag(jnp.arange(1.0, 5.0)), lx.diagonal_tag)
    tags = make_lineax_preconditioner(diag).tags
    assert lx.diagonal_tag not in tags and lx.symmetric_tag in tags


def test_lineax_structures_and_forwarding(recorder):
    op, _ = lineax_poisson(4, 1.0)
    P = make_lineax_preconditioner(
        op,
        {"config_version": 2, "solver": {"cycle": "W"}},
        presweeps=3,
        nglobal=16,
        partition_info=(0, 16),
    )
    assert P.in_structure() == op.out_structure()
    assert P.out_structure() == op.in_structure()
    r = jnp.arange(16.0)
    np.testing.assert_array_equal(np.asarray(P.mv(r)), 3.0 * np.arange(16.0))
    (call,) = recorder.calls
    outer = call["config"]["solver"]
    assert outer["cycle"] == "W" and outer["presweeps"] == 3
    assert outer["coarse_solver"] == "DENSE_LU_SOLVER" and outer["max_iters"] == 1
    assert call["nglobal"] == 16 and call["partition_info"] == (0, 16)
    # The matrix handed to solve is the operator's, converted once.
    np.testing.assert_array_equal(np.asarray(call["A"].todense()), np.asarray(op.as_matrix()))


def test_lineax_validation(monkeypatch):
    with pytest.raises(TypeError, match="AbstractLinearOperator.*ndarray"):
        make_lineax_preconditioner(np.eye(3))
    rect = lx.MatrixLinearOperator(jnp.ones((3, 5)))
    with pytest.raises(ValueError, match="square.*\\(5,\\).*\\(3,\\)"):
        make_lineax_preconditioner(rect)
    grid = lx.FunctionLinearOperator(lambda x: 2 * x, jax.ShapeDtypeStruct((4, 4), jnp.float64))
    with pytest.raises(ValueError, match="1-D vector"):
        make_lineax_preconditioner(grid)
    pair = lx.FunctionLinearOperator(lambda x: x, (jax.ShapeDtypeStruct((3,), jnp.float64),) * 2)
    with pytest.raises(ValueError, match="1-D vector"):
        make_lineax_preconditioner(pair)
    monkeypatch.setitem(__import__("sys").modules, "lineax", None)
    with pytest.raises(ImportError, match="pip install lineax"):
        make_lineax_preconditioner(rect)


@pytest.mark.parametrize(
    "solver, skew",
    [
        (lx.CG(rtol=1e-10, atol=1e-10, max_steps=1000), 0.0),
        (lx.GMRES(rtol=1e-10, atol=1e-10, max_steps=1000, restart=30), 2.0),
        (lx.BiCGStab(rtol=1e-10, atol=1e-10, max_steps=1000), 2.0),
    ],
    ids=["CG", "GMRES", "BiCGStab"],
)
def test_lineax_solves_with_amg_preconditioner(rng, solver, skew):
    op, S = lineax_poisson(32, skew)
    b = rng.normal(size=S.shape[0])
    ref = spla.spsolve(S, b)
    P = make_lineax_preconditioner(op)

    def run(options):
        count = []  # operator applications, the cost of a Krylov method
        counting = lx.FunctionLinearOperator(counted(op.mv, count), op.in_structure(), tags=op.tags)
        sol = lx.linear_solve(counting, jnp.asarray(b), solver, options=options, throw=False)
        return sol, len(count)

    sol, with_amg = run({"preconditioner": P})
    assert sol.result == lx.RESULTS.successful
    np.testing.assert_allclose(np.asarray(sol.value), ref, rtol=1e-7, atol=1e-9 * np.abs(ref).max())
    _, without = run({})
    assert with_amg * 3 < without, (with_amg, without)


def test_lineax_cg_rejects_an_untagged_preconditioner():
    op, _ = lineax_poisson(8, 0.0)
    P = make_lineax_preconditioner(op, tags=())
    with pytest.raises(ValueError, match="positive definite"):
        lx.linear_solve(
            op, jnp.ones(64), lx.CG(rtol=1e-8, atol=1e-8), options={"preconditioner": P}
        )


class NoDenseOperator(lx.FunctionLinearOperator):
    """A matrix-free operator whose dense matrix must not be formed."""

    def as_matrix(self):
        raise AssertionError("as_matrix() was called")


def test_lineax_matrix_free_operator_is_assembled_sparse(recorder):
    m = 12
    operator = matrices.poisson_operator(1.5)
    op = NoDenseOperator(operator, jax.ShapeDtypeStruct((m * m,), jnp.float64))
    P = make_lineax_preconditioner(op)
    P.mv(jnp.ones(m * m))
    (call,) = recorder.calls
    A = call["A"]
    assert A.nse == 5 * m * m - 4 * m  # the 5-point pattern, nothing more
    # Independent reference: the operator applied to the identity's columns.
    dense = np.asarray(jax.vmap(operator)(jnp.eye(m * m))).T
    np.testing.assert_allclose(np.asarray(A.todense()), dense, rtol=1e-12)


def test_lineax_matrix_free_operator_solve(rng):
    m = 16
    operator = matrices.poisson_operator(1.5)
    op = NoDenseOperator(operator, jax.ShapeDtypeStruct((m * m,), jnp.float64))
    P = make_lineax_preconditioner(op)
    dense = np.asarray(jax.vmap(operator)(jnp.eye(m * m))).T
    b = rng.normal(size=m * m)
    sol = lx.linear_solve(
        op,
        jnp.asarray(b),
        lx.BiCGStab(rtol=1e-10, atol=1e-10, max_steps=500),
        options={"preconditioner": P},
    )
    np.testing.assert_allclose(np.asarray(sol.value), np.linalg.solve(dense, b), rtol=1e-7)
