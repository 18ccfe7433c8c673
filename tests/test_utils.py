"""jaxamg.utils (JAX-AMG's helper module) against independent references:
SciPy and dense NumPy for the conversions, the dtypes JAX itself reports for
the precision rule and the int64 helpers, a parser of the statistics layout."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg import utils


@pytest.fixture
def x64():
    """x64 on for the test, the previous setting restored after it."""
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    yield
    jax.config.update("jax_enable_x64", previous)


@pytest.fixture
def x32():
    previous = jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", False)
    yield
    jax.config.update("jax_enable_x64", previous)


def random_sparse(rng, n_rows, n_cols, density=0.2, dtype=np.float64):
    M = sp.random(
        n_rows,
        n_cols,
        density=density,
        random_state=rng.integers(1 << 31),
        dtype=np.float64,
        format="csr",
    )
    M.setdiag(rng.uniform(1, 2, min(n_rows, n_cols)))
    M.sort_indices()
    return M.astype(dtype)


@pytest.mark.parametrize("fmt", utils.SCIPY_FORMATS)
def test_to_scipy_gives_the_same_matrix_in_each_format(rng, x64, fmt):
    M = random_sparse(rng, 23, 17)
    A = jsparse.BCSR.from_scipy_sparse(M)
    out = utils.to_scipy(A, fmt)
    assert sp.issparse(out) and out.format == fmt
    assert out.shape == M.shape and out.dtype == np.float64
    np.testing.assert_array_equal(out.toarray(), M.toarray())


def test_to_scipy_accepts_bcoo_and_dense_and_keeps_float32(rng, x64):
    M = random_sparse(rng, 12, 12, dtype=np.float32)
    dense = M.toarray()
    for A in (jsparse.BCOO.fromdense(jnp.asarray(dense)), dense, jnp.asarray(dense)):
        out = utils.to_scipy(A)
        assert out.format == "csr" and out.dtype == np.float32
        np.testing.assert_array_equal(out.toarray(), dense)


def test_to_scipy_rejects_an_unknown_format_naming_it(rng):
    A = jsparse.BCSR.fromdense(jnp.eye(3))
    with pytest.raises(ValueError, match=r"`format` 'dia'.*'csr'"):
        utils.to_scipy(A, "dia")


def test_to_scipy_refuses_traced_values():
    A = jsparse.BCSR.fromdense(jnp.eye(3))
    with pytest.raises(ValueError, match="traced"):
        jax.jit(lambda d: utils.to_scipy(jsparse.BCSR((d, A.indices, A.indptr), shape=A.shape)))(
            A.data
        )


@pytest.mark.parametrize(
    "a_dtype,b_dtype,expected",
    [
        (np.float32, np.float32, np.float32),
        (np.float64, np.float32, np.float64),
        (np.float32, np.float64, np.float64),
        (np.float64, np.float64, np.float64),
        (np.float32, np.int32, np.float32),
        (np.int32, np.bool_, np.float32),
    ],
)
def test_preferred_dtype_follows_the_rule_of_solve(rng, x64, a_dtype, b_dtype, expected):
    M = random_sparse(rng, 8, 8)
    b = np.ones(8, dtype=b_dtype)
    forms = [
        M.astype(a_dtype),
        M.toarray().astype(a_dtype),
        jsparse.BCSR.from_scipy_sparse(M.astype(a_dtype)),
    ]
    for A in forms:
        assert np.dtype(utils.get_preferred_dtype(A, b)) == expected, type(A)
    if np.dtype(a_dtype).kind == "f":
        # solve returns exactly this dtype (the independent check of the rule).
        x, _ = jaxamg.solve(forms[2], jnp.asarray(b), tolerance=1e-6)
        assert x.dtype == expected


def test_preferred_dtype_of_a_callable_is_that_of_b(x64):
    assert utils.get_preferred_dtype(lambda x: x, np.ones(3)) == jnp.float64
    assert utils.get_preferred_dtype(lambda x: x, np.ones(3, np.float32)) == jnp.float32


def test_preferred_dtype_without_x64_is_float32(x32):
    assert utils.get_preferred_dtype(np.eye(3), np.ones(3)) == jnp.float32


@pytest.mark.parametrize("form", ["bcsr", "bcoo", "csc", "coo", "lil", "dense_np", "dense_jax"])
def test_to_bcsr_matrix_normalises_every_form(rng, x64, form):
    M = random_sparse(rng, 15, 15)
    A = {
        "bcsr": lambda: jsparse.BCSR.from_scipy_sparse(M),
        "bcoo": lambda: jsparse.BCOO.from_scipy_sparse(M),
        "csc": M.tocsc,
        "coo": M.tocoo,
        "lil": M.tolil,
        "dense_np": M.toarray,
        "dense_jax": lambda: jnp.asarray(M.toarray()),
    }[form]()
    b32 = np.ones(15, np.float32)
    out = utils.to_bcsr_matrix(A, b32)
    assert isinstance(out, jsparse.BCSR) and out.shape == (15, 15)
    assert (out.data.dtype, out.indices.dtype, out.indptr.dtype) == (
        np.float64,
        np.int32,
        np.int32,
    )  # A is float64: b does not lower it
    np.testing.assert_array_equal(np.asarray(out.todense()), M.toarray())


def test_to_bcsr_matrix_int64_indices_in_32_bit_mode(rng, x32):
    M = random_sparse(rng, 10, 30)  # an MPI row block: 10 rows, 30 global columns
    out = utils.to_bcsr_matrix(M, np.ones(10, np.float32), use_int64_indices=True)
    assert (out.indices.dtype, out.indptr.dtype, out.data.dtype) == (np.int64, np.int32, np.float32)
    assert not jax.config.read("jax_enable_x64")  # restored
    ref = M.astype(np.float32).toarray()
    got = sp.csr_matrix(
        (np.asarray(out.data), np.asarray(out.indices), np.asarray(out.indptr)), shape=out.shape
    ).toarray()
    np.testing.assert_array_equal(got, ref)


def test_to_bcsr_matrix_materialises_an_operator(rng, x64):
    M = random_sparse(rng, 20, 20)
    op = lambda x: jnp.asarray(M.toarray()) @ x  # noqa: E731
    out = utils.to_bcsr_matrix(op, np.ones(20))
    np.testing.assert_allclose(np.asarray(out.todense()), M.toarray(), rtol=1e-14)
    with pytest.raises(ValueError, match="right-hand side `b`"):
        utils.to_bcsr_matrix(lambda x: x, None)


def test_to_bcsr_matrix_rejects_batched_bcsr_and_bad_flags():
    batched = jsparse.BCSR.fromdense(jnp.ones((2, 3, 3)), n_batch=1)
    with pytest.raises(ValueError, match="batched"):
        utils.to_bcsr_matrix(batched, jnp.ones(3))
    with pytest.raises(TypeError, match="use_int64_indices"):
        utils.to_bcsr_matrix(np.eye(2), np.ones(2), use_int64_indices="yes")


def test_temp_enable_x64_restores_the_setting_also_on_error(x32):
    with utils.temp_enable_x64():
        assert jax.config.read("jax_enable_x64")
        a = jnp.arange(3, dtype=jnp.int64)
    assert a.dtype == np.int64
    assert not jax.config.read("jax_enable_x64")
    with pytest.raises(KeyError):
        with utils.temp_enable_x64():
            raise KeyError("x")
    assert not jax.config.read("jax_enable_x64")
    jax.config.update("jax_enable_x64", True)
    with utils.temp_enable_x64():
        pass
    assert jax.config.read("jax_enable_x64")  # an enabled setting stays enabled


def test_ensure_int64_array(rng, x32):
    values = rng.integers(-(2**40), 2**40, size=50)  # beyond int32
    out = utils.ensure_int64_array(values)
    assert isinstance(out, jax.Array) and out.dtype == np.int64
    np.testing.assert_array_equal(np.asarray(out), values)
    assert utils.ensure_int64_array([1.0, 2.0]).dtype == np.int64
    assert not jax.config.read("jax_enable_x64")
    with pytest.raises(ValueError, match="`data` must hold integers"):
        utils.ensure_int64_array([1.5])


def test_deep_merge_is_the_config_merge():
    base = {"solver": {"solver": "PCG", "preconditioner": {"cycle": "V", "presweeps": 1}}}
    out = utils.deep_merge(base, {"solver": {"preconditioner": {"cycle": "W"}}})
    assert out["solver"]["preconditioner"] == {"cycle": "W", "presweeps": 1}
    assert base["solver"]["preconditioner"]["cycle"] == "V"  # a copy


# A parser written for JAX-AMG's statistics file: the two headings and the
# rows of the grid and iteration tables, whatever the spacing.
GRID_ROW = re.compile(r"^\s*(\d+)\(([DC])\)\s+(\d+)\s+(\d+)\s+")
ITER_ROW = re.compile(r"^\s*(Ini|\d+)\s+(\S+)\s+([0-9.eE+-]+)")


def parse_stats(text):
    grid, iters = [], []
    section = None
    for line in text.splitlines():
        if "AMG GRID STATISTICS" in line:
            section = "grid"
        elif "SOLVER ITERATIONS" in line:
            section = "iters"
        elif section == "grid" and GRID_ROW.match(line):
            lvl, kind, rows, nnz = GRID_ROW.match(line).groups()
            grid.append((int(lvl), kind, int(rows), int(nnz)))
        elif section == "iters" and ITER_ROW.match(line):
            iters.append(float(ITER_ROW.match(line).group(3)))
    return grid, iters


def test_format_amgx_stats_writes_what_solve_writes(tmp_path, rng, x64, monkeypatch):
    """The engine's text of a real solve, formatted by format_amgx_stats,
    gives the file solve writes, and a parser of the layout reads the solve's
    numbers from it."""
    import jaxamg._single.solve as single

    M = random_sparse(rng, 400, 400, density=0.01)
    M = (M + M.T + sp.diags(np.full(400, 10.0))).tocsr()
    b = rng.standard_normal(400)
    config = {
        "solver": "PCG",
        "preconditioner": {"solver": "AMG", "max_iters": 1},
        "tolerance": 1e-8,
        "max_iters": 100,
    }
    written = tmp_path / "solve.txt"
    jaxamg.clear_solver_cache()  # a fresh setup (a reuse prints no grid)
    # One solve: the engine's raw text is taken where solve writes the file.
    # (Two solves would differ in the memory column.)
    raw = []
    write = single.write_stats_file

    def record_and_write(text, path, rank=None, amg=True):
        raw.append(text)
        write(text, path, rank, amg)

    monkeypatch.setattr(single, "write_stats_file", record_and_write)
    _, info = jaxamg.solve(M, b, config=config, save_stats_file=written)
    monkeypatch.undo()
    ours = tmp_path / "utils.txt"
    utils.format_amgx_stats(raw[0], ours)
    assert ours.read_text() == written.read_text()
    grid, iters = parse_stats(ours.read_text())
    assert grid and grid[0][2:] == (400, M.nnz)
    assert len(iters) == info["iterations"] + 1
    np.testing.assert_allclose(iters, np.asarray(info["residual_history"]), rtol=1e-4)


def test_format_amgx_stats_only_rank_0_writes_and_checks_arguments(tmp_path):
    text = "AMG Grid:\n  LVL ROWS NNZ\n ---\n"
    utils.format_amgx_stats(text, tmp_path / "r1.txt", rank=1)
    assert not (tmp_path / "r1.txt").exists()
    utils.format_amgx_stats(text, str(tmp_path / "r0.txt"), rank=0)
    assert "AMG GRID STATISTICS" in (tmp_path / "r0.txt").read_text()
    with pytest.raises(TypeError, match="`filepath`"):
        utils.format_amgx_stats(text, 3)
    with pytest.raises(TypeError, match="`stats_str`"):
        utils.format_amgx_stats(b"bytes", tmp_path / "x.txt")
    with pytest.raises(ValueError, match="`rank`"):
        utils.format_amgx_stats(text, tmp_path / "x.txt", rank=-1)


def test_utils_is_a_public_submodule():
    import importlib

    assert jaxamg.utils is importlib.import_module("jaxamg.utils")
    assert set(utils.__all__) >= {
        "to_scipy",
        "get_preferred_dtype",
        "to_bcsr_matrix",
        "format_amgx_stats",
        "temp_enable_x64",
        "ensure_int64_array",
    }


def test_stats_file_without_amg_has_no_grid_and_one_table_per_file(tmp_path, x64):
    A = sp.csr_matrix(sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(200, 200)))
    b = np.ones(200)
    plain = tmp_path / "plain.txt"
    _, info = jaxamg.solve(A, b, solver="PCG", preconditioner="BLOCK_JACOBI", save_stats_file=plain)
    text = plain.read_text()
    assert "AMG GRID STATISTICS" not in text and "AMG Grid" not in text
    grid, iters = parse_stats(text)
    assert grid == [] and len(iters) == info["iterations"] + 1

    # Inner AMG printing its own tables: the file keeps the outer one only.
    nested = tmp_path / "nested.txt"
    config = {
        "solver": "FGMRES",
        "tolerance": 1e-8,
        "preconditioner": {
            "solver": "AMG",
            "max_iters": 2,
            "print_solve_stats": 1,
            "monitor_residual": 1,
        },
    }
    _, info = jaxamg.solve(A, b, config=config, save_stats_file=nested)
    text = nested.read_text()
    assert text.count("Total Iterations:") == 1
    assert f"Total Iterations: {info['iterations']}" in text
    grid, iters = parse_stats(text)
    assert grid and len(iters) == info["iterations"] + 1
