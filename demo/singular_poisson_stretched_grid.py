"""Singular Poisson on a stretched grid: plain solves versus declared null spaces.

The volume-averaged finite-volume Laplacian A = D^-1 L on a grid periodic in x
and closed in y (jaxamg.matrices.poisson_matrix_stretched) is singular, and on
a stretched grid nonsymmetric: A·1 = 0 but A^T·V = 0 (V the cell volumes).

For each stretch the demo solves A x = b with a compatible b (V·b = 0) and
differentiates w·x with respect to b, whose adjoint solves A^T λ = w for a
generic w (1·w ≠ 0, so that system is inconsistent):

* plain: the forward solve converges but its constant component is
  arbitrary; the adjoint cannot converge;
* nullspace="constant", transpose_nullspace=V: the forward returns A^+ b and
  the gradient (A^T)^+ w.

Errors are against the pseudo-inverse solutions, computed exactly with a
bordered sparse direct solve ([A M; N^T 0][x; μ] = [b; 0] gives x = A^+ b).
The adjoint iteration counts are those of the transposed solve the gradient
runs (same system, same configuration). A plain forward solve can report
convergence and still be far from A^+ b: nothing fixes its constant
component, and the dense LU coarse solve of the singular coarsest matrix
inflates it until the solver's recurrence residual no longer follows the true
one.

Usage: python demo/singular_poisson_stretched_grid.py [NX NY]   (default 64 48)
"""

from __future__ import annotations

import sys
import time
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg.matrices import poisson_matrix_stretched

jax.config.update("jax_enable_x64", True)

STRETCHES = (1.00, 1.02, 1.04, 1.06, 1.08, 1.10)
CONFIG = {"tolerance": 1e-10, "max_iters": 200}


def pseudo_inverse_solve(A: sp.csr_matrix, N: np.ndarray, M: np.ndarray, b: np.ndarray):
    """A^+ b for null(A) = span(N), null(A^T) = span(M), one column each."""
    n = A.shape[0]
    bordered = sp.bmat([[A, sp.csr_matrix(M[:, None])], [sp.csr_matrix(N[None, :]), None]])
    return spla.spsolve(bordered.tocsc(), np.concatenate([b, [0.0]]))[:n]


def relative_error(x, reference) -> float:
    return float(np.linalg.norm(np.asarray(x) - reference) / np.linalg.norm(reference))


def run(nx: int, ny: int, stretch: float, seed: int = 0) -> dict:
    A, V = poisson_matrix_stretched(nx, ny, stretch, dtype=jnp.float64)
    n = A.shape[0]
    A_sp = sp.csr_matrix(
        (np.asarray(A.data), np.asarray(A.indices), np.asarray(A.indptr)), shape=(n, n)
    )
    A_T = jsparse.BCSR.from_scipy_sparse(A_sp.T.tocsr())
    V_np, ones = np.asarray(V), np.ones(n)
    rng = np.random.default_rng(seed)
    b = rng.standard_normal(n)
    b -= V_np * (V_np @ b) / (V_np @ V_np)  # compatible: V·b = 0
    w = rng.standard_normal(n) + 0.5  # generic cotangent: 1·w != 0
    x_ref = pseudo_inverse_solve(A_sp, ones, V_np, b)
    g_ref = pseudo_inverse_solve(A_sp.T.tocsr(), V_np, ones, w)

    out = {}
    for label, forward, adjoint in (
        ("plain", {}, {}),
        (
            "null space",
            {"nullspace": "constant", "transpose_nullspace": V},
            {"nullspace": V, "transpose_nullspace": "constant"},
        ),
    ):
        x, info = jaxamg.solve(A, jnp.asarray(b), **forward, **CONFIG)
        _, info_adjoint = jaxamg.solve(A_T, jnp.asarray(w), **adjoint, **CONFIG)

        def objective(rhs):
            return jnp.dot(jnp.asarray(w), jaxamg.solve(A, rhs, **forward, **CONFIG)[0])

        g = jax.grad(objective)(jnp.asarray(b))
        out[label] = {
            "forward": (info["iterations"], info["status"], relative_error(x, x_ref)),
            "adjoint": (
                info_adjoint["iterations"],
                info_adjoint["status"],
                relative_error(g, g_ref),
            ),
        }
    return out


def main(nx: int = 64, ny: int = 48, stretches=STRETCHES) -> dict:
    print(
        f"{nx}x{ny} cells, float64, {CONFIG}: iterations (* = not converged) and error "
        "against the pseudo-inverse solution"
    )
    print(f"{'':8s}{'plain solve':^30s}   {'with null spaces':^30s}")
    print(f"{'stretch':8s}" + f"{'forward':>15s}{'adjoint':>15s}   " * 2)
    results = {}
    start = time.perf_counter()
    with warnings.catch_warnings():
        # The plain solves warn (singular matrix, unconverged adjoint): that
        # is the behaviour shown here.
        warnings.simplefilter("ignore")
        for stretch in stretches:
            results[stretch] = run(nx, ny, stretch)
            cells = []
            for label in ("plain", "null space"):
                for part in ("forward", "adjoint"):
                    iterations, status, error = results[stretch][label][part]
                    mark = " " if status == jaxamg.AMGXStatus.SUCCESS else "*"
                    cells.append(f"{iterations:5d}{mark}{error:9.1e}")
            print(f"{stretch:<8.2f}" + "".join(cells[:2]) + "   " + "".join(cells[2:]))
    print(f"({time.perf_counter() - start:.1f} s)")
    return results


if __name__ == "__main__":
    if len(sys.argv) not in (1, 3):
        sys.exit("usage: singular_poisson_stretched_grid.py [NX NY]")
    main(*(int(v) for v in sys.argv[1:]))
