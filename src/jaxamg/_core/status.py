"""Solve status codes, numerically equal to AmgX's AMGX_SOLVE_STATUS."""

from __future__ import annotations

import enum


class AMGXStatus(enum.IntEnum):
    """Outcome of a solve.

    * ``SUCCESS`` (0): the convergence test was met.
    * ``FAILED`` (1): the residual or the solution became NaN or infinite.
    * ``DIVERGED`` (2): the Krylov recurrence broke down (a division by a
      vanishing inner product) before convergence, or the monitored residual
      grew past ``rel_div_tolerance`` (default 1e6; <= 0 disables the test)
      times the initial one.
    * ``NOT_CONVERGED`` (3): ``max_iters`` was reached while monitoring.
    """

    SUCCESS = 0
    FAILED = 1
    DIVERGED = 2
    NOT_CONVERGED = 3

    def __str__(self) -> str:  # "AMGXStatus.SUCCESS", as JAX-AMG prints it
        return f"{type(self).__name__}.{self.name}"
