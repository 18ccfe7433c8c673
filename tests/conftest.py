"""Fixtures shared by the Python tests."""

import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request) -> np.random.Generator:
    # A different, reproducible stream per test (str hashes vary per process).
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def fresh_cache():
    """An empty native solver cache before and after the test."""
    import jaxamg

    jaxamg.clear_solver_cache()
    yield
    jaxamg.clear_solver_cache()
