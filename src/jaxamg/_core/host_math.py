"""Products over whole vectors on the host, without a threaded BLAS.

A NumPy product of a tall array (``B.T @ B``, ``np.linalg.norm(v)``,
``np.linalg.svd``) goes to the BLAS library bundled with NumPy, which runs
it on its own thread pool. Those threads spin for a while after returning,
and on a machine with few cores they take the cores from the engine's
solve that follows: a singular 4*10^4-unknown solve (a basis check before
it) took 169 ms on 2 engine threads against 142 ms on 1. The einsum loops
here are single-threaded and, for the few columns of a basis, as fast.
"""

from __future__ import annotations

import numpy as np


def gram(columns: np.ndarray) -> np.ndarray:
    """``columns^T columns`` of an ``(n, k)`` array."""
    return np.einsum("ik,il->kl", columns, columns, optimize=False)


def norm(v: np.ndarray) -> float:
    """The 2-norm of a vector."""
    v = np.ravel(v)
    return float(np.sqrt(np.einsum("i,i->", v, v, optimize=False)))


def triangular_factor(values: np.ndarray) -> np.ndarray:
    """R of ``values = Q R`` (Gram-Schmidt, each column orthogonalised twice,
    so Q is orthonormal to rounding): the small R has the singular values of
    the tall ``values``."""
    q = np.array(values, dtype=np.float64)
    m = q.shape[1]
    r = np.zeros((m, m))
    for j in range(m):
        for _ in range(2):
            c = np.einsum("ik,i->k", q[:, :j], q[:, j], optimize=False)
            q[:, j] -= np.einsum("ik,k->i", q[:, :j], c, optimize=False)
            r[:j, j] += c
        r[j, j] = norm(q[:, j])
        if r[j, j] > 0:
            q[:, j] /= r[j, j]
    return r
