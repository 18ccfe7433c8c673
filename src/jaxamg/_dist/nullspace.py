"""Singular systems in MPI mode: the declared null-space bases, row-distributed
like b, and the projections around the distributed solve.

Each rank holds its rows of a basis: ``(n_local, k)`` out of the global
``(nglobal, k)``; ``"constant"`` is the ones vector. The math is that of
:mod:`jaxamg.nullspace` (``b' = b - M (M^T M)^-1 M^T b``, ``x = solve(A,
b')``, ``x' = x - N (N^T N)^-1 N^T x``), with every sum over rows made
global by a reduction over the ranks (:mod:`jaxamg._dist.reduce`).

Checks run in two phases like the other MPI input checks:

1. :func:`local_bases` (inside the agreed local checks): shapes and kinds,
   so one rank's bad basis raises on every rank; the column counts go into
   the rank summary and must agree.
2. :func:`global_bases` (after agreement, collective on the host): the
   column rescaling by the global column maxima and the finite/independence
   validation on the global Gram matrix, identical on every rank.

Ordering of collectives inside the program: every reduction is one
collective, and :class:`_Sequenced` chains each to the previous one by a
real data dependence (:mod:`jaxamg._core.operand_order` says why nothing weaker
orders them) -- also the solve input to the reduction that measures
``rhs_inconsistency`` -- so that no two collectives are independent. In
reverse mode the backward collectives are chained by their data: the
projection of the x-cotangent feeds the adjoint solve, whose result feeds
the projections of the b-cotangent.
"""

from __future__ import annotations

from typing import Any

from .. import nullspace as ns
from .._core.operand_order import after
from ..nullspace import as_nullspace_basis, declared_specs, project_out, relative_norm  # noqa: F401 (declared_specs: re-exported, _dist/validate.py imports it from here)
from .reduce import host_max, host_sum, tree_sum

NAMES = ("nullspace", "transpose_nullspace")


def local_bases(specs: dict, n_local: int, nglobal: int, dtype: Any) -> dict:
    """Phase 1 (this rank only): the shape and kind checks; returns the
    column count of each declared basis (None when not declared)."""
    columns = {}
    for name in NAMES:
        basis = as_nullspace_basis(specs[name], n_local, dtype, name, k_max=nglobal)
        columns[name] = None if basis is None else int(basis.shape[1])
    return columns


def global_bases(
    comm: Any,
    specs: dict,
    n_local: int,
    nglobal: int,
    dtype: Any,
    symmetric: bool,
    stacklevel: int = 4,
):
    """Phase 2 (collective, every rank): the bases as ``(n_local, k)`` arrays
    (or None), rescaled and validated globally; warns as the single-process
    solve does about a missing basis."""
    bases = {}
    for name in NAMES:
        basis = ns.as_nullspace_basis(
            specs[name], n_local, dtype, name, k_max=nglobal, column_max=host_max(comm)
        )
        ns.validate_basis(basis, name, reduce=host_sum(comm))
        bases[name] = basis
    if not symmetric:
        for given, missing in (
            ("nullspace", "transpose_nullspace"),
            ("transpose_nullspace", "nullspace"),
        ):
            if bases[given] is not None and bases[missing] is None:
                ns.warn_missing_basis(given, stacklevel=stacklevel)
    return bases["nullspace"], bases["transpose_nullspace"]


class _Sequenced:
    """An in-program reduction hook whose collectives form one chain: each
    call's input waits for the previous call's output."""

    def __init__(self, comm: int):
        self._sum = tree_sum(comm)
        self._last = None

    def after(self, value):
        """`value` (an array or a tuple of arrays), recomputed from the last
        collective's result (:func:`jaxamg._core.operand_order.after`) so that
        whatever reads it runs after that collective."""
        if self._last is None:
            return value
        return after(value, self._last)

    def __call__(self, parts):
        out = self._sum(self.after(tuple(parts)))
        self._last = out
        return out


def singular_solve(solve, b, null_basis, transpose_basis, comm: int):
    """``solve(b_range) -> (x, stats)`` wrapped in the projections: returns
    (x', stats, rhs_inconsistency or None). `solve` is the distributed
    differentiable core; the projections are JAX operations (reverse mode
    transposes them into the projections of the adjoint)."""
    reduce = _Sequenced(comm)
    inconsistency = None
    b_range = b
    if transpose_basis is not None:
        b_range = project_out(b, transpose_basis, reduce=reduce)
        inconsistency = relative_norm(b - b_range, b, reduce=reduce)
        b_range = reduce.after(b_range)  # the solve waits for the last reduction
    x, stats = solve(b_range)
    if null_basis is not None:
        x = project_out(x, null_basis, reduce=reduce)
    return x, stats, inconsistency
