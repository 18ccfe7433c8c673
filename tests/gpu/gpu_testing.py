"""Shared by the GPU tests: the CUDA module (or None) and the module marks
that skip a file without a GPU."""

import pytest

from jaxamg._core import ffi as _ffi


def cuda_module():
    """`jaxamg._cuda` when this build has it and JAX has a GPU, else None."""
    try:
        return _ffi.cuda_native()
    except Exception:  # pragma: no cover - broken GPU runtime
        return None


requires_cuda = [
    pytest.mark.gpu,
    pytest.mark.skipif(cuda_module() is None, reason="needs a CUDA GPU and jaxamg._cuda"),
]
