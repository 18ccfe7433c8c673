"""XLA FFI handlers of jaxamg's distributed (MPI) solver for CUDA devices"""



def engine_instance() -> int:
    """
    The address of a variable of the engine library this module uses (one per process).
    """

def registrations() -> dict: ...

def last_device_solve() -> dict: ...

def take_stats_text() -> str: ...

def clear_cache() -> None: ...

def cache_info() -> dict: ...
