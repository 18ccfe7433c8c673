"""Fixtures shared by the Python tests."""

import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request) -> np.random.Generator:
    # A different, reproducible stream per test (str hashes vary per process).
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
