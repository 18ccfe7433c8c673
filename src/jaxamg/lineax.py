"""A lineax linear solver running jaxamg's engine: ``AMGSolver``.

``lineax.linear_solve(operator, b, solver=jaxamg.lineax.AMGSolver(config))``
solves with AMG (or any solver tree a config describes) where lineax expects
a solver, so lineax's operators, its ``Solution``/``RESULTS`` reporting and
its differentiation rules (forward and reverse mode through the operator
and the vector) apply unchanged:

- ``init`` turns the operator into the sparse matrix the engine solves (a
  ``MatrixLinearOperator`` directly; any other operator by sparsity
  detection and colouring, one ``mv`` per colour, never ``as_matrix()``).
  The state, ``(matrix,)``, holds it, so ``state = solver.init(operator, {})``
  passed to several ``linear_solve`` calls assembles it once; the engine's
  solver cache keeps the AMG setup of a matrix between solves.
- ``transpose`` gives the state of ``operator.T`` from the same matrix.
- ``compute`` runs :func:`jaxamg.solve`; its status becomes lineax's result
  (``NOT_CONVERGED`` is ``max_steps_reached``, ``DIVERGED`` and ``FAILED``
  are ``breakdown``), and ``stats`` carries the iteration count and the
  final residual norm. ``options={"y0": x0}`` passes an initial guess.

Real float32/float64 operators on one 1-D vector, in one process.
``linear_solve`` runs ``init`` inside its own ``jit``, where a matrix is a
tracer: the engine then receives it dense (every entry stored) and a
function operator cannot be probed at all. So make the state once, outside
``jit``, and pass it::

    solver = jaxamg.lineax.AMGSolver(tolerance=1e-10)
    state = solver.init(operator, {})          # the sparse matrix, once
    x = lineax.linear_solve(operator, b, solver, state=state).value
"""

from __future__ import annotations

import json
from typing import Any

import equinox as eqx
import jax.numpy as jnp
import lineax as lx

from ._core.status import AMGXStatus
from ._core.structure import coo_to_csr_order
from ._solve import solve
from .preconditioners import lineax_operator_matrix

__all__ = ["AMGSolver"]


def _transposed(A: Any) -> Any:
    """A^T in the form the engine takes: a BCSR matrix transposed with array
    operations only (its indices may be traced inside lineax's jit), or a
    dense matrix transposed."""
    from jax.experimental import sparse as jsparse

    if not isinstance(A, jsparse.BCSR):
        return A.T
    n = A.shape[0]
    data, indices, indptr = A.data, A.indices, A.indptr
    rows = jnp.searchsorted(indptr, jnp.arange(data.shape[0]), side="right") - 1
    order, new_indptr = coo_to_csr_order(indices, rows, n)  # A's columns are A^T's rows
    new_indptr = new_indptr.astype(indptr.dtype)
    return jsparse.BCSR((data[order], rows[order].astype(indices.dtype), new_indptr), shape=A.shape)


class AMGSolver(lx.AbstractLinearSolver):
    """A lineax solver that runs :func:`jaxamg.solve`.

    **Arguments:**

    - `config`: an AmgX-style config dict, the name of a shipped config, or
      ``None`` for jaxamg's default (PBiCGStab + classical AMG, as
      :func:`jaxamg.solve`).
    - `**kwargs`: flat overrides, as for :func:`jaxamg.solve`
      (``tolerance=1e-10``, ``max_iters=200``, ``solver="PCG"``, ...).
    """

    config_json: str = eqx.field(static=True)
    overrides: tuple = eqx.field(static=True)

    def __init__(self, config: Any = None, **kwargs: Any):
        if config is not None and not isinstance(config, (dict, str)):
            raise TypeError(
                "`AMGSolver`: `config` must be a config dict, a shipped config's name or None, "
                f"got {type(config).__name__}"
            )
        self.config_json = json.dumps(config, sort_keys=True)
        self.overrides = tuple(sorted(kwargs.items()))

    def init(self, operator: Any, options: dict[str, Any]):
        A, _ = lineax_operator_matrix(lx, operator, "AMGSolver")
        # In a tuple: lineax compares the state with a sentinel, which a
        # sparse matrix would answer elementwise.
        return (A,)

    def compute(self, state: Any, vector: Any, options: dict[str, Any]):
        config = json.loads(self.config_json)
        x, info = solve(
            state[0], vector, x0=options.get("y0"), config=config, **dict(self.overrides)
        )
        status = info["status"]
        result = lx.RESULTS.where(
            status == AMGXStatus.SUCCESS,
            lx.RESULTS.successful,
            lx.RESULTS.where(
                status == AMGXStatus.NOT_CONVERGED,
                lx.RESULTS.max_steps_reached,
                lx.RESULTS.breakdown,
            ),
        )
        stats = {
            "num_steps": jnp.asarray(info["iterations"]).astype(jnp.int32),
            "residual_norm": info["residual"],
        }
        return x, result, stats

    def transpose(self, state: Any, options: dict[str, Any]):
        return (_transposed(state[0]),), options

    def conj(self, state: Any, options: dict[str, Any]):
        return state, options  # real operators only

    def assume_full_rank(self) -> bool:
        return True
