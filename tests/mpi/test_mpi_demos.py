"""The MPI demos at test size (JAXAMG_DEMO_SMALL=1), run by every rank: main()
returns 0 on every rank, and rank 0's printed numbers are checked again."""

import importlib.util
import pathlib
import re

import pytest

pytest.importorskip("mpi4py")

from mpi_testing import assert_all, needs_native_mpi  # noqa: E402

pytestmark = needs_native_mpi

DEMO_DIR = pathlib.Path(__file__).resolve().parents[2] / "demo"


def run_demo(comm, name, monkeypatch, capsys, *argv):
    monkeypatch.setenv("JAXAMG_DEMO_SMALL", "1")
    spec = importlib.util.spec_from_file_location(f"demo_{name}", DEMO_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    status = module.main(list(argv))
    out = capsys.readouterr().out
    ok = status == 0 and (comm.Get_rank() != 0 or out.rstrip().splitlines()[-1] == "OK")
    assert_all(comm, ok, out)
    return out


def rank0_numbers(comm, pattern, text):
    """The numbers matching `pattern` in rank 0's output, on every rank."""
    found = [float(v) for v in re.findall(pattern, text)] if comm.Get_rank() == 0 else None
    found = comm.bcast(found)
    assert found, f"{pattern!r} not in rank 0's output"
    return found


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
