"""The differentiable core of `jaxamg.solve`: x = A^-1 b as a
``jax.lax.custom_linear_solve`` over native calls.

The ``solve`` and ``transpose_solve`` of the ``custom_linear_solve`` are FFI
calls and its ``matvec`` is a CSR product in JAX. JAX derives every
derivative from that: reverse mode solves with A^T (reusing the forward
setup in the native cache) and gives ``dL/dA_ij = -lambda_i x_j`` on the
sparsity pattern through ``matvec``; forward mode solves
``A dx = db - dA x``; and both compose (grad of grad, jacfwd of grad, vmap
of grad). The distributed core (``_dist.solve``) builds its tangent solve
from the same :func:`native_linear_solve` and :func:`pattern_product`.
An adjoint solve that does not converge is reported from the host
(:class:`AdjointConvergenceWarning`, or an error with
``JAXAMG_ADJOINT_FAILURE=raise``).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import warnings

import numpy as np

from . import ffi
from .status import AMGXStatus


class AdjointConvergenceWarning(UserWarning):
    """The adjoint (transposed) solve of a gradient did not converge."""


@dataclasses.dataclass(frozen=True)
class Static:
    config: str
    structure: tuple[int, int]
    reuse_setup: bool
    block_dim: int
    history_len: int
    symmetric: bool
    use_x0: bool


def jax_jit_lazy(fun=None, **jit_kwargs):
    """jax.jit applied on first call, so importing this module needs no JAX."""
    if fun is None:
        return functools.partial(jax_jit_lazy, **jit_kwargs)
    compiled = []

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        if not compiled:
            import jax

            compiled.append(jax.jit(fun, **jit_kwargs))
        return compiled[0](*args, **kwargs)

    return wrapper


def _report_adjoint(stats) -> None:
    """Runs at execution time (eager or jit) after every adjoint solve."""
    stats = np.asarray(stats).reshape(-1, stats.shape[-1])
    for row in stats:
        status = int(row[2])
        if status != AMGXStatus.SUCCESS:
            message = (
                f"jaxamg: the adjoint solve of a gradient ended with {AMGXStatus(status)} "
                f"after {int(row[0])} iterations (residual {float(row[1]):.3e}); the gradient "
                "is inaccurate. Raise max_iters, loosen nothing, or pick a solver suited to A^T "
                "(e.g. FGMRES)."
            )
            if os.environ.get("JAXAMG_ADJOINT_FAILURE", "warn") == "raise":
                raise RuntimeError(message)
            warnings.warn(message, AdjointConvergenceWarning, stacklevel=2)


def _reported_adjoint(x, stats):
    """`x` unchanged, after `_report_adjoint(stats)` (the adjoint's report)."""
    _report_adjoint(stats)
    return np.asarray(x)


def report_adjoint_failure(x, stats):
    """`x` unchanged; a failed adjoint solve (any lane's status not SUCCESS)
    is reported from the host. The report is a pure callback that hands x
    back, in a branch taken only on failure: an effectful
    ``jax.debug.callback`` would take every jitted gradient off JAX's fast
    dispatch path (about 0.3 ms a call, with nothing to report)."""
    import jax
    import jax.numpy as jnp

    failed = jnp.any(stats[..., 2] != AMGXStatus.SUCCESS)
    return jax.lax.cond(
        failed,
        lambda: jax.pure_callback(
            _reported_adjoint,
            jax.ShapeDtypeStruct(x.shape, x.dtype),
            x,
            stats,
            vmap_method="sequential",
        ),
        lambda: x,
    )


def pattern_product(values, x_at_columns, rows, n: int):
    """The CSR product ``sum_j values_ij x_j`` from x read at every stored
    entry's column (``x_at_columns``, pattern order) and the entries' rows."""
    import jax

    return jax.ops.segment_sum(values * x_at_columns, rows, num_segments=n)


def native_linear_solve(
    matvec,
    call,
    b,
    guess,
    use_guess: bool,
    symmetric: bool,
    *,
    order=None,
    symmetric_matvec: bool = False,
):
    """``jax.lax.custom_linear_solve`` whose solve and transpose_solve are
    native calls: returns (x, stats).

    ``call(rhs, guess, transpose, use_guess) -> (x, stats)`` is one native
    solve. The forward starts from `guess` (zeros when None); the adjoint
    always starts from zero, with the forward operator when `symmetric`,
    otherwise the engine's A^T on the forward setup. JAX differentiates the
    matrix values through `matvec` (which must be the operator A).

    `order` (a vector shaped like b, or None) is passed as the guess operand
    of calls that start from zero (the engine does not read it then), so
    that they run after whatever computed it: distributed solves order their
    collectives by it (a real operand, as :mod:`jaxamg._core.operand_order`
    explains). ``symmetric_matvec`` spares JAX transposing `matvec`
    (its transpose is then taken to be `matvec` itself, used only to
    differentiate the adjoint with respect to the values).
    """
    import jax
    import jax.numpy as jnp

    def start(rhs):
        return jnp.zeros_like(rhs) if order is None else order

    def forward(_matvec, rhs):
        if guess is None:
            return call(rhs, start(rhs), False, False)
        return call(rhs, guess, False, use_guess)

    def adjoint(_matvec, rhs):
        x, stats = call(rhs, start(rhs), not symmetric, False)
        return report_adjoint_failure(x, stats), stats

    return jax.lax.custom_linear_solve(
        matvec, b, forward, adjoint, symmetric=symmetric_matvec, has_aux=True
    )


@functools.partial(jax_jit_lazy, static_argnames=("st",))
def linear_solve(indptr, indices, rows, data, b, x0, st: Static, nns=None):
    """The differentiable core: returns (x, stats).

    Jitted with the configuration static, so eager calls and eager gradients
    reuse compiled code instead of re-tracing the linear solve every time.
    """
    import jax

    n = b.shape[-1]
    x0 = jax.lax.stop_gradient(x0)
    fixed = jax.lax.stop_gradient(data)
    # Near-null-space vectors shape the preconditioner only: no gradient.
    nns = None if nns is None else jax.lax.stop_gradient(nns)

    def matvec(x):
        return pattern_product(data, x[indices], rows, n)

    def call(rhs, guess, transpose, use_x0):
        return ffi.solve_call(
            indptr,
            indices,
            fixed,
            rhs,
            guess,
            config=st.config,
            structure=st.structure,
            transpose=transpose,
            use_x0=use_x0,
            reuse_setup=st.reuse_setup,
            block_dim=st.block_dim,
            history_len=st.history_len,
            near_nullspace=nns,
        )

    return native_linear_solve(matvec, call, b, x0, st.use_x0, st.symmetric)
