"""XLA FFI handlers of jaxamg's distributed (MPI) solver"""

from typing import Annotated

import numpy
from numpy.typing import NDArray


def engine_instance() -> int:
    """
    The address of a variable of the engine library this module uses (one per process).
    """

def registrations() -> dict: ...

def available() -> bool: ...

def take_stats_text() -> str: ...

def clear_cache() -> None: ...

def cache_info() -> dict: ...

def halo_tables(comm: int, row_start: int, n_local: int, nglobal: int, ghosts: Annotated[NDArray[numpy.int64], dict(shape=(None,), order='C', device='cpu', writable=False)]) -> dict: ...

def transpose_tables(comm: int, row_start: int, n_local: int, nglobal: int, indptr: Annotated[NDArray[numpy.int32], dict(shape=(None,), order='C', device='cpu', writable=False)], indices: Annotated[NDArray[numpy.int32], dict(shape=(None,), order='C', device='cpu', writable=False)]) -> dict: ...

def mpi_initialized() -> bool: ...
