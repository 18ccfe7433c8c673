"""The demos in demo/ at test size (JAXAMG_DEMO_SMALL=1): each main() returns
0 and prints the numbers it checks; those numbers are checked again here."""

import importlib.util
import pathlib
import re
import subprocess
import sys

DEMO_DIR = pathlib.Path(__file__).resolve().parents[1] / "demo"


def run_demo(name, monkeypatch, capsys, *argv):
    monkeypatch.setenv("JAXAMG_DEMO_SMALL", "1")
    spec = importlib.util.spec_from_file_location(f"demo_{name}", DEMO_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    status = module.main(list(argv))
    out = capsys.readouterr().out
    assert status == 0, out
    assert out.rstrip().splitlines()[-1] == "OK", out
    return out


def numbers(pattern, text):
    found = [float(v) for v in re.findall(pattern, text)]
    assert found, f"{pattern!r} not in output:\n{text}"
    return found


def test_poisson_problem(monkeypatch, capsys):
    out = run_demo("poisson_problem", monkeypatch, capsys)
    residuals = numbers(r"relative residual ([0-9.e+-]+)", out)
    assert len(residuals) == 4 and max(residuals) < 1e-5  # 3 individual + the batch
    assert numbers(r"max \|x_batch - x_individual\| = ([0-9.e+-]+)", out)[0] < 1e-10


def test_tridiagonal_system(monkeypatch, capsys):
    out = run_demo("tridiagonal_system", monkeypatch, capsys)
    assert "status: AMGXStatus.SUCCESS" in out
    assert numbers(r"relative residual: ([0-9.e+-]+)", out)[0] < 1e-5


def test_nonsymmetric_system(monkeypatch, capsys):
    out = run_demo("nonsymmetric_system", monkeypatch, capsys)
    assert re.search(r"skew 0\.0 +CG: AMGXStatus\.SUCCESS", out)
    assert re.search(r"skew 0\.5 +CG: AMGXStatus\.NOT_CONVERGED, 1000 iterations", out)
    line = re.search(r"skew 0\.5 +BICGSTAB: AMGXStatus\.SUCCESS.*", out).group(0)
    assert numbers(r"relative residual ([0-9.e+-]+)", line)[0] < 1e-6


def test_block_matrix_solve(monkeypatch, capsys):
    out = run_demo("block_matrix_solve", monkeypatch, capsys)
    scalar = re.search(r"scalar \(block_dim=1\): .*", out).group(0)
    if "SUCCESS" in scalar:
        assert numbers(r"relative error ([0-9.e+-]+)", scalar)[0] < 1e-4
    assert re.search(r"block  \(block_dim=2\): AMGXStatus\.", out)


def test_linear_operator(monkeypatch, capsys):
    out = run_demo("linear_operator", monkeypatch, capsys)
    assert out.count("equals the builder's matrix: True") == 3
    diffs = numbers(r"\|x_operator - x_matrix\| / \|x_matrix\| = ([0-9.e+-]+)", out)
    assert len(diffs) == 3 and max(diffs) < 1e-10


def test_optimization(monkeypatch, capsys):
    out = run_demo("optimization", monkeypatch, capsys)
    assert numbers(r"loss reduction: ([0-9.e+-]+)", out)[0] > 1e4
    assert numbers(r"\|b - A x\*\| / \|A x\*\| = ([0-9.e+-]+)", out)[0] < 1e-2


def test_poisson_operator_optimization(monkeypatch, capsys):
    out = run_demo("poisson_operator_optimization", monkeypatch, capsys)
    assert abs(numbers(r"recovered skew: ([0-9.e+-]+)", out)[0] - 1.3) < 1e-3


def test_preconditioned_solver(monkeypatch, capsys):
    out = run_demo("preconditioned_solver", monkeypatch, capsys)
    rows = re.findall(r"^  (\S.*?) +([0-9.]+) +([0-9.e+-]+)$", out, re.MULTILINE)
    assert len(rows) == 9 + 6  # symmetric: 9 methods, nonsymmetric: 6
    assert {name for name, _, _ in rows} >= {
        "jax cg, M = AMG",
        "jax bicgstab, M = AMG",
        "lineax CG, AMG",
        "lineax GMRES, AMG",
    }
    assert max(float(rel) for _, _, rel in rows) < 1e-6


def test_convection_diffusion_problem(monkeypatch, capsys):
    out = run_demo("convection_diffusion_problem", monkeypatch, capsys)
    assert out.count("AMGXStatus.SUCCESS") == 2
    errors = numbers(r"max error ([0-9.e+-]+)", out)
    assert errors[1] < errors[0] < 0.5
    assert 0.8 < numbers(r"observed order of accuracy: ([0-9.e+-]+)", out)[0] < 1.3


def test_solver_info(monkeypatch, capsys, tmp_path):
    plot = tmp_path / "convergence.png"
    out = run_demo("solver_info", monkeypatch, capsys, "--plot", str(plot))
    statuses = re.findall(r"status: +(AMGXStatus\.\w+)", out)
    assert statuses == [
        "AMGXStatus.SUCCESS",
        "AMGXStatus.NOT_CONVERGED",
        "AMGXStatus.NOT_CONVERGED",
        "AMGXStatus.NOT_CONVERGED",
    ]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_runs_as_a_script(tmp_path):
    done = subprocess.run(
        [sys.executable, str(DEMO_DIR / "tridiagonal_system.py"), "--n", "64"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "n = 64" in done.stdout and done.stdout.rstrip().endswith("OK")


def test_tridiagonal_operator_optimization(monkeypatch, capsys):
    out = run_demo("tridiagonal_operator_optimization", monkeypatch, capsys)
    assert abs(numbers(r"recovered diagonal value: ([0-9.e+-]+)", out)[0] - 4.0) < 1e-4


def test_large_3d_poisson_problem(monkeypatch, capsys):
    out = run_demo("large_3d_poisson_problem", monkeypatch, capsys)
    assert "16^3 Poisson: 4,096 unknowns, 27,136 nonzeros" in out  # 7 n^3 - 6 n^2
    assert max(numbers(r"true relative residual ([0-9.e+-]+)", out)) < 1e-7
    iterations = numbers(r"s, (\d+) iterations", out)
    assert len(iterations) == 2 and iterations[0] == iterations[1]


def test_large_random_matrix(monkeypatch, capsys):
    out = run_demo("large_random_matrix", monkeypatch, capsys)
    assert numbers(r"true relative residual ([0-9.e+-]+)", out)[0] < 1e-8
    assert numbers(r"direct solve: ([0-9.e+-]+)", out)[0] < 1e-7


def test_solver_cache_benchmark(monkeypatch, capsys):
    out = run_demo("solver_cache_benchmark", monkeypatch, capsys)
    assert numbers(r"max \|x_cold - x_warm\| / max \|x\| = ([0-9.e+-]+)", out)[0] < 1e-12
    assert numbers(r"speedup from the cache: ([0-9.]+)x", out)[0] > 0  # reported, not timed here


def test_jax_sparse_solver_comparison(monkeypatch, capsys, tmp_path):
    plot = tmp_path / "comparison.png"
    out = run_demo("jax_sparse_solver_comparison", monkeypatch, capsys, "--plot", str(plot))
    errors = numbers(r"(?m)^(?:jaxamg|jax\.scipy|sparse) .* ([0-9.]+e[+-]\d+)$", out)
    assert len(errors) == 5 and max(errors) < 1e-5
    assert numbers(r"relative difference ([0-9.e+-]+)", out)[0] < 1e-5
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot written to {plot}" in out


def test_large_3d_poisson_optimization(monkeypatch, capsys):
    out = run_demo("large_3d_poisson_optimization", monkeypatch, capsys)
    assert abs(numbers(r"theta ([0-9.]+) \(true 2.0\)", out)[0] - 2.0) < 1e-6
    gradient = numbers(r"gradient ([0-9.e+-]+), exact", out)[0]
    exact = numbers(r"exact ([0-9.e+-]+)", out)[0]
    assert abs(gradient - exact) < 1e-5
