"""jaxamg.solve against independent references: SciPy spsolve over a zoo of
matrices, dtypes and input formats; jit, vmap and eager agree; statuses."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg import matrices

jax.config.update("jax_enable_x64", True)

TIGHT = {"tolerance": 1e-10, "max_iters": 500}


def spd_matrix(rng, n):
    """Random sparse SPD matrix: a 2-D Laplacian plus a random SPD perturbation."""
    m = int(np.sqrt(n))
    L = sp.csr_matrix(np.asarray(matrices.poisson_matrix(m).todense(), dtype=np.float64))
    R = sp.random(n, n, density=3.0 / n, random_state=rng.integers(1 << 31)) * 0.1
    return (L + R @ R.T).tocsr()


def nonsymmetric_matrix(rng, n):
    m = int(np.sqrt(n))
    A = sp.csr_matrix(np.asarray(matrices.poisson_matrix(m, skew=0.7).todense(), dtype=np.float64))
    R = sp.random(n, n, density=2.0 / n, random_state=rng.integers(1 << 31)) * 0.2
    return (A + R).tocsr()


def to_format(A, fmt):
    if fmt == "bcsr":
        return jsparse.BCSR.from_scipy_sparse(A)
    if fmt == "bcoo":
        return jsparse.BCOO.from_scipy_sparse(A)
    if fmt == "dense_np":
        return A.toarray()
    if fmt == "dense_jax":
        return jnp.asarray(A.toarray())
    return A.asformat(fmt)


@pytest.mark.parametrize(
    "fmt", ["bcsr", "bcoo", "csr", "csc", "coo", "bsr", "lil", "dok", "dense_np", "dense_jax"]
)
@pytest.mark.parametrize("kind", ["spd", "nonsymmetric"])
def test_matches_spsolve_every_format(rng, fmt, kind):
    n = 64
    A = spd_matrix(rng, n) if kind == "spd" else nonsymmetric_matrix(rng, n)
    b = rng.normal(size=n)
    x, info = jaxamg.solve(to_format(A, fmt), jnp.asarray(b), **TIGHT)
    assert info["status"] == jaxamg.AMGXStatus.SUCCESS
    np.testing.assert_allclose(np.asarray(x), spla.spsolve(A.tocsc(), b), rtol=1e-7, atol=1e-9)
    assert x.dtype == jnp.float64


@pytest.mark.parametrize("solver", ["PCG", "PBICGSTAB", "GMRES", "FGMRES", "PCGF"])
def test_solvers_float32_and_float64(rng, solver):
    n = 100
    A = spd_matrix(rng, n)
    b = rng.normal(size=n)
    ref = spla.spsolve(A.tocsc(), b)
    for dtype, rtol in ((np.float64, 1e-7), (np.float32, 2e-3)):
        Aj = jsparse.BCSR.from_scipy_sparse(A.astype(dtype))
        x, info = jaxamg.solve(
            Aj,
            jnp.asarray(b, dtype),
            solver=solver,
            tolerance=1e-10 if dtype == np.float64 else 1e-5,
        )
        assert x.dtype == dtype
        assert info["status"] == jaxamg.AMGXStatus.SUCCESS, info
        np.testing.assert_allclose(np.asarray(x), ref, rtol=rtol, atol=rtol * np.abs(ref).max())


def test_dtype_rule_promotes_to_float64(rng):
    A = jsparse.BCSR.from_scipy_sparse(spd_matrix(rng, 36).astype(np.float64))
    b32 = jnp.asarray(rng.normal(size=36), jnp.float32)
    x, _ = jaxamg.solve(A, b32)
    assert x.dtype == jnp.float64
    A32 = jsparse.BCSR.from_scipy_sparse(spd_matrix(rng, 36).astype(np.float32))
    x, _ = jaxamg.solve(A32, jnp.arange(36))  # an int rhs becomes float32
    assert x.dtype == jnp.float32


def test_jit_equals_eager_and_values_are_operands(rng):
    A = jsparse.BCSR.from_scipy_sparse(nonsymmetric_matrix(rng, 49))
    b = jnp.asarray(rng.normal(size=49))
    x_eager, info_eager = jaxamg.solve(A, b, **TIGHT)

    @jax.jit
    def f(data, rhs):
        M = jsparse.BCSR((data, A.indices, A.indptr), shape=A.shape)
        return jaxamg.solve(M, rhs, **TIGHT)

    x_jit, info_jit = f(A.data, b)
    np.testing.assert_allclose(np.asarray(x_jit), np.asarray(x_eager), rtol=1e-12, atol=1e-14)
    assert int(info_jit["iterations"]) == info_eager["iterations"]
    # One custom call per solve, and the values are an operand (not a constant).
    hlo = f.lower(A.data, b).as_text()
    assert hlo.count("jaxamg_solve") == 1
    x2, _ = f(2 * A.data, b)
    np.testing.assert_allclose(np.asarray(x2), np.asarray(x_eager) / 2, rtol=1e-8)


def test_vmap_over_b_and_over_values_and_b(rng):
    A = nonsymmetric_matrix(rng, 64)
    Aj = jsparse.BCSR.from_scipy_sparse(A)
    B = rng.normal(size=(4, 64))
    X, info = jax.vmap(lambda rhs: jaxamg.solve(Aj, rhs, **TIGHT))(jnp.asarray(B))
    for k in range(4):
        np.testing.assert_allclose(np.asarray(X[k]), spla.spsolve(A.tocsc(), B[k]), rtol=1e-7)
    assert info["iterations"].shape == (4,)
    scales = jnp.asarray([1.0, 2.0, 3.0])

    def lane(s, rhs):
        M = jsparse.BCSR((s * Aj.data, Aj.indices, Aj.indptr), shape=Aj.shape)
        return jaxamg.solve(M, rhs, **TIGHT)[0]

    X2 = jax.vmap(lane)(scales, jnp.asarray(B[:3]))
    for k in range(3):
        np.testing.assert_allclose(
            np.asarray(X2[k]), spla.spsolve(((k + 1) * A).tocsc(), B[k]), rtol=1e-7
        )


def test_residual_history_eager_trimmed_jit_padded(rng):
    A = jsparse.BCSR.from_scipy_sparse(spd_matrix(rng, 64))
    b = jnp.asarray(rng.normal(size=64))
    _, info = jaxamg.solve(A, b, solver="PCG", max_iters=50)
    hist = info["residual_history"]
    # A JAX array in a direct call too (JAX-AMG's type), in b's dtype.
    assert isinstance(hist, jax.Array) and hist.dtype == b.dtype
    assert len(hist) == info["iterations"] + 1
    assert hist[-1] == pytest.approx(info["residual"])
    assert hist[0] == pytest.approx(float(jnp.linalg.norm(b)), rel=1e-12)
    _, info_j = jax.jit(lambda rhs: jaxamg.solve(A, rhs, solver="PCG", max_iters=50))(b)
    h = np.asarray(info_j["residual_history"])
    assert h.shape == (51,)
    k = int(info_j["iterations"])
    assert np.all(np.isfinite(h[: k + 1])) and np.all(np.isnan(h[k + 1 :]))


def test_info_says_setup_and_solve_ran_on_the_host(rng):
    # CPU arrays: the host engine builds and solves, in direct calls (Python
    # bools, no reason keys: the host is the place asked for), under jit and
    # under vmap (bool arrays).
    A = jsparse.BCSR.from_scipy_sparse(spd_matrix(rng, 64))
    b = jnp.asarray(rng.normal(size=64))
    _, info = jaxamg.solve(A, b, solver="PCG")
    assert info["setup_on_device"] is False and info["solve_on_device"] is False
    assert "host_reason" not in info and "setup_reason" not in info
    _, info_j = jax.jit(lambda rhs: jaxamg.solve(A, rhs, solver="PCG"))(b)
    assert info_j["solve_on_device"].dtype == jnp.bool_ and not bool(info_j["solve_on_device"])
    assert not bool(info_j["setup_on_device"])
    bs = jnp.asarray(rng.normal(size=(3, 64)))
    _, info_v = jax.vmap(lambda rhs: jaxamg.solve(A, rhs, solver="PCG"))(bs)
    assert info_v["solve_on_device"].shape == (3,) and not np.any(info_v["solve_on_device"])


def test_not_converged_when_max_iters_too_small():
    A = matrices.tridiagonal_matrix(256, 2.0, dtype=jnp.float64)
    b = matrices.rhs_ones(256, dtype=jnp.float64)
    _, info = jaxamg.solve(A, b, solver="CG", max_iters=100)
    assert info["status"] == jaxamg.AMGXStatus.NOT_CONVERGED
    assert info["iterations"] == 100
    _, info = jaxamg.solve(A, b, solver="CG", max_iters=1)
    assert info["status"] == jaxamg.AMGXStatus.NOT_CONVERGED and info["iterations"] == 1


def test_cg_and_bicgstab_ignore_the_preconditioner():
    A = matrices.tridiagonal_matrix(100, 4.0, dtype=jnp.float64)
    b = matrices.rhs_ones(100, dtype=jnp.float64)
    _, with_amg = jaxamg.solve(A, b, solver="CG")  # the default AMG block stays in the config
    _, without = jaxamg.solve(A, b, solver="CG", preconditioner="NOSOLVER")
    assert with_amg["iterations"] == without["iterations"]
    _, pcg = jaxamg.solve(A, b, solver="PCG")
    assert pcg["iterations"] < with_amg["iterations"]


def test_nonsymmetric_cg_fails_bicgstab_and_gmres_succeed():
    A = matrices.poisson_matrix(5, skew=1.0, dtype=jnp.float64)
    b = matrices.rhs_ones(25, dtype=jnp.float64)
    pre = {"preconditioner": {"solver": "JACOBI_L1"}}
    _, cg = jaxamg.solve(A, b, config={"solver": "CG", "max_iters": 1000, **pre})
    assert cg["status"] != jaxamg.AMGXStatus.SUCCESS or cg["iterations"] > 25
    for solver in ("BICGSTAB", "GMRES"):
        x, info = jaxamg.solve(A, b, config={"solver": solver, "max_iters": 1000, **pre})
        assert info["status"] == jaxamg.AMGXStatus.SUCCESS
        np.testing.assert_allclose(
            np.asarray(A.todense()) @ np.asarray(x), np.ones(25), rtol=0, atol=1e-4
        )


def test_x0_warm_start_cuts_iterations(rng):
    A = matrices.poisson_matrix(64, dtype=jnp.float64)
    b = matrices.rhs_random(64 * 64, seed=1, dtype=jnp.float64)
    x, cold = jaxamg.solve(A, b, convergence="ABSOLUTE", tolerance=1e-4)
    x_pert = x + 1e-6 * jnp.asarray(rng.normal(size=x.shape))
    _, warm = jaxamg.solve(A, b, x0=x_pert, convergence="ABSOLUTE", tolerance=1e-4)
    assert warm["iterations"] < cold["iterations"]
    with pytest.raises(ValueError, match="x0 must have the same shape as b"):
        jaxamg.solve(A, b, x0=jnp.zeros(3))


def test_save_stats_file_has_both_sections(tmp_path, capsys):
    A = matrices.poisson_matrix(16, dtype=jnp.float64)
    b = matrices.rhs_ones(256, dtype=jnp.float64)
    path = tmp_path / "stats.txt"
    _, info = jaxamg.solve(A, b, save_stats_file=path)
    text = path.read_text()
    assert "AMG GRID STATISTICS" in text and "SOLVER ITERATIONS" in text
    assert "Number of Levels" in text and f"Total Iterations: {info['iterations']}" in text
    assert f"Stats saved to {path}" in capsys.readouterr().out
    with pytest.raises(ValueError, match="direct call"):
        jax.jit(lambda r: jaxamg.solve(A, r, save_stats_file=path))(b)


def test_save_stats_file_on_a_cached_setup_has_the_grid_table(tmp_path):
    # The second call reuses the first one's hierarchy (no setup runs): its
    # file still has the grid table, equal to the first one's, as JAX-AMG's
    # files have it on every call.
    A = matrices.poisson_matrix(16, dtype=jnp.float64)
    b = jnp.asarray(np.random.default_rng(7).normal(size=256))
    texts = []
    for i in range(2):
        path = tmp_path / f"stats{i}.txt"
        _, info = jaxamg.solve(A, b * (i + 1), save_stats_file=path)
        assert int(info["status"]) == 0
        texts.append(path.read_text())
    grids = [t.split("SOLVER ITERATIONS")[0] for t in texts]
    assert "Number of Levels" in grids[0]
    assert grids[1] == grids[0]


def test_same_answer_as_the_command_line(tmp_path):
    import json
    import subprocess
    import sys

    import scipy.io

    A = sp.csr_matrix(np.asarray(matrices.poisson_matrix(20, skew=0.3).todense(), np.float64))
    b = np.linspace(0.0, 1.0, A.shape[0])
    scipy.io.mmwrite(tmp_path / "A.mtx", A)
    scipy.io.mmwrite(tmp_path / "b.mtx", b.reshape(-1, 1))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "jaxamg",
            "solve",
            str(tmp_path / "A.mtx"),
            "--rhs",
            str(tmp_path / "b.mtx"),
            "--solution",
            str(tmp_path / "x.mtx"),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    x_cli = scipy.io.mmread(tmp_path / "x.mtx").ravel()
    x, info = jaxamg.solve(A, jnp.asarray(b))
    assert info["iterations"] == report["iterations"]
    np.testing.assert_allclose(np.asarray(x), x_cli, rtol=1e-12, atol=1e-14)


def test_structure_first_seen_under_jit_is_reusable(rng):
    A = matrices.poisson_matrix(7, skew=0.2, dtype=jnp.float64)
    b = jnp.asarray(rng.normal(size=49))
    x1 = jax.jit(lambda r: jaxamg.solve(A, r, **TIGHT)[0])(b)
    x2 = jax.jit(lambda r: jaxamg.solve(A, 2 * r, **TIGHT)[0])(b)
    np.testing.assert_allclose(np.asarray(x2), 2 * np.asarray(x1), rtol=1e-8)


def test_success_is_never_reported_on_a_drifting_recurrence():
    # A singular (pure Neumann, stretched) system solved without declaring its
    # null space: the Krylov recurrence can claim convergence while b - A x
    # does not shrink. The status must reflect the true residual.
    import warnings

    A, _ = matrices.poisson_matrix_stretched(32, 24, 1.04, normalize=True, dtype=jnp.float64)
    Ad = np.asarray(A.todense())
    b = Ad @ np.random.default_rng(0).normal(size=A.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x, info = jaxamg.solve(A, jnp.asarray(b), tolerance=1e-10, max_iters=200)
    true_rel = np.linalg.norm(b - Ad @ np.asarray(x)) / np.linalg.norm(b)
    if info["status"] == jaxamg.AMGXStatus.SUCCESS:
        assert true_rel <= 1e-10 * 1.0001


def test_callable_operator_with_cached_coloring(rng):
    op = matrices.poisson_operator(0.0)
    A = matrices.poisson_matrix(12, dtype=jnp.float64)
    b = jnp.asarray(rng.normal(size=144))
    with pytest.raises(ValueError, match="pre-scanned before JIT"):
        jax.jit(lambda r: jaxamg.solve(matrices.poisson_operator(0.0), r)[0])(b)
    jaxamg.cache_coloring(op, 144)
    x_op, _ = jaxamg.solve(op, b, **TIGHT)
    x_mat, _ = jaxamg.solve(A, b, **TIGHT)
    np.testing.assert_allclose(np.asarray(x_op), np.asarray(x_mat), rtol=1e-9)
    x_jit = jax.jit(lambda r: jaxamg.solve(op, r, **TIGHT)[0])(b)
    np.testing.assert_allclose(np.asarray(x_jit), np.asarray(x_mat), rtol=1e-9)

    def loss(skew):
        o = matrices.poisson_operator(skew)
        jaxamg.with_cache(o, coloring=op._coloring_info)
        return jnp.sum(jaxamg.solve(o, b, **TIGHT)[0] ** 2)

    def loss_ref(skew):
        return jnp.sum(
            jnp.linalg.solve(matrices.poisson_matrix(12, skew, dtype=jnp.float64).todense().T, b)
            ** 2
        )

    assert float(jax.grad(loss)(0.3)) == pytest.approx(float(jax.grad(loss_ref)(0.3)), rel=1e-7)
