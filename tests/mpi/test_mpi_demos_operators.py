"""The MPI demos of matrix-free operators, sparsity detection and singular
systems at test size (JAXAMG_DEMO_SMALL=1), run by every rank: main()
returns 0 on every rank, and rank 0's printed numbers are checked again,
against references computed here (dense NumPy/SciPy solves) where the
demo's own check could share a mistake with the code it checks."""

import functools

import numpy as np
import pytest

pytest.importorskip("mpi4py")

import jax.numpy as jnp  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from mpi_testing import needs_native_mpi, rank0_numbers, run_demo  # noqa: E402

from jaxamg import matrices  # noqa: E402

pytestmark = needs_native_mpi

NUMBER = r"([0-9.e+-]+)"
SIGNED = r"([+-][0-9.e+-]+)"


def operator_matrix(operator, n):
    """The dense matrix of a linear operator, one unit vector at a time."""
    return np.stack([np.asarray(operator(jnp.eye(n, dtype=jnp.float64)[j])) for j in range(n)], 1)


def shift_gradient(A0, A1, b, theta, theta_true):
    """d/dtheta of |x(theta) - x*|^2 / |x*|^2 for x(theta) = (A0 + theta A1)^-1 b,
    x* = x(theta_true): 2 (x - x*) . dx / |x*|^2 with dx = -A^-1 A1 x."""
    x = np.linalg.solve(A0 + theta * A1, b)
    target = np.linalg.solve(A0 + theta_true * A1, b)
    dx = -np.linalg.solve(A0 + theta * A1, A1 @ x)
    return 2 * float((x - target) @ dx) / float(target @ target)


def test_mpi_poisson_operator_optimization_global(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_poisson_operator_optimization_global", monkeypatch, capsys)
    skew = rank0_numbers(comm, r"recovered skew: " + NUMBER, out)
    assert abs(skew[0] - 1.3) < 1e-3
    (grad,) = rank0_numbers(comm, r"first gradient dL/ds = " + SIGNED, out)
    (fd,) = rank0_numbers(comm, r"; central difference " + SIGNED, out)
    (one,) = rank0_numbers(comm, r"; one process " + SIGNED, out)
    assert abs(grad - fd) < 1e-6 * abs(fd) and abs(grad - one) < 1e-6 * abs(one)
    # The first gradient (skew 0.2) from dense solves of the operator's matrix,
    # which is affine in the skew.
    n = 12
    A0 = operator_matrix(matrices.poisson_operator(0.0, dtype=jnp.float64), n * n)
    A1 = operator_matrix(matrices.poisson_operator(1.0, dtype=jnp.float64), n * n) - A0
    b = np.asarray(matrices.rhs_random(n * n, seed=0, dtype=jnp.float64))
    exact = shift_gradient(A0, A1, b, 0.2, 1.3)
    assert abs(grad - exact) < 1e-6 * abs(exact), (grad, exact)


def test_mpi_large_3d_poisson_operator_optimization(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_large_3d_poisson_operator_optimization", monkeypatch, capsys)
    theta = rank0_numbers(comm, r"recovered theta: " + NUMBER, out)
    assert abs(theta[0] - 1.0) < 1e-6
    (grad,) = rank0_numbers(comm, r"first gradient dL/dtheta = " + SIGNED, out)
    (fd,) = rank0_numbers(comm, r", central difference " + SIGNED, out)
    assert abs(grad - fd) < 1e-5 * abs(fd)
    # The first gradient (theta 0) from a SciPy 7-point Laplacian on 10^3.
    n = 10
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    eye = sp.identity(n)
    L = sum(
        functools.reduce(sp.kron, [T if a == axis else eye for a in range(3)]) for axis in range(3)
    )
    b = np.asarray(matrices.rhs_random(n**3, seed=3, dtype=jnp.float64))
    exact = shift_gradient(L.toarray(), np.identity(n**3), b, 0.0, 1.0)
    assert abs(grad - exact) < 1e-6 * abs(exact), (grad, exact)


def test_mpi_sparsity_detection_benchmark(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_sparsity_detection_benchmark", monkeypatch, capsys)
    n, size = 12, comm.Get_size()
    nnz = rank0_numbers(comm, r"traced nonzeros (\d+)", out)
    assert nnz[0] == 7 * n**3 - 6 * n**2
    for method in ("tracing", "probing"):
        # One line per rank: rank, seconds, peak RSS, RSS growth.
        rows = rank0_numbers(comm, rf"(?m)^{method}\s+\d+\s+{NUMBER}", out)
        assert len(rows) == size and all(seconds > 0 for seconds in rows)
    flags = comm.bcast(
        out.count("traced == probed: True") + out.count("7-point pattern: True")
        if comm.Get_rank() == 0
        else None
    )
    assert flags == 2


def test_mpi_singular_poisson_stretched_grid(comm, monkeypatch, capsys):
    out = run_demo(comm, "mpi_singular_poisson_stretched_grid", monkeypatch, capsys)
    # Per stretch: plain forward/adjoint, null-space forward/adjoint
    # (iterations with * when not converged, error), one-process difference.
    lines = comm.bcast(
        [line.split() for line in out.splitlines() if line[:4] in ("1.00", "1.10")]
        if comm.Get_rank() == 0
        else None
    )
    assert [line[0] for line in lines] == ["1.00", "1.10"]
    for line in lines:
        assert len(line) == 10, line
        null_forward, null_adjoint = line[5:7], line[7:9]
        for iterations, error in (null_forward, null_adjoint):
            assert not iterations.endswith("*") and float(error) < 1e-8, line
        assert float(line[9]) < 1e-8, line
        # The plain adjoint solves an inconsistent system: it cannot converge.
        assert line[3].endswith("*"), line
    checks = rank0_numbers(comm, r"against numpy lstsq: " + NUMBER, out)
    assert len(checks) == 2 and max(checks) < 1e-10
