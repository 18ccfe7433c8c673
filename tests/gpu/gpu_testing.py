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


def weighted_losses(A, M, weights, config):
    """sum(weights * x**2) of A x = b as a function of (A's values, b):
    through jaxamg.solve of the device matrix M (A's pattern) with `config`,
    and through a dense solve, the reference for gradients."""
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import sparse as jsparse

    import jaxamg

    n = A.shape[0]
    rows = np.repeat(np.arange(n), np.diff(A.indptr))

    def loss_amg(data, rhs):
        x, _ = jaxamg.solve(
            jsparse.BCSR((data, M.indices, M.indptr), shape=M.shape), rhs, config=config
        )
        return jnp.sum(weights * x**2)

    def loss_dense(data, rhs):
        D = jnp.zeros((n, n)).at[rows, np.asarray(A.indices)].add(data)
        return jnp.sum(weights * jnp.linalg.solve(D, rhs) ** 2)

    return loss_amg, loss_dense


def assert_gradient_matches_dense(A, M, rhs, weights, config):
    """value_and_grad of `weighted_losses` with respect to (A's values, b)
    through jaxamg.solve on M equals the dense solve's."""
    import jax
    import numpy as np

    loss_amg, loss_dense = weighted_losses(A, M, weights, config)
    va, ga = jax.value_and_grad(loss_amg, argnums=(0, 1))(M.data, rhs)
    vd, gd = jax.value_and_grad(loss_dense, argnums=(0, 1))(M.data, rhs)
    np.testing.assert_allclose(float(va), float(vd), rtol=1e-7)
    for a, d in zip(ga, gd):
        np.testing.assert_allclose(np.asarray(a), np.asarray(d), rtol=1e-6, atol=1e-9)
