"""The MPI demos at test size (JAXAMG_DEMO_SMALL=1), run by every rank: main()
returns 0 on every rank, and rank 0's printed numbers are checked again."""

import pytest

pytest.importorskip("mpi4py")

from mpi_testing import needs_native_mpi, rank0_numbers, run_demo  # noqa: E402

pytestmark = needs_native_mpi


def test_mpi_poisson_problem(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_poisson_problem", monkeypatch, capsys)
    diff = rank0_numbers(comm, r"\|x_mpi - x_serial\| / \|x_serial\| = ([0-9.e+-]+)", out)
    assert diff[0] < 1e-8


def test_mpi_autodiff(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_autodiff", monkeypatch, capsys)
    diffs = rank0_numbers(comm, r"relative difference to one process ([0-9.e+-]+)", out)
    assert len(diffs) == 3 and max(diffs) < 1e-8


def test_mpi_poisson_operator_optimization(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_poisson_operator_optimization", monkeypatch, capsys)
    skew = rank0_numbers(comm, r"recovered skew: ([0-9.e+-]+)", out)
    assert abs(skew[0] - 1.3) < 1e-3


def test_mpi_nonsymmetric_matrix_autodiff(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_nonsymmetric_matrix_autodiff", monkeypatch, capsys)
    diffs = rank0_numbers(comm, r"relative difference to one process ([0-9.e+-]+)", out)
    assert len(diffs) == 2 and max(diffs) < 1e-8


def test_mpi_preconditioned_solver(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_preconditioned_solver", monkeypatch, capsys)
    errors = rank0_numbers(comm, r"direct solve ([0-9.e+-]+)", out)
    assert len(errors) == 2 and max(errors) < 1e-7


def test_mpi_poisson_problem_auto_partition(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_poisson_problem_auto_partition", monkeypatch, capsys)
    diff = rank0_numbers(comm, r"\|x_mpi - x_scipy\| / \|x_scipy\| = ([0-9.e+-]+)", out)
    assert diff[0] < 1e-8


def test_mpi_large_random_matrix(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_large_random_matrix", monkeypatch, capsys)
    residual = rank0_numbers(comm, r"\|b - A x\| / \|b\| = ([0-9.e+-]+)", out)
    error = rank0_numbers(comm, r"against SciPy's direct solve = ([0-9.e+-]+)", out)
    assert residual[0] < 1e-8 and error[0] < 1e-8


def test_mpi_optimization(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_optimization", monkeypatch, capsys)
    losses = rank0_numbers(comm, r"step +\d+: loss ([0-9.e+-]+)", out)
    grad_error = rank0_numbers(comm, r"A\^-1 b0 - x\*\): relative error ([0-9.e+-]+)", out)
    b_error = rank0_numbers(comm, r"\|b - A x\*\| / \|A x\*\| = ([0-9.e+-]+)", out)
    assert all(later < earlier for earlier, later in zip(losses, losses[1:]))
    assert grad_error[0] < 1e-8 and b_error[0] < 1e-4


def test_mpi_tridiagonal_matrix_optimization(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_tridiagonal_matrix_optimization", monkeypatch, capsys)
    losses = rank0_numbers(comm, r"step +\d+: d [0-9.]+, loss ([0-9.e+-]+)", out)
    grad_error = rank0_numbers(comm, r"-lambda_i x_j: relative error ([0-9.e+-]+)", out)
    d = rank0_numbers(comm, r"recovered diagonal value: ([0-9.e+-]+)", out)
    assert all(later < earlier for earlier, later in zip(losses, losses[1:]))
    assert grad_error[0] < 1e-8 and abs(d[0] - 4.0) < 1e-3


def test_mpi_solver_cache_benchmark(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_solver_cache_benchmark", monkeypatch, capsys, "--calls", "3")
    cold = rank0_numbers(comm, r"cleared before each call: +([0-9.]+) ms", out)
    warm = rank0_numbers(comm, r"warm cache: +([0-9.]+) ms", out)
    difference = rank0_numbers(comm, r"\|x_cold - x_warm\| / \|x_cold\| = ([0-9.e+-]+)", out)
    error = rank0_numbers(comm, r"\|x - x_scipy\| / \|x_scipy\| = ([0-9.e+-]+)", out)
    assert cold[0] > 0 and warm[0] > 0  # timings are reported, not compared
    assert difference[0] < 1e-12 and error[0] < 1e-8
