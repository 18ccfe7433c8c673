"""Test problems of the sharded tests: a global SciPy system cut into row
blocks (equal or unequal), and a collective-safe assertion."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def random_system(n: int, seed: int, nonsymmetric: bool) -> sp.csr_matrix:
    """A well-conditioned random sparse matrix (tests/mpi's generators)."""
    from mpi_testing import nonsymmetric_matrix, spd_matrix

    rng = np.random.default_rng(seed)
    return (nonsymmetric_matrix if nonsymmetric else spd_matrix)(n, rng).tocsr()


def partition(n_global: int, nranks: int, unequal: bool, block: int = 1) -> list[int]:
    """Row starts of every rank (length nranks + 1); `unequal` gives rank 0
    extra rows; every count is a multiple of `block`."""
    nodes = n_global // block
    counts = [nodes // nranks] * nranks
    counts[-1] += nodes - sum(counts)
    if unequal:
        shift = max(1, counts[-1] // 3)
        counts[0] += shift
        counts[-1] -= shift
    starts = np.concatenate([[0], np.cumsum(counts)]) * block
    return [int(s) for s in starts]


def local_block(M: sp.csr_matrix, starts: list[int], rank: int) -> sp.csr_matrix:
    return M[starts[rank] : starts[rank + 1]].tocsr()


def assert_all_raise_local(comm, exc_type, fn, match: str) -> None:
    """`fn()` raises `exc_type` with `match` in its message on every rank;
    the messages may differ between ranks (e.g. they name the local device)."""
    try:
        fn()
        ok = False
    except exc_type as e:
        ok = match in str(e)
    except Exception:  # noqa: BLE001 - the verdict is shared below
        ok = False
    flags = comm.allgather(ok)
    assert all(flags), f"{exc_type.__name__} with {match!r} not raised on ranks " + str(
        [r for r, f in enumerate(flags) if not f]
    )
