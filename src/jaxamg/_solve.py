"""`jaxamg.solve`, the front door: x = A^-1 b through the native engine.

The one place that picks the path a call takes:

* distributed input (``comm``, ``nglobal``, ``partition_info``, or a matrix
  carrying cached MPI metadata): :mod:`jaxamg._dist.solve`, each rank with
  its block of rows;
* anything else: :mod:`jaxamg._single.solve`, on this process.

The sharded interface (a :class:`jaxamg.ShardedMatrix` with a row-sharded
``jax.Array``) is compiled once for a mesh by
:func:`jaxamg.make_sharded_solver` and called like a function
(:mod:`jaxamg._sharded.solver`); ``solve`` refuses a ``ShardedMatrix`` and
names that entry point.

Each path imports from below only (``_core``, ``_operators``, the public
``cache``, ``config``, ``nullspace`` and ``sparsity``; ``_sharded`` also
``_dist``); nothing below imports this module (``tools/check_imports.py``
checks both).
"""

from __future__ import annotations

from typing import Any

from ._core.linear_solve import AdjointConvergenceWarning
from ._dist.solve import solve_mpi
from ._sharded.matrix import ShardedMatrix
from ._single.solve import solve_single

# solve() documents it (defined with the core that warns).
__all__ = ["AdjointConvergenceWarning", "solve"]


def solve(
    A: Any,
    b: Any,
    x0: Any = None,
    config: dict | str | None = None,
    block_dim: int = 1,
    comm: Any = None,
    nglobal: int | None = None,
    partition_info: Any = None,
    save_stats_file: Any = None,
    reuse_setup: bool = False,
    nullspace: Any = None,
    transpose_nullspace: Any = None,
    near_nullspace: Any = None,
    **kwargs: Any,
):
    """Solves ``A x = b`` with the jaxamg engine; returns ``(x, info)``.

    **Arguments:**

    - `A`: a `jax.experimental.sparse` BCSR or BCOO matrix, a SciPy sparse
      matrix (csr, csc, coo, bsr, lil, dok) or a dense 2-D array.
    - `b`: the right-hand side, a vector with one entry per row of `A`.
    - `x0`: an optional initial guess (same shape as `b`). It changes the
      iteration count only; its gradient is zero.
    - `config`: an AmgX-style config dict (flat or nested), or a shipped
      config's name; merged over the default (PBICGSTAB preconditioned by
      classical AMG), see :mod:`jaxamg.config`. ``"auto"`` picks a tuned
      config from the matrix and the call (``info["config_choice"]`` says
      which). `**kwargs` override keys of the outer solver.
    - `save_stats_file`: write AmgX-layout grid and iteration statistics to
      this path (direct calls only, not under a transformation).
    - `reuse_setup`: on a cache hit with new values, keep the hierarchy and
      only swap the fine matrix values (cheaper, may converge slower).
    - `comm`, `nglobal`, `partition_info`: MPI mode. `A` is this rank's
      block of rows ``partition_info=(row_start, row_end)`` with global
      column indices, `b` its slice; `comm` an mpi4py communicator. Every
      rank calls solve; see docs/mpi.md and :mod:`jaxamg.mpi_utils`.
    - `nullspace`, `transpose_nullspace`: for a singular `A`, bases N of
      null(A) and M of null(A^T): ``"constant"``, a vector, or an ``(n, k)``
      array (defaults: those attached with :func:`jaxamg.with_cache`; on a
      matrix marked symmetric a missing one is the other). The solve returns
      the pseudo-inverse solution ``A^+ b``: ``b`` is projected onto range(A)
      (``info["rhs_inconsistency"]`` = removed fraction ``|b - b'|/|b|``) and
      the solution is made orthogonal to N; `jax.grad` gives
      ``(A^T)^+ g``. Matrix-value gradients assume perturbations that keep
      both null spaces. See :mod:`jaxamg.nullspace`.
    - `near_nullspace`: an ``(n, m)`` array of near-null-space vectors (e.g.
      :func:`jaxamg.rigid_body_modes` of elasticity, with ``block_dim`` the
      dimension) for smoothed aggregation: the config needs an AMG scope with
      ``"algorithm": "AGGREGATION"``, ``"selector": "x_STANDARD"`` and
      ``"x_smoothed_aggregation": 2`` (default: the array attached with
      :func:`jaxamg.with_cache`). A constant of the solve: no gradient. CPU only.

    **Returns:** `x` (the dtype rule: float64 if `A` or `b` is float64, else
    float32) and `info`: `iterations`, `residual`, `status`
    (:class:`jaxamg.AMGXStatus`), `residual_history` (a `jax.Array`: trimmed
    to `iterations + 1` entries when called directly, NaN-padded to
    `max_iters + 1` entries under a transformation), and `setup_on_device`,
    `solve_on_device` (where the hierarchy was built and the solve ran: True
    on a GPU where the device path covers the config; a direct call on a GPU
    that ran either on the host adds `setup_reason` or `host_reason`).

    Non-convergence is data, not an exception: check `info["status"]`.
    Gradients: `jax.grad`, `jax.jvp` and `jax.vmap` work through the solve;
    an adjoint solve that fails to converge emits an
    :class:`AdjointConvergenceWarning` (set `JAXAMG_ADJOINT_FAILURE=raise` to
    raise instead).
    """
    if isinstance(A, ShardedMatrix):
        raise TypeError(
            "`jaxamg.solve`: `A` is a ShardedMatrix; solve it with the solver that "
            "jaxamg.make_sharded_solver(A, ...) returns."
        )
    if (
        comm is not None
        or nglobal is not None
        or partition_info is not None
        or getattr(A, "_mpi_cache", None) is not None
    ):
        if near_nullspace is not None:
            raise NotImplementedError(
                "`jaxamg.solve`: `near_nullspace` is not available with the MPI interface; "
                "solve on one process or drop near_nullspace."
            )
        return solve_mpi(
            A,
            b,
            x0=x0,
            config=config,
            block_dim=block_dim,
            comm=comm,
            nglobal=nglobal,
            partition_info=partition_info,
            save_stats_file=save_stats_file,
            reuse_setup=reuse_setup,
            nullspace=nullspace,
            transpose_nullspace=transpose_nullspace,
            **kwargs,
        )
    return solve_single(
        A,
        b,
        x0=x0,
        config=config,
        block_dim=block_dim,
        save_stats_file=save_stats_file,
        reuse_setup=reuse_setup,
        nullspace=nullspace,
        transpose_nullspace=transpose_nullspace,
        near_nullspace=near_nullspace,
        **kwargs,
    )
