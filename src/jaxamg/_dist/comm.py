"""Host-side MPI helpers shared by the MPI solve and `jaxamg.mpi_utils`.

Everything here runs in Python on the host (never inside a compiled
program). The one rule it enforces: a check that can fail on one rank only is
*agreed* by a collective before anyone acts on it, so that every rank raises
the same error and no rank is left waiting in a collective the others never
reach.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Exception types a failing rank's error is re-raised as on every rank; any
# other exception type arrives as RuntimeError.
_KINDS = {
    "ValueError": ValueError,
    "TypeError": TypeError,
    "NotImplementedError": NotImplementedError,
    "ImportError": ImportError,
    "RuntimeError": RuntimeError,
}


class DistributedInputError(ValueError):
    """Bad input seen by one or more ranks, raised on every rank."""


def require_mpi4py(where: str):
    """The `mpi4py.MPI` module, or an ImportError saying how to get it."""
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(
            f"`{where}` needs mpi4py ({e}); install it with `pip install mpi4py` or the `mpi` "
            "extra, `pip install jaxamg-engine[mpi]` (it builds against the system MPI, e.g. "
            "Debian's libopenmpi-dev), and launch with mpirun."
        ) from None
    return MPI


def check_comm(comm: Any, where: str) -> None:
    """`comm` must be an mpi4py intracommunicator (raised locally: without a
    communicator there is nothing to agree with)."""
    needed = ("py2f", "Get_rank", "Get_size", "allgather")
    if comm is None or not all(hasattr(comm, name) for name in needed):
        raise TypeError(
            f"`{where}`: `comm` must be an mpi4py communicator (e.g. MPI.COMM_WORLD or a "
            f"communicator made by Split), got {type(comm).__name__}."
        )
    if getattr(comm, "is_inter", False):
        raise TypeError(
            f"`{where}`: `comm` is an intercommunicator; pass an intracommunicator whose "
            "ranks share the rows of the matrix."
        )


def comm_handle(comm: Any) -> int:
    """The Fortran handle of `comm` (what the native module converts back with
    MPI_Comm_f2c)."""
    return int(comm.py2f())


def run_and_agree(comm: Any, local: Callable[[], Any], extra: Any = None):
    """Runs `local()` on this rank, then shares with one allgather whether it
    failed (and `extra`, small validation metadata, or ``extra(value)`` when
    it is callable) with every rank.

    Returns ``(value, gathered_extra)`` when no rank failed. Otherwise every
    rank raises the error of the lowest failing rank, prefixed with
    ``rank R:``, as the same exception type.
    """
    error = None
    value = None
    try:
        value = local()
        if callable(extra):
            extra = extra(value)
    except Exception as e:  # every failure must be agreed, or the others hang
        error = (type(e).__name__, str(e))
        for base in type(e).__mro__:
            if base.__name__ in _KINDS:
                error = (base.__name__, str(e))
                break
    gathered = comm.allgather((error, extra if error is None else None))
    raise_first_error(comm, [g[0] for g in gathered])
    return value, [g[1] for g in gathered]


def raise_first_error(comm: Any, errors: list) -> None:
    """Raises the first non-None ``(kind, message)`` of `errors` (one per rank)."""
    for rank, error in enumerate(errors):
        if error is not None:
            kind, message = error
            others = sum(e is not None for e in errors) - 1
            suffix = f" ({others} other rank(s) failed too)" if others else ""
            exc_type = _KINDS.get(kind, RuntimeError)
            if exc_type is ValueError:
                exc_type = DistributedInputError
            raise exc_type(f"rank {rank}: {message}{suffix}")
