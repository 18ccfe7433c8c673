"""Preconditioners for JAX's and lineax's Krylov solvers, built on
:func:`jaxamg.solve`.

``make_preconditioner(A)`` returns ``apply(r) ~= A^-1 r``: by default one
V-cycle of the classical AMG hierarchy that :func:`jaxamg.solve` uses as its
own preconditioner. Pass it as ``M`` to ``jax.scipy.sparse.linalg.cg``,
``bicgstab`` or ``gmres`` (it works under ``jax.jit`` and ``jax.vmap``).
``make_lineax_preconditioner(operator)`` wraps the same thing as a
``lineax.FunctionLinearOperator`` for ``options={"preconditioner": ...}``.

The engine keeps the AMG hierarchy in its solver cache and rebuilds it only
when the matrix values change, so repeated applications inside a Krylov loop
cost one cycle each, not one setup each.

Derivatives: an application goes through :func:`jaxamg.solve`, whose
derivative is that of the exact inverse ``A^-1`` (the preconditioner is
treated as exact). Differentiate the outer solve, not the preconditioner.
"""

from __future__ import annotations

import copy
from typing import Any

from . import sparsity
from ._core.checks import validate_with_engine
from ._core.config_rules import deep_merge
from ._core.matrix import is_concrete
from ._solve import solve
from .config import DEFAULT_CONFIG, prepare_config

__all__ = [
    "DEFAULT_PRECONDITIONER_CONFIG",
    "make_lineax_preconditioner",
    "make_preconditioner",
    "preconditioner_config",
]


def _classical_amg_block() -> dict:
    return copy.deepcopy(DEFAULT_CONFIG["solver"]["preconditioner"])


def _default_outer() -> dict:
    amg = _classical_amg_block()  # scope "amg", smoother scope "amg_smoother"
    amg.update(
        {
            "max_iters": 1,
            "convergence": "RELATIVE_INI",
            "tolerance": 1e-6,
            "norm": "L2",
            "exact_coarse_solve": 1,
            # An AMG solver reads no preconditioner; saying so explicitly
            # keeps solve's default AMG preconditioner block (and its scope
            # names) out of the tree.
            "preconditioner": "NOSOLVER",
        }
    )
    return amg


#: The default of :func:`make_preconditioner`: one V-cycle of classical AMG
#: (PMIS coarsening, distance-two interpolation, damped block-Jacobi
#: smoothing, dense LU on the coarsest level), as a nested config.
DEFAULT_PRECONDITIONER_CONFIG: dict[str, Any] = {"config_version": 2, "solver": _default_outer()}

# Keys of the default that only an AMG solver reads; dropped when the caller
# picks another solver, so that no stray AMG settings remain.
_AMG_ONLY = frozenset(_classical_amg_block()) - {"scope", "solver", "max_iters"} | {
    "exact_coarse_solve",
    "preconditioner",
}


def preconditioner_config(config: dict | None = None, **kwargs: Any) -> dict:
    """The nested config a preconditioner built by :func:`make_preconditioner`
    runs with: ``config`` and then ``kwargs`` merged over
    :data:`DEFAULT_PRECONDITIONER_CONFIG` by the rules of
    :func:`jaxamg.config.prepare_config`.

    * ``config`` may be flat (keys of the outer solver) or nested
      (``config_version`` or a dict ``solver``); top-level keys of a nested
      config are kept.
    * A dict value merges recursively, anything else replaces; ``kwargs``
      are merged last and win.
    * Naming an outer solver other than ``"AMG"`` (in ``config`` or
      ``kwargs``) drops the AMG-only defaults, so ``solver="JACOBI_L1"`` is
      one Jacobi sweep with no AMG keys around it; ``max_iters=1``,
      ``RELATIVE_INI``, the tolerance and the norm stay.
    """
    if isinstance(config, (str, bytes)):
        raise TypeError(
            "`make_preconditioner`: `config` must be a dict (flat, or nested with "
            "config_version 2), got a string; parse it first, e.g. `config=json.loads(text)`."
        )
    if config is not None and not isinstance(config, dict):
        raise TypeError(
            f"`make_preconditioner`: `config` must be a dict or None, got {type(config).__name__}."
        )
    user = copy.deepcopy(config or {})
    nested = "config_version" in user or isinstance(user.get("solver"), dict)
    top: dict = {}
    if nested and isinstance(user.get("solver"), dict):
        top = {k: v for k, v in user.items() if k not in ("solver", "config_version")}
        user_outer = user["solver"]
    else:
        user_outer = {k: v for k, v in user.items() if k != "config_version"}

    outer = _default_outer()
    named = kwargs.get("solver", user_outer.get("solver", "AMG"))
    if isinstance(named, str) and named != "AMG":
        for key in _AMG_ONLY:
            outer.pop(key, None)
        outer.pop("scope")
    merged = deep_merge(outer, user_outer)
    merged = deep_merge(merged, kwargs)
    version = user.get("config_version", 2)
    return {"config_version": version, **top, "solver": merged}


def make_preconditioner(
    A: Any,
    config: dict | None = None,
    *,
    comm: Any = None,
    nglobal: int | None = None,
    partition_info: Any = None,
    save_stats_file: Any = None,
    return_info: bool = False,
    **kwargs: Any,
):
    """A preconditioner ``apply(r) ~= A^-1 r`` for Krylov solvers.

    **Arguments:**

    - `A`: the matrix, in any form :func:`jaxamg.solve` accepts.
    - `config`, `**kwargs`: solver settings merged over the default, one
      V-cycle of classical AMG (see :func:`preconditioner_config`). For
      example ``cycle="W"``, ``presweeps=2``, or ``solver="JACOBI_L1"``.
    - `comm`, `nglobal`, `partition_info`, `save_stats_file`: forwarded to
      :func:`jaxamg.solve` on every application.
    - `return_info`: if true, ``apply`` returns ``(x, info)``. With AMG as the
      solver and ``max_iters=1`` the status is ``NOT_CONVERGED`` by AmgX's
      rules (one cycle rarely meets the tolerance); that is expected of a
      preconditioner.

    **Returns:** ``apply(r)``: ``x`` with the dtype of `r` (float inputs),
    usable as ``M`` in ``jax.scipy.sparse.linalg.cg``/``bicgstab``/``gmres``,
    under ``jax.jit`` and ``jax.vmap``. It is a linear map of ``r`` (a fixed
    number of cycles from a zero start). For CG, keep it symmetric: the
    default V-cycle with equal pre- and post-smoothing of a symmetric `A` is.
    """
    cfg = preconditioner_config(config, **kwargs)
    # Fail here, naming the key (unknown parameters and solver names
    # included), rather than inside the first Krylov step.
    validate_with_engine(prepare_config(cfg, mpi=comm is not None))
    if not isinstance(return_info, bool):
        raise TypeError(
            f"`make_preconditioner`: `return_info` must be True or False, got {return_info!r}; "
            "pass a bool."
        )

    def apply(r):
        x, info = solve(
            A,
            r,
            config=cfg,
            comm=comm,
            nglobal=nglobal,
            partition_info=partition_info,
            save_stats_file=save_stats_file,
        )
        dtype = getattr(r, "dtype", None)
        if dtype is not None and getattr(x, "dtype", dtype) != dtype and _is_float(dtype):
            x = x.astype(dtype)
        return (x, info) if return_info else x

    apply.config = cfg  # type: ignore[attr-defined]  # JAX-AMG's attribute: the config it runs
    return apply


def _is_float(dtype: Any) -> bool:
    import numpy as np

    try:
        return np.issubdtype(np.dtype(dtype), np.floating)
    except TypeError:
        return False


class _Inherit:
    def __repr__(self) -> str:
        return "<inherit>"


_INHERIT = _Inherit()


def _inherited_tags(lx: Any, operator: Any) -> frozenset:
    """The operator's tags that an approximate inverse shares: symmetry and
    (semi)definiteness. Structural tags (diagonal, triangular, tridiagonal,
    unit diagonal) describe A, not A^-1 or a cycle approximating it, and are
    not carried over."""
    tags = set()
    for tag, holds in (
        (lx.symmetric_tag, lx.is_symmetric),
        (lx.positive_semidefinite_tag, lx.is_positive_semidefinite),
        (lx.negative_semidefinite_tag, lx.is_negative_semidefinite),
    ):
        if holds(operator):
            tags.add(tag)
    return frozenset(tags)


def _vector_structure(structure: Any, which: str, where: str):
    import jax

    leaves = jax.tree_util.tree_leaves(structure)
    if (
        len(leaves) != 1
        or not isinstance(structure, jax.ShapeDtypeStruct)
        or len(structure.shape) != 1
    ):
        raise ValueError(
            f"`{where}`: the operator's {which} structure must be one 1-D "
            f"vector, got {structure}; wrap the operator so that it maps a flat vector to a "
            "flat vector (e.g. with jax.flatten_util.ravel_pytree)."
        )
    return structure


def _operator_matrix(lx: Any, operator: Any, n: int, dtype: Any, where: str):
    """The matrix `solve` receives for a lineax operator."""
    import jax.numpy as jnp
    import numpy as np
    import scipy.sparse as sp
    from jax.experimental import sparse as jsparse

    if isinstance(operator, lx.MatrixLinearOperator):
        matrix = operator.as_matrix()
        if not is_concrete(matrix):
            return matrix  # traced values: solve uses the dense pattern
        M = sp.csr_array(np.asarray(matrix))
        M.sort_indices()
        return jsparse.BCSR(
            (
                jnp.asarray(M.data, dtype=matrix.dtype),
                jnp.asarray(M.indices.astype(np.int32)),
                jnp.asarray(M.indptr.astype(np.int32)),
            ),
            shape=M.shape,
        )
    mv = operator.mv

    def fn(x):
        return mv(x.astype(dtype))

    # Detect and colour the pattern once, here (lineax runs the solve under
    # jit, where detection is impossible), then assemble the matrix with one
    # operator application per colour; never through as_matrix(), which
    # would apply the operator n times and store n^2 entries.
    sparsity.cache_coloring(fn, n)
    return sparsity.materialize_operator(fn, n, where=where)


def lineax_operator_matrix(lx: Any, operator: Any, where: str):
    """``(A, structure)`` for a square lineax operator on one 1-D vector: the
    sparse matrix (or, for traced matrix values, the dense one) that
    :func:`jaxamg.solve` receives, and the vector structure. Raises naming
    `where` for anything else."""
    if not isinstance(operator, lx.AbstractLinearOperator):
        raise TypeError(
            f"`{where}`: `operator` must be a lineax.AbstractLinearOperator, "
            f"got {type(operator).__name__}; wrap a matrix as lineax.MatrixLinearOperator(A), or "
            "use jaxamg.preconditioners.make_preconditioner(A) for JAX's solvers."
        )
    in_struct = _vector_structure(operator.in_structure(), "input", where)
    out_struct = _vector_structure(operator.out_structure(), "output", where)
    if in_struct.shape != out_struct.shape:
        raise ValueError(
            f"`{where}`: the operator must be square (an AMG solve approximates its "
            f"inverse), got input shape {in_struct.shape} and output shape "
            f"{out_struct.shape}; precondition or solve a square system such as the normal "
            "equations."
        )
    n = in_struct.shape[0]
    return _operator_matrix(lx, operator, n, in_struct.dtype, where), in_struct


def make_lineax_preconditioner(
    operator: Any,
    config: dict | None = None,
    *,
    tags: Any = _INHERIT,
    comm: Any = None,
    nglobal: int | None = None,
    partition_info: Any = None,
    save_stats_file: Any = None,
    **kwargs: Any,
):
    """A ``lineax.FunctionLinearOperator`` applying :func:`make_preconditioner`
    of `operator`, for ``lineax.linear_solve(..., options={"preconditioner": P})``.

    **Arguments:**

    - `operator`: a ``lineax.AbstractLinearOperator`` mapping one 1-D vector
      to one 1-D vector of the same length. A ``MatrixLinearOperator`` is
      converted to a sparse matrix once, here. Any other operator is
      assembled once, here, without ``as_matrix()``: its sparsity is detected
      and coloured (:mod:`jaxamg.sparsity`) and the matrix built with one
      application of ``operator.mv`` per colour. Build the preconditioner
      outside ``jax.jit``.
    - `config`, `**kwargs`, `comm`, `nglobal`, `partition_info`,
      `save_stats_file`: as for :func:`make_preconditioner`.
    - `tags`: the result's lineax tags. By default those of `operator` that
      an approximate inverse shares (symmetric, positive/negative
      semidefinite), so that ``lineax.CG`` accepts the preconditioner of a
      positive definite operator. Pass a tag, a tuple of tags or ``()`` to
      override.
    """
    try:
        import lineax as lx
    except ImportError as e:
        raise ImportError(
            "`make_lineax_preconditioner` needs lineax; install it with `pip install lineax` "
            "or the `lineax` extra, `pip install jaxamg-engine[lineax]`."
        ) from e
    A, in_struct = lineax_operator_matrix(lx, operator, "make_lineax_preconditioner")
    apply = make_preconditioner(
        A,
        config,
        comm=comm,
        nglobal=nglobal,
        partition_info=partition_info,
        save_stats_file=save_stats_file,
        **kwargs,
    )
    if tags is _INHERIT:
        tags = _inherited_tags(lx, operator)

    def fn(r):
        return apply(r).astype(in_struct.dtype)

    return lx.FunctionLinearOperator(fn, in_struct, tags=tags)
