"""Helpers of the MPI tests: collective-safe assertions and serial references.

A plain `assert` that fails on one rank lets that rank skip the rest of the
test while the others wait in its next collective. These helpers first
combine the local results of all ranks, so every rank passes or fails the
same assertion.
"""

from __future__ import annotations

import importlib.util
import pathlib
import re

import numpy as np
import pytest
import scipy.sparse as sp


def has_mpi_module() -> bool:
    """True when this jaxamg build has the native MPI module."""
    return importlib.util.find_spec("jaxamg._mpi") is not None


needs_native_mpi = pytest.mark.skipif(
    not has_mpi_module(), reason="this jaxamg build has no native MPI module (jaxamg._mpi)"
)


def all_true(comm, ok: bool) -> bool:
    return all(comm.allgather(bool(ok)))


def assert_all(comm, ok: bool, message: str = "") -> None:
    flags = comm.allgather(bool(ok))
    failing = [r for r, f in enumerate(flags) if not f]
    assert not failing, f"failed on ranks {failing}: {message}"


def global_max(comm, value: float) -> float:
    return max(comm.allgather(float(value)))


def relative(comm, local_diff, local_ref) -> float:
    """The global relative 2-norm difference from per-rank pieces (the same
    number on every rank)."""
    d = sum(comm.allgather(float(np.sum(np.square(local_diff)))))
    r = sum(comm.allgather(float(np.sum(np.square(local_ref)))))
    return float(np.sqrt(d / r))


def assert_all_raise(comm, exc_type, fn, match: str | None = None) -> str:
    """`fn()` must raise `exc_type` on every rank, with the same message on
    every rank (containing `match`). Returns the message."""
    try:
        fn()
        outcome = ("no error", "")
    except Exception as e:  # noqa: BLE001 - every outcome is compared across ranks
        outcome = ("ok" if isinstance(e, exc_type) else type(e).__name__, str(e))
    outcomes = comm.allgather(outcome)
    assert all(o[0] == "ok" for o in outcomes), (
        f"expected {exc_type.__name__} on every rank, got {outcomes}"
    )
    messages = {o[1] for o in outcomes}
    assert len(messages) == 1, f"ranks raised different messages: {outcomes}"
    message = messages.pop()
    if match is not None:
        assert match in message, f"{match!r} not in {message!r}"
    return message


def split_rows(n: int, size: int, rng: np.random.Generator, equal: bool):
    """Row boundaries of `size` non-empty contiguous blocks of `n` rows: the
    default partition, or random unequal blocks (the same on every rank when
    `rng` is seeded alike)."""
    if equal:
        from jaxamg.mpi_utils import get_partition_info

        return [get_partition_info(n, r, size)[:2] for r in range(size)]
    cuts = np.sort(rng.choice(np.arange(1, n), size=size - 1, replace=False)) if size > 1 else []
    bounds = [0, *map(int, cuts), n]
    return [(bounds[r], bounds[r + 1]) for r in range(size)]


def local_block(A_global, row_start: int, row_end: int, dtype=None):
    """Rows row_start:row_end of a SciPy matrix as a BCSR row block with
    global columns (what each rank passes to jaxamg.solve)."""
    import jax.numpy as jnp
    import scipy.sparse as sp
    from jax.experimental import sparse as jsparse

    M = sp.csr_matrix(A_global)[row_start:row_end]
    M.sort_indices()
    data = M.data if dtype is None else M.data.astype(dtype)
    return jsparse.BCSR(
        (
            jnp.asarray(data),
            jnp.asarray(M.indices.astype(np.int32)),
            jnp.asarray(M.indptr.astype(np.int32)),
        ),
        shape=M.shape,
    )


TOL = 1e-12


def spd_matrix(n, rng):
    """Random sparse SPD (strict diagonal dominance) plus a 1-D Laplacian, so
    that it couples neighbouring rows (and therefore ranks)."""
    R = sp.random(n, n, density=4.0 / n, random_state=int(rng.integers(1 << 30)))
    S = (R + R.T).tocsr()
    S.setdiag(0)
    S.eliminate_zeros()
    L = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n))
    dominance = np.asarray(abs(S).sum(axis=1)).ravel() + 1.0
    return sp.csr_matrix(S + L + sp.diags(dominance))


def nonsymmetric_matrix(n, rng):
    """Structurally nonsymmetric, nonsingular by row diagonal dominance."""
    R = sp.random(n, n, density=4.0 / n, random_state=int(rng.integers(1 << 30))).tocsr()
    R.setdiag(0)
    R.eliminate_zeros()
    L = sp.diags([-1.3, 2.0, -0.7], [-1, 0, 1], shape=(n, n))
    dominance = np.asarray(abs(R).sum(axis=1)).ravel() + 1.0
    return sp.csr_matrix(R + L + sp.diags(dominance))


def block_matrix(m, rng, symmetric):
    """kron(1-D Laplacian on m nodes, 2x2 coupling): block_dim=2, node-major."""
    T = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    coupling = (
        np.array([[3.0, 1.0], [1.0, 3.0]]) if symmetric else np.array([[3.0, 1.5], [0.5, 3.0]])
    )
    return sp.csr_matrix(sp.kron(T, coupling) + sp.identity(2 * m))


def config(symmetric, preconditioner="jacobi"):
    """PCG (symmetric) or FGMRES, converged to a relative residual of 1e-12,
    preconditioned by one block-Jacobi sweep ("jacobi") or one V-cycle of
    AMG with rank-local aggregation ("amg")."""
    outer = {"solver": "PCG"} if symmetric else {"solver": "FGMRES", "gmres_n_restart": 30}
    if preconditioner == "amg":
        inner = {
            "scope": "amg",
            "solver": "AMG",
            "algorithm": "AGGREGATION",
            "selector": "SIZE_2",
            "max_iters": 1,
            "coarse_solver": {"scope": "amg_coarse", "solver": "BLOCK_JACOBI", "max_iters": 50},
        }
    else:
        inner = {"scope": "jacobi", "solver": "BLOCK_JACOBI", "max_iters": 1}
    return {
        "config_version": 2,
        "solver": {
            "scope": "main",
            **outer,
            "tolerance": TOL,
            "max_iters": 1000,
            "convergence": "RELATIVE_INI",
            "preconditioner": inner,
        },
    }


# The MPI demos at test size (JAXAMG_DEMO_SMALL=1), run in-process by every rank.
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
