"""jaxamg._engine: the engine's LinearSolver seen from Python.

Every solution is compared with scipy.sparse.linalg.spsolve on the same
matrix; error messages are checked word for word where the binding writes them.
"""

from __future__ import annotations

import json
import re
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from helpers import (
    amg_config,
    krylov_config,
    poisson2d,
    random_nonsymmetric,
    random_spd,
    relative_error,
)

import jaxamg
from jaxamg import _engine
from jaxamg.config import DEFAULT_CONFIG, to_json

# float32 solves stop at a looser tolerance; the comparison follows.
TOLERANCE = {"float64": (1e-10, 1e-7), "float32": (1e-5, 1e-3)}


def solve(config: str, A: sp.csr_array, b: np.ndarray, dtype: str = "float64", **kwargs):
    s = _engine.EngineSolver(config, dtype)
    s.setup(A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.astype(dtype))
    x, info = s.solve(b.astype(dtype), **kwargs)
    return s, x, info


def test_required_solvers_are_implemented():
    # The tests below and the default configuration use these; a missing one
    # is a failure here, not a silent skip elsewhere.
    required = {"PCG", "PBICGSTAB", "FGMRES", "BLOCK_JACOBI", "AMG", "DENSE_LU_SOLVER"}
    implemented = set(_engine.implemented_solvers())
    assert required - implemented == set()
    assert _engine.implemented_solvers() == sorted(implemented)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pcg_solves_random_spd(rng, dtype):
    tol, accuracy = TOLERANCE[dtype]
    A = random_spd(400, 0.02, rng)
    b = rng.standard_normal(400)
    s, x, info = solve(krylov_config("PCG", tol), A, b, dtype)
    assert x.dtype == np.dtype(dtype) and x.shape == (400,)
    assert info["status"] == 0 and info["status_name"] == "SUCCESS"
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) < accuracy
    assert (s.rows, s.nnz) == (400, A.nnz)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("method", ["PBICGSTAB", "FGMRES"])
def test_krylov_solves_random_nonsymmetric(rng, dtype, method):
    tol, accuracy = TOLERANCE[dtype]
    A = random_nonsymmetric(300, 0.03, rng)
    assert abs(A - A.T).max() > 0.1
    b = rng.standard_normal(300)
    _, x, info = solve(krylov_config(method, tol), A, b, dtype)
    assert info["status_name"] == "SUCCESS"
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) < accuracy


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_amg_preconditioned_cg_solves_poisson_and_random_spd(rng, dtype):
    tol, accuracy = TOLERANCE[dtype]
    for A in (poisson2d(40), random_spd(900, 0.01, rng)):
        b = rng.standard_normal(A.shape[0])
        s, x, info = solve(amg_config(tol), A, b, dtype)
        assert info["status_name"] == "SUCCESS", info
        assert relative_error(x, spla.spsolve(A.tocsc(), b)) < accuracy
    levels = s.hierarchy()
    assert levels[0] == (A.shape[0], A.nnz)
    assert len(levels) >= 2
    assert all(coarse[0] < fine[0] for fine, coarse in zip(levels, levels[1:]))


def test_default_config_solves_nonsymmetric(rng):
    A = random_nonsymmetric(500, 0.01, rng)
    b = rng.standard_normal(500)
    _, x, info = solve(to_json(DEFAULT_CONFIG), A, b)
    assert info["status_name"] == "SUCCESS"
    # RELATIVE_INI 1e-6: the error is bounded by the tolerance times the
    # condition number, which diagonal dominance keeps small.
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) < 1e-4
    assert len(info["residual_history"]) == info["iterations"] + 1


def test_info_reports_iterations_and_residual_history(rng):
    A = random_spd(200, 0.05, rng)
    b = rng.standard_normal(200)
    _, _, info = solve(krylov_config("PCG", 1e-8), A, b)
    history = info["residual_history"]
    assert info["iterations"] >= 1
    assert len(history) == info["iterations"] + 1
    # x0 = 0, so the initial residual is b, measured in L2.
    assert history[0] == pytest.approx(np.linalg.norm(b), rel=1e-12)
    assert info["residual"] == history[-1]
    assert history[-1] / history[0] <= 1e-8
    assert info["setup_seconds"] >= 0 and info["solve_seconds"] >= 0


def test_unmonitored_solve_reports_no_residual(rng):
    A = random_spd(100, 0.05, rng)
    config = krylov_config("PCG", 1e-8, max_iters=5, monitor_residual=0, store_res_history=0)
    _, _, info = solve(config, A, rng.standard_normal(100))
    assert info["residual"] is None
    assert info["residual_history"] == []
    assert info["iterations"] == 5


def test_initial_guess_is_used(rng):
    A = random_spd(200, 0.05, rng)
    x_true = rng.standard_normal(200)
    b = A @ x_true
    # ABSOLUTE: an exact initial guess converges before the first iteration.
    config = krylov_config("PCG", 1e-8, convergence="ABSOLUTE")
    _, x, info = solve(config, A, b, x0=x_true)
    assert info["iterations"] == 0
    np.testing.assert_array_equal(x, x_true)
    _, _, cold = solve(config, A, b)
    assert cold["iterations"] > 0


def test_transposed_solve(rng):
    A = random_nonsymmetric(250, 0.03, rng)
    b = rng.standard_normal(250)
    s, x, info = solve(krylov_config("FGMRES", 1e-10), A, b, transpose=True)
    assert info["status_name"] == "SUCCESS"
    assert relative_error(x, spla.spsolve(A.T.tocsc(), b)) < 1e-7
    # The forward solve of the same object is unaffected.
    x, _ = s.solve(b)
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) < 1e-7


def test_read_only_arrays_are_accepted(rng):
    A = random_spd(80, 0.1, rng)
    b = rng.standard_normal(80)
    arrays = [A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data.copy(), b]
    for a in arrays:
        a.flags.writeable = False
    s = _engine.EngineSolver(krylov_config("PCG", 1e-10), "float64")
    s.setup(*arrays[:3])
    x, _ = s.solve(arrays[3], x0=arrays[3])
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) < 1e-7


def test_unsorted_and_duplicate_entries_are_summed(rng):
    A = random_spd(120, 0.05, rng)
    b = rng.standard_normal(120)
    # Reverse every row and split each diagonal entry into two halves.
    indptr, indices, data = [0], [], []
    for i in range(A.shape[0]):
        cols = A.indices[A.indptr[i] : A.indptr[i + 1]][::-1]
        vals = A.data[A.indptr[i] : A.indptr[i + 1]][::-1]
        for c, v in zip(cols, vals):
            if c == i:
                indices += [c, c]
                data += [v / 2, v / 2]
            else:
                indices.append(c)
                data.append(v)
        indptr.append(len(indices))
    s = _engine.EngineSolver(krylov_config("PCG", 1e-10), "float64")
    s.setup(np.array(indptr, np.int32), np.array(indices, np.int32), np.array(data))
    assert s.nnz == A.nnz + A.shape[0]
    x, _ = s.solve(b)
    assert relative_error(x, spla.spsolve(A.tocsc(), b)) < 1e-7
    # New values arrive in the caller's layout, duplicates included.
    s.resetup(2 * np.array(data))
    x, _ = s.solve(b)
    assert relative_error(x, spla.spsolve((2 * A).tocsc(), b)) < 1e-7


@pytest.mark.parametrize("method", ["resetup", "replace_values"])
@pytest.mark.parametrize("config", ["pcg", "amg"])
def test_new_values_on_the_same_pattern(rng, method, config):
    A = poisson2d(20) if config == "amg" else random_spd(300, 0.02, rng)
    text = amg_config(1e-10) if config == "amg" else krylov_config("PCG", 1e-10)
    b = rng.standard_normal(A.shape[0])
    s, _, _ = solve(text, A, b)
    A2 = A.copy()
    # resetup recomputes every level, so the values may change a lot;
    # replace_values keeps the old hierarchy, a preconditioner for nearby
    # values only. A scalar factor keeps A2 symmetric; the shift keeps it
    # definite.
    A2.data *= 3.0 if method == "resetup" else 1.0
    A2.setdiag(A2.diagonal() + 0.1 + 0.1 * rng.random(A.shape[0]))
    assert A2.nnz == A.nnz
    x_new = spla.spsolve(A2.tocsc(), b)
    assert relative_error(spla.spsolve(A.tocsc(), b), x_new) > 1e-3
    getattr(s, method)(A2.data)
    x, info = s.solve(b)
    assert info["status_name"] == "SUCCESS"
    assert relative_error(x, x_new) < 1e-7


def test_statistics_log_is_taken_once(rng):
    A = random_spd(100, 0.05, rng)
    config = krylov_config("PCG", 1e-8, print_solve_stats=1)
    s, _, info = solve(config, A, rng.standard_normal(100))
    log = s.take_log()
    assert f"Total Iterations: {info['iterations']}" in log
    assert s.take_log() == ""


def test_hierarchy_is_empty_without_amg(rng):
    s, _, _ = solve(krylov_config("PCG", 1e-8), random_spd(50, 0.1, rng), np.ones(50))
    assert s.hierarchy() == []
    assert s.prolongation_nnz() == []


def test_prolongation_entries_per_level(rng):
    A = random_spd(1500, 0.004, rng)
    b = rng.standard_normal(1500)
    # Unsmoothed aggregation: P has exactly one entry per fine row.
    aggregation = json.loads(amg_config(1e-8))
    aggregation["solver"]["preconditioner"].update(algorithm="AGGREGATION", selector="SIZE_2")
    s, _, info = solve(json.dumps(aggregation), A, b)
    assert info["status_name"] == "SUCCESS"
    levels = s.hierarchy()
    assert len(levels) >= 3
    assert s.prolongation_nnz() == [rows for rows, _ in levels[:-1]]
    # Classical, at most 4 entries per F row: a C point interpolates from
    # itself alone, an F point from at most 4 C points (none when it has no
    # strong C neighbour).
    classical = json.loads(amg_config(1e-8))
    classical["solver"]["preconditioner"]["interp_max_elements"] = 4
    s, _, _ = solve(json.dumps(classical), A, b)
    levels = s.hierarchy()
    p_nnz = s.prolongation_nnz()
    assert len(levels) >= 3 and len(p_nnz) == len(levels) - 1
    for (rows, _), (coarse_rows, _), p in zip(levels, levels[1:], p_nnz):
        assert coarse_rows <= p <= coarse_rows + 4 * (rows - coarse_rows), (rows, coarse_rows, p)
    assert p_nnz[0] > levels[0][0]  # F points interpolating from several C points


def test_canonical_config_is_order_independent():
    a = '{"solver": {"scope": "main", "solver": "PCG", "max_iters": 7, "tolerance": 1e-3}}'
    b = '{"solver": {"tolerance": 1e-3, "max_iters": 7, "solver": "PCG", "scope": "main"}}'
    assert _engine.canonical_config(a) == _engine.canonical_config(b)
    assert "main:max_iters=7" in _engine.canonical_config(a)
    assert _engine.canonical_config(a) != _engine.canonical_config(a.replace("7", "8"))


def test_solves_release_the_gil(rng):
    # A Python thread keeps running while another thread is inside the engine.
    A = poisson2d(300)
    b = np.ones(A.shape[0])
    main = {"scope": "main", "solver": "BLOCK_JACOBI", "max_iters": 400, "monitor_residual": 0}
    config = json.dumps({"solver": main})
    s = _engine.EngineSolver(config, "float64")
    s.setup(A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data)
    done = threading.Event()
    ticks = 0

    def run():
        s.solve(b)
        done.set()

    worker = threading.Thread(target=run)
    start = time.perf_counter()
    worker.start()
    while not done.is_set():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    elapsed = time.perf_counter() - start
    assert elapsed > 0.05, "the solve was too short to tell; make the problem larger"
    assert ticks >= 10


# ---- errors -------------------------------------------------------------------------


def small_system():
    A = sp.csr_array(np.array([[4.0, -1.0, 0.0], [-1.0, 4.0, -1.0], [0.0, -1.0, 4.0]]))
    return A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data


def test_bad_dtype_name():
    with pytest.raises(ValueError) as e:
        _engine.EngineSolver(krylov_config("PCG", 1e-8), "float16")
    assert str(e.value) == (
        "EngineSolver: dtype must be 'float32' or 'float64', got 'float16'; "
        "pass one of those two names"
    )


def test_wrong_array_dtypes_name_the_argument():
    indptr, indices, data = small_system()
    s = _engine.EngineSolver(krylov_config("PCG", 1e-8), "float64")
    with pytest.raises(TypeError) as e:
        s.setup(indptr, indices.astype(np.int64), data)
    assert str(e.value) == (
        "EngineSolver.setup: `indices` has dtype int64 but must be int32; cast it first, "
        "e.g. numpy.asarray(indices, dtype=numpy.int32)"
    )
    with pytest.raises(TypeError) as e:
        s.setup(indptr, indices, data.astype(np.float32))
    assert str(e.value) == (
        "EngineSolver.setup: `data` has dtype float32 but must be float64; cast it first, "
        "e.g. numpy.asarray(data, dtype=numpy.float64)"
    )


def test_array_sizes_are_checked():
    indptr, indices, data = small_system()
    s = _engine.EngineSolver(krylov_config("PCG", 1e-8), "float64")
    with pytest.raises(ValueError) as e:
        s.setup(indptr, indices, data[:-1])
    assert str(e.value) == (
        "EngineSolver.setup: `indices` has 7 entries but `data` has 6; "
        "pass one column index per stored value"
    )
    with pytest.raises(ValueError) as e:
        s.setup(indptr[:1], indices, data)
    assert str(e.value) == (
        "EngineSolver.setup: `indptr` has 1 entries; "
        "a matrix with n >= 1 rows needs n + 1 row offsets"
    )
    s.setup(indptr, indices, data)
    with pytest.raises(ValueError) as e:
        s.solve(np.ones(6)[::2])
    assert str(e.value) == (
        "EngineSolver.solve: `b` is not contiguous (stride 2); pass numpy.ascontiguousarray(b)"
    )
    with pytest.raises(ValueError) as e:
        s.solve(np.ones(3), x0=np.ones(2))
    assert str(e.value) == (
        "EngineSolver.solve: `x0` has 2 entries but `b` has 3; pass one initial value per row"
    )


def test_engine_input_errors_become_value_errors():
    indptr, indices, data = small_system()
    s = _engine.EngineSolver(krylov_config("PCG", 1e-8), "float64")
    with pytest.raises(ValueError) as e:
        s.solve(np.ones(3))
    assert str(e.value) == "solve called before setup"
    s.setup(indptr, indices, data)
    with pytest.raises(ValueError) as e:
        s.solve(np.ones(4))
    assert str(e.value) == "b: has 4 entries but A has 3 rows; pass one entry per row"
    with pytest.raises(ValueError) as e:
        s.resetup(data[:-1])
    assert str(e.value) == (
        "A: new values have 6 entries but the matrix was set up with 7; "
        "pass values for the same sparsity pattern"
    )
    bad = data.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        _engine.EngineSolver(krylov_config("PCG", 1e-8), "float64").setup(indptr, indices, bad)


def test_config_errors_are_jaxamg_config_errors():
    bogus = '{"solver": {"scope": "main", "solver": "PCG", "bogus_key": 1}}'
    with pytest.raises(jaxamg.ConfigError, match=re.escape("unknown parameter 'bogus_key'")):
        _engine.EngineSolver(bogus, "float64")
    assert issubclass(jaxamg.ConfigError, ValueError)
    unknown = '{"solver": {"scope": "main", "solver": "NO_SUCH_SOLVER"}}'
    indptr, indices, data = small_system()
    with pytest.raises(jaxamg.ConfigError, match=re.escape("unknown solver 'NO_SUCH_SOLVER'")):
        _engine.EngineSolver(unknown, "float64").setup(indptr, indices, data)


@pytest.mark.parametrize("name", ["CF_JACOBI", "FIXCOLOR_GS"])
def test_unimplemented_amgx_solver_is_a_config_error_naming_the_nearest(name):
    assert name not in _engine.implemented_solvers()
    config = json.dumps({"solver": {"scope": "main", "solver": name}})
    with pytest.raises(jaxamg.ConfigError) as e:
        _engine.EngineSolver(config, "float64")
    assert str(e.value).startswith(
        f"solver '{name}' for 'solver' (scope 'default') is an AmgX solver that jaxamg does not "
        "implement: "
    )
    assert "use MULTICOLOR_GS" in str(e.value) or "use BLOCK_JACOBI" in str(e.value)


def test_setup_errors_become_runtime_errors():
    # Rows 1 and 2 are equal: a direct factorisation must fail.
    A = sp.csr_array(np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    config = json.dumps({"solver": {"scope": "main", "solver": "DENSE_LU_SOLVER"}})
    s = _engine.EngineSolver(config, "float64")
    with pytest.raises(RuntimeError) as e:
        s.setup(A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data)
    assert type(e.value) is RuntimeError
    assert str(e.value).startswith("DENSE_LU_SOLVER: the 3 x 3 matrix is singular")
