"""XLA FFI handlers and the native solver cache of jaxamg"""



def engine_instance() -> int:
    """
    The address of a variable of the engine library this module uses (one per process).
    """

def registrations() -> dict: ...

def cache_info() -> dict: ...

def clear_cache() -> None: ...

def take_stats_text() -> str: ...

def set_cache_capacity(arg: int, /) -> None: ...
