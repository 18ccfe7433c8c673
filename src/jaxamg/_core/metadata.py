"""Solver metadata attached to a matrix or an operator: `with_cache`.

Here, below the solve paths, because every path reads what it attaches and
``cache_mpi_metadata`` (in ``_dist``) uses it; the public module
:mod:`jaxamg.cache` re-exports it.
"""

from __future__ import annotations

from typing import Any

from .aggregation_modes import check_near_nullspace

__all__ = ["with_cache"]


def with_cache(
    A: Any,
    *,
    coloring: Any = None,
    mpi: Any = None,
    is_symmetric: bool = False,
    nullspace: Any = None,
    transpose_nullspace: Any = None,
    near_nullspace: Any = None,
) -> Any:
    """Attaches solver metadata to `A` in place and returns `A`.

    - `is_symmetric=True`: the adjoint solve of a gradient reuses the forward
      operator instead of solving with A^T. Setting it on a nonsymmetric
      matrix makes gradients silently wrong. `False` never clears the flag.
    - `coloring`, `mpi`, `nullspace`, `transpose_nullspace`: stored for the
      operator, MPI and null-space features.
    - `near_nullspace`: an (n, m) array of near-null-space vectors (e.g. the
      rigid-body modes) used by `jaxamg.solve` for smoothed aggregation when
      it is given none; validated here for shape, finiteness and rank.
    """
    updates = {}
    if coloring is not None:
        updates["_coloring_info"] = coloring
    if mpi is not None:
        updates["_mpi_cache"] = mpi
    if is_symmetric:
        updates["_is_symmetric"] = True
    if nullspace is not None:
        updates["_nullspace"] = nullspace
    if transpose_nullspace is not None:
        updates["_transpose_nullspace"] = transpose_nullspace
    if near_nullspace is not None:
        updates["_near_nullspace"] = _checked_near_nullspace(A, near_nullspace)
    for name, value in updates.items():
        try:
            setattr(A, name, value)
        except (AttributeError, TypeError) as e:
            raise TypeError(
                f"`jaxamg.with_cache`: cannot attach metadata to an object of type "
                f"{type(A).__name__} ({e}); wrap it in a BCSR matrix or a Python function."
            ) from None
    return A


def _checked_near_nullspace(A: Any, spec: Any) -> Any:
    """`spec` validated against `A`'s rows (when `A` has a shape), as given."""
    shape = getattr(A, "shape", None)
    if shape is not None and len(shape) == 2:
        check_near_nullspace(spec, int(shape[0]), who="`jaxamg.with_cache`")
    return spec
