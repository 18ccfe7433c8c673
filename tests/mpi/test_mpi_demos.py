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
