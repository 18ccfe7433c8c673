"""`python -m jaxamg solve`: Matrix Market in, solution and statistics out.

Most tests call the entry point in-process (fast); a few run a real
subprocess, for the exit status, the module entry point and the imports.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from helpers import krylov_config, poisson2d, random_nonsymmetric, random_spd, relative_error

from jaxamg._cli import main
from jaxamg.config import DEFAULT_CONFIG

PCG = krylov_config("PCG", 1e-10)
FGMRES = krylov_config("FGMRES", 1e-10)
JSON_KEYS = {
    "iterations",
    "residual",
    "status",
    "setup_s",
    "solve_s",
    "levels",
    "operator_complexity",
    "grid_complexity",
    "true_relative_residual",
}


def write(path: Path, M, **kwargs) -> str:
    scipy.io.mmwrite(str(path), M, **kwargs)
    return str(path)


def read_solution(path: str) -> np.ndarray:
    text = Path(path).read_text()
    assert text.startswith("%%MatrixMarket matrix array real general")
    return np.asarray(scipy.io.mmread(path)).ravel()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def last_json(out: str) -> dict:
    lines = out.rstrip("\n").split("\n")
    result = json.loads(lines[-1])
    # Exactly one JSON line, and it is the last one.
    assert not any(line.startswith("{") for line in lines[:-1])
    return result


@pytest.mark.parametrize("symmetric_storage", [False, True])
def test_round_trip(tmp_path, capsys, rng, symmetric_storage):
    A = random_spd(300, 0.02, rng)
    symmetry = "symmetric" if symmetric_storage else "general"
    # Symmetric storage: mmwrite keeps the lower triangle only.
    matrix = write(tmp_path / "A.mtx", A.tocoo(), symmetry=symmetry)
    header, _, size = Path(matrix).read_text().split("\n")[:3]
    assert header.endswith(symmetry)
    assert int(size.split()[2]) == ((A.nnz + 300) // 2 if symmetric_storage else A.nnz)
    solution = str(tmp_path / "x.mtx")
    # The default right-hand side is A·1, so the solution is all ones.
    code, out, err = run(capsys, "solve", matrix, "--config-string", PCG, "--solution", solution)
    assert (code, err) == (0, "")
    np.testing.assert_allclose(read_solution(solution), np.ones(300), rtol=0, atol=1e-7)
    assert f"solution written to {solution}" in out
    # A right-hand side made from the full matrix checks the expansion too.
    x_true = rng.standard_normal(300)
    rhs = write(tmp_path / "b.mtx", (A @ x_true).reshape(-1, 1))
    code, _, _ = run(
        capsys, "solve", matrix, "--rhs", rhs, "--config-string", PCG, "--solution", solution
    )
    assert code == 0
    assert relative_error(read_solution(solution), x_true) < 1e-8


def test_json_fields_with_rhs(tmp_path, capsys, rng):
    A = random_spd(200, 0.03, rng)
    b = rng.standard_normal((200, 1))
    matrix, rhs = write(tmp_path / "A.mtx", A.tocoo()), write(tmp_path / "b.mtx", b)
    solution = str(tmp_path / "x.out")  # no .mtx suffix: written as named
    code, out, _ = run(
        capsys,
        "solve",
        matrix,
        "--rhs",
        rhs,
        "--config-string",
        PCG,
        "--solution",
        solution,
        "--json",
    )
    assert code == 0
    result = last_json(out)
    assert set(result) == JSON_KEYS
    assert result["status"] == "SUCCESS"
    assert result["iterations"] > 0
    assert result["levels"] == 0
    assert result["operator_complexity"] is None and result["grid_complexity"] is None
    assert result["setup_s"] >= 0 and result["solve_s"] >= 0
    x = read_solution(solution)
    assert relative_error(x, spla.spsolve(A.tocsc(), b.ravel())) < 1e-8
    true_rel = np.linalg.norm(b.ravel() - A @ x) / np.linalg.norm(b)
    assert result["true_relative_residual"] == pytest.approx(true_rel, rel=1e-6, abs=1e-15)
    assert result["residual"] <= 1e-10 * np.linalg.norm(b)


def test_statistics_are_printed(tmp_path, capsys):
    matrix = write(tmp_path / "A.mtx", poisson2d(30).tocoo())
    code, out, _ = run(capsys, "solve", matrix, "--config-string", PCG)
    assert code == 0
    # The top solver's iteration table and timings, forced on by the CLI.
    assert "Total Iterations:" in out and "Total Time:" in out
    assert out.rstrip("\n").split("\n")[-1].startswith("jaxamg: SUCCESS after ")


def test_default_config_reports_the_amg_hierarchy(tmp_path, capsys):
    A = poisson2d(40)
    matrix = write(tmp_path / "A.mtx", A.tocoo())
    code, out, err = run(capsys, "solve", matrix, "--json")
    assert (code, err) == (0, "")
    result = last_json(out)
    assert result["status"] == "SUCCESS"
    assert result["levels"] >= 2
    assert 1.0 < result["grid_complexity"] < result["operator_complexity"] < 4.0
    assert result["true_relative_residual"] < 1e-5
    assert "AMG Grid" in out  # print_grid_stats added to the AMG scope


def test_user_flags_are_kept(tmp_path, capsys):
    # A config that turns the iteration table off keeps it off.
    matrix = write(tmp_path / "A.mtx", poisson2d(10).tocoo())
    quiet = krylov_config("PCG", 1e-10, print_solve_stats=0, obtain_timings=0)
    code, out, _ = run(capsys, "solve", matrix, "--config-string", quiet)
    assert code == 0
    assert "Total Iterations" not in out and "Total Time" not in out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_transpose_and_dtype(tmp_path, capsys, rng, dtype):
    A = random_nonsymmetric(150, 0.05, rng)
    b = rng.standard_normal((150, 1))
    matrix, rhs = write(tmp_path / "A.mtx", A.tocoo()), write(tmp_path / "b.mtx", b)
    solution = str(tmp_path / "x.mtx")
    config = FGMRES if dtype == "float64" else krylov_config("FGMRES", 1e-5)
    code, out, _ = run(
        capsys,
        "solve",
        matrix,
        "--rhs",
        rhs,
        "--transpose",
        "--dtype",
        dtype,
        "--config-string",
        config,
        "--solution",
        solution,
        "--json",
    )
    assert code == 0
    reference = spla.spsolve(A.T.tocsc(), b.ravel())
    accuracy = 1e-8 if dtype == "float64" else 1e-3
    assert relative_error(read_solution(solution), reference) < accuracy
    assert last_json(out)["true_relative_residual"] < (1e-9 if dtype == "float64" else 1e-4)


def test_initial_guess_and_array_format(tmp_path, capsys, rng):
    A = random_spd(50, 0.1, rng)
    matrix = write(tmp_path / "A.mtx", A.toarray())  # dense "array" format
    assert "array" in Path(matrix).read_text().split("\n")[0]
    x0 = write(tmp_path / "x0.mtx", np.ones((50, 1)))  # the exact solution for b = A·1
    config = krylov_config("PCG", 1e-8, convergence="ABSOLUTE")
    code, out, _ = run(capsys, "solve", matrix, "--x0", x0, "--config-string", config, "--json")
    assert code == 0
    assert last_json(out)["iterations"] == 0


def test_config_file_and_not_converged_exit_status(tmp_path, capsys, rng):
    A = poisson2d(30)
    matrix = write(tmp_path / "A.mtx", A.tocoo())
    cfg = tmp_path / "cfg.json"
    cfg.write_text(krylov_config("PCG", 1e-14, max_iters=2))
    solution = str(tmp_path / "x.mtx")
    code, out, _ = run(
        capsys, "solve", matrix, "--config", str(cfg), "--solution", solution, "--json"
    )
    assert code == 3
    result = last_json(out)
    assert result["status"] == "NOT_CONVERGED" and result["iterations"] == 2
    assert read_solution(solution).shape == (900,)


def test_help_documents_the_rules(capsys):
    with pytest.raises(SystemExit) as e:
        main(["solve", "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert "exact solution is a\nvector of ones" in out
    assert "print_grid_stats" in out and "exit status:" in out


def test_default_config_is_the_documented_one():
    main_scope = DEFAULT_CONFIG["solver"]
    amg = main_scope["preconditioner"]
    assert (main_scope["solver"], main_scope["tolerance"], main_scope["max_iters"]) == (
        "PBICGSTAB",
        1e-6,
        1000,
    )
    assert (main_scope["monitor_residual"], main_scope["store_res_history"]) == (1, 1)
    assert (amg["solver"], amg["selector"], amg["interpolator"], amg["coarse_solver"]) == (
        "AMG",
        "PMIS",
        "D2",
        "DENSE_LU_SOLVER",
    )
    assert amg["smoother"] == {
        "scope": "amg_smoother",
        "solver": "BLOCK_JACOBI",
        "relaxation_factor": 0.9,
    }


# ---- bad input: exit status 1 and one line on stderr, no traceback -----------------


def bad(capsys, *argv: str) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert err.endswith("\n") and err.count("\n") == 1, err
    return err.rstrip("\n")


def test_missing_matrix_file(tmp_path, capsys):
    missing = str(tmp_path / "nope.mtx")
    assert bad(capsys, "solve", missing) == (
        f"jaxamg solve: error: matrix file '{missing}' does not exist; "
        "pass the path of a Matrix Market (.mtx) file"
    )


def test_non_square_matrix(tmp_path, capsys):
    matrix = write(tmp_path / "A.mtx", sp.random_array((4, 3), density=0.5, rng=0).tocoo())
    assert bad(capsys, "solve", matrix) == (
        f"jaxamg solve: error: matrix file '{matrix}' holds a 4 x 3 matrix; "
        "jaxamg solves square systems, pass a square matrix"
    )


def test_malformed_matrix(tmp_path, capsys):
    matrix = tmp_path / "A.mtx"
    matrix.write_text("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 x 2.0\n")
    assert bad(capsys, "solve", str(matrix)) == (
        f"jaxamg solve: error: matrix file '{matrix}' is not a valid Matrix Market file "
        "(Line 4: Invalid integer value.); "
        "pass a '%%MatrixMarket matrix coordinate|array real|integer|pattern' file"
    )


def test_nan_in_matrix(tmp_path, capsys):
    matrix = tmp_path / "A.mtx"
    matrix.write_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 2 nan\n")
    assert bad(capsys, "solve", str(matrix)) == (
        f"jaxamg solve: error: matrix file '{matrix}': entry (2, 2) is nan; pass finite values"
    )


def test_nan_in_rhs_and_wrong_length(tmp_path, capsys):
    matrix = write(tmp_path / "A.mtx", poisson2d(3).tocoo())
    rhs = write(tmp_path / "b.mtx", np.array([[1.0], [np.inf], *[[0.0]] * 7]))
    assert bad(capsys, "solve", matrix, "--rhs", rhs) == (
        f"jaxamg solve: error: rhs file '{rhs}': entry 2 is inf; pass finite values"
    )
    short = write(tmp_path / "short.mtx", np.ones((8, 1)))
    assert bad(capsys, "solve", matrix, "--rhs", short) == (
        f"jaxamg solve: error: rhs file '{short}' holds a 8 x 1 matrix but the matrix has 9 rows; "
        "pass a vector with 9 entries (9 x 1)"
    )


def test_invalid_configs(tmp_path, capsys):
    matrix = write(tmp_path / "A.mtx", poisson2d(3).tocoo())
    assert bad(capsys, "solve", matrix, "--config-string", '{"solver": "PCG",}') == (
        "jaxamg solve: error: --config-string is not valid JSON "
        "(Expecting property name enclosed in double quotes at line 1, column 18); "
        "fix the JSON or pass legacy 'name=value, ...' text"
    )
    err = bad(capsys, "solve", matrix, "--config-string", krylov_config("PCG", 1e-8, bogus_key=1))
    assert err.startswith("jaxamg solve: error: config: unknown parameter 'bogus_key'")
    missing = str(tmp_path / "none.json")
    err = bad(capsys, "solve", matrix, "--config", missing)
    assert err.startswith(
        f"jaxamg solve: error: config file '{missing}' does not exist and is no shipped config "
        "(AGGREGATION_JACOBI, "
    )
    assert err.endswith("pass the path of an AmgX JSON config or a shipped config's name")
    assert bad(capsys, "solve", matrix, "--config", str(tmp_path)).startswith(
        f"jaxamg solve: error: config file '{tmp_path}' cannot be read"
    )


def test_shipped_config_by_name(tmp_path, capsys, rng):
    A = poisson2d(20)
    matrix = write(tmp_path / "A.mtx", A.tocoo())
    solution = str(tmp_path / "x.mtx")
    code, out, _ = run(
        capsys,
        "solve",
        matrix,
        "--config",
        "pcg_classical_agg1_cheby2",
        "--solution",
        solution,
        "--json",
    )
    assert code == 0
    result = last_json(out)
    assert result["status"] == "SUCCESS"
    x = read_solution(solution).ravel()
    ones = np.ones(A.shape[0])  # the CLI's default right-hand side is A @ ones
    assert np.linalg.norm(x - ones) / np.linalg.norm(ones) < 1e-6


def test_singular_matrix(tmp_path, capsys):
    matrix = write(tmp_path / "A.mtx", sp.coo_array(np.array([[1.0, 2.0], [2.0, 4.0]])))
    lu = '{"config_version": 2, "solver": {"scope": "main", "solver": "DENSE_LU_SOLVER"}}'
    err = bad(capsys, "solve", matrix, "--config-string", lu)
    assert err.startswith("jaxamg solve: error: DENSE_LU_SOLVER: the 2 x 2 matrix is singular")


def test_float32_overflow(tmp_path, capsys):
    matrix = write(tmp_path / "A.mtx", (1e39 * sp.eye_array(3)).tocoo())
    assert bad(capsys, "solve", matrix, "--dtype", "float32", "--config-string", PCG) == (
        "jaxamg solve: error: matrix: the value 1.000e+39 overflows float32 "
        "(largest 3.403e+38); use --dtype float64"
    )


def test_usage_errors_exit_2_with_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        main(["solve", "A.mtx", "--dtype", "float16"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    # argparse's own wording between these varies with the Python version.
    assert err.startswith("jaxamg solve: error: argument --dtype: invalid choice: 'float16'")
    assert err.endswith("; see 'jaxamg solve --help'\n") and err.count("\n") == 1


# ---- a real process -----------------------------------------------------------------


def test_subprocess_exit_codes_and_no_jax_import(tmp_path, rng):
    import importlib.util

    # Only meaningful where JAX is installed: then not importing it is a choice.
    assert importlib.util.find_spec("jax") is not None
    A = random_spd(100, 0.05, rng)
    matrix = write(tmp_path / "A.mtx", A.tocoo())
    probe = (
        "import sys\n"
        "from jaxamg._cli import main\n"
        f"code = main(['solve', {matrix!r}, '--json', '--config-string', {PCG!r}])\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib'))\n"
        "print('JAX MODULES', loaded)\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip("\n").split("\n")[-1] == "JAX MODULES []"

    done = subprocess.run(
        [sys.executable, "-m", "jaxamg", "solve", str(tmp_path / "missing.mtx")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr


def test_a_config_gives_the_same_hierarchy_as_in_solve_unless_run_as_given(tmp_path, capsys, rng):
    # A config that leaves classical AMG's strength threshold and coarse
    # solve to the front end: solve merges JAX-AMG's defaults (threshold 0.5,
    # dense LU on the coarsest row), AmgX keeps its own (0.25, ...).
    import jax
    import jax.numpy as jnp
    from jax.experimental.sparse import BCSR

    import jaxamg

    A = sp.csr_matrix(sp.kron(poisson2d(24), sp.identity(2)) + sp.identity(1152) * 0.1)
    A = (A + sp.diags(rng.uniform(0, 1, A.shape[0]))).tocsr()
    b = rng.standard_normal(A.shape[0])
    matrix, rhs = write(tmp_path / "A.mtx", A.tocoo()), write(tmp_path / "b.mtx", b[:, None])
    cfg = {
        "config_version": 2,
        "solver": {"scope": "main", "solver": "PCG", "tolerance": 1e-10, "max_iters": 300,
                   "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL"}},
    }  # fmt: skip
    path = tmp_path / "cfg.json"
    path.write_text(json.dumps(cfg))
    with jax.enable_x64(True):
        _, info = jaxamg.solve(BCSR.from_scipy_sparse(A), jnp.asarray(b), config=cfg)
    reference = spla.spsolve(A.tocsc(), b)
    runs = {}
    for extra in ([], ["--as-given"]):
        solution = str(tmp_path / f"x{len(extra)}.mtx")
        code, out, _ = run(
            capsys, "solve", matrix, "--rhs", rhs, "--config", str(path), "--json",
            "--solution", solution, *extra,
        )  # fmt: skip
        assert code == 0
        assert relative_error(read_solution(solution), reference) < 1e-7
        runs[bool(extra)] = last_json(out)
    assert runs[False]["iterations"] == info["iterations"]
    assert runs[False]["levels"] == len(jaxamg_levels(A, cfg))
    assert (runs[True]["levels"], runs[True]["iterations"]) != (
        runs[False]["levels"],
        runs[False]["iterations"],
    )


def jaxamg_levels(A, cfg):
    """The hierarchy the engine builds from solve's form of `cfg`."""
    from jaxamg._core.native import engine
    from jaxamg.config import prepare_config

    solver = engine().EngineSolver(prepare_config(cfg), "float64")
    solver.setup(A.indptr.astype(np.int32), A.indices.astype(np.int32), A.data)
    return solver.hierarchy()
