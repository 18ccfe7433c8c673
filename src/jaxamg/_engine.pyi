"""The jaxamg C++ engine (CPU) without JAX: configure, set up and solve."""

from typing import Annotated

from numpy.typing import NDArray


def engine_instance() -> int:
    """
    The address of a variable of the engine library this module uses (one per process).
    """

class EngineSolver:
    """One configured engine solver for one sparsity pattern."""

    def __init__(self, config: str, dtype: str = 'float64') -> None:
        """
        Parses an AmgX JSON (or legacy text) config; dtype is 'float32' or 'float64'.
        """

    def setup(self, indptr: Annotated[NDArray, dict(shape=(None,), device='cpu', writable=False)], indices: Annotated[NDArray, dict(shape=(None,), device='cpu', writable=False)], data: Annotated[NDArray, dict(shape=(None,), device='cpu', writable=False)], block_dim: int = 1, near_nullspace: Annotated[NDArray, dict(shape=(None, None), order='C', device='cpu', writable=False)] | None = None, copy: bool = True) -> None:
        """
        Full setup on a square CSR matrix (int32 indptr/indices, values of the dtype);
        block_dim k > 1 declares k x k blocks (node-interleaved unknowns);
        near_nullspace: an (n, m) C-contiguous array of the dtype for smoothed
        aggregation (x_smoothed_aggregation 2).
        copy=False: if every row's columns are sorted and unique, the solver reads
        indptr, indices and data in place instead of copying them, and keeps
        references to them; do not modify them until the next setup (resetup and
        replace_values never write into them). Otherwise it copies as usual.
        """

    @property
    def borrows_matrix(self) -> bool:
        """
        True if the last setup reads the caller's arrays in place (copy=False).
        """

    def resetup(self, data: Annotated[NDArray, dict(shape=(None,), device='cpu', writable=False)]) -> None:
        """
        New values for the same pattern: keeps coarsening, recomputes the numbers.
        """

    def replace_values(self, data: Annotated[NDArray, dict(shape=(None,), device='cpu', writable=False)]) -> None:
        """New values for the same pattern, keeping the whole hierarchy."""

    def solve(self, b: Annotated[NDArray, dict(shape=(None,), device='cpu', writable=False)], x0: Annotated[NDArray, dict(shape=(None,), device='cpu', writable=False)] | None = None, transpose: bool = False) -> tuple:
        """
        Solves A x = b (A^T x = b with transpose=True), starting from x0 if given.
        Returns (x, info); info has iterations, residual (the final monitored norm,
        None if not monitored), status (int, AmgX's values: 0 SUCCESS, 1 FAILED,
        2 DIVERGED, 3 NOT_CONVERGED), status_name, residual_history (initial norm,
        then one per iteration), setup_seconds and solve_seconds.
        """

    def take_log(self) -> str:
        """AmgX-layout statistics printed since the last call (then cleared)."""

    def hierarchy(self) -> list[tuple[int, int]]:
        """(rows, nnz) per AMG level, finest first; empty without AMG."""

    def prolongation_nnz(self) -> list[int]:
        """
        Entries of each level's prolongation to the next, finest first (one fewer
        than the levels); empty without AMG.
        """

    @property
    def rows(self) -> int: ...

    @property
    def nnz(self) -> int: ...

    @property
    def dtype(self) -> str: ...

def canonical_config(text: str) -> str:
    """The parsed config as sorted 'scope:name=value;' entries."""

def implemented_solvers() -> list[str]:
    """AmgX solver names this build implements, sorted."""
