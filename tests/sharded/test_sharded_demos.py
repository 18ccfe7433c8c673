"""The sharded demos at test size (JAXAMG_DEMO_SMALL=1), run by every rank:
main() returns 0 on every rank, and rank 0's printed numbers are checked
again."""

import re

import mpi_testing
import pytest

pytestmark = pytest.mark.usefixtures("native_mpi")


def run_demo(comm, name, monkeypatch, capsys):
    """mpi_testing's demo run, with rank 0's output on every rank."""
    return comm.bcast(mpi_testing.run_demo(comm, name, monkeypatch, capsys))


def _numbers(pattern, text):
    found = [float(v) for v in re.findall(pattern, text)]
    assert found, f"{pattern!r} not in:\n{text}"
    return found


def test_sharded_poisson_problem(comm, monkeypatch, capsys):
    out = run_demo(comm, "sharded_poisson_problem", monkeypatch, capsys)
    assert _numbers(r"true \|b - A x\| / \|b\| = ([0-9.e+-]+)", out)[0] < 1e-8
    assert max(_numbers(r"relative error ([0-9.e+-]+)", out)) < 1e-5
    assert out.count("AMGXStatus.SUCCESS") >= comm.Get_size()


def test_sharded_poisson_operator_optimization(comm, monkeypatch, capsys):
    out = run_demo(comm, "sharded_poisson_operator_optimization", monkeypatch, capsys)
    assert abs(_numbers(r"recovered skew ([0-9.e+-]+)", out)[0] - 5.0) < 1e-3


def test_sharding_mpi_benchmark(comm, monkeypatch, capsys):
    out = run_demo(comm, "sharding_mpi_benchmark", monkeypatch, capsys)
    assert _numbers(r"true \|b - A x\| / \|b\| = ([0-9.e+-]+)", out)[0] < 1e-5
    # Both interfaces ran the same solves: the same x and gradients.
    differences = _numbers(r"sharding vs MPI relative difference ([0-9.e+-]+)", out)
    assert len(differences) == 3 and max(differences) < 1e-8
    # Compile, first-call and steady-state ratios for the forward solve, dL/db
    # and dL/dA: nine positive numbers.
    ratios = [line.split()[2:] for line in out.splitlines() if line.split()[1:2] == ["ratio"]]
    assert len(ratios) == 3 and all(len(r) == 3 and min(map(float, r)) > 0 for r in ratios)
    assert out.count("AMGXStatus.SUCCESS") == 2 * comm.Get_size()
