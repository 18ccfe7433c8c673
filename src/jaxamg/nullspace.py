"""Singular systems: null-space bases, the projections around a solve, and the
checks behind :class:`NullSpaceWarning`.

Let ``N`` span ``null(A)`` and ``M`` span ``null(A^T)``. A solve with declared
bases computes, as ordinary JAX operations around the differentiable core::

    b' = b - M (M^T M)^-1 M^T b      (drop the part of b outside range(A))
    x  = core(A, b')
    x' = x - N (N^T N)^-1 N^T x      (pin the solution: N^T x' = 0)

so it returns the pseudo-inverse solution ``A^+ b`` (the least-squares
solution of minimum norm when ``b`` is inconsistent). JAX transposes these
lines for reverse mode: the cotangent is projected with ``N`` before the
adjoint solve and the result with ``M`` after it, which is ``(A^T)^+ g``.
For a nonsymmetric matrix the two spaces differ; a volume-normalised
finite-volume Laplacian ``A = D^-1 L`` has ``null(A) = span(1)`` and
``null(A^T) = span(V)`` (:func:`jaxamg.matrices.poisson_matrix_stretched`).

A basis is ``"constant"``, a vector of length ``n`` or an ``(n, k)`` array
with ``1 <= k <= n``; :func:`as_nullspace_basis` turns each into ``(n, k)``
and :func:`validate_basis` rejects non-finite values and dependent columns.

In MPI mode every rank holds its rows of a basis; the functions that need
sums over all rows (the Gram matrix ``B^T B``, the inner products ``B^T v``,
norms, the column maxima of the rescaling) take a reduction hook, ``reduce``
(or ``column_max``), that sums (or takes the maximum) over the ranks. Without
a hook they work on the whole basis of one process.

The checks that warn (:class:`NullSpaceWarning`) look at concrete values only
(never at traced ones), each at most once per matrix buffer and basis:

* ``A 1 = 0`` to round-off while no ``nullspace`` is declared;
* one basis declared without the other on a matrix not marked symmetric
  (``with_cache(A, is_symmetric=True)``);
* a basis that does not span a null space:
  ``|A N|_inf > sqrt(eps) |A|_inf max|N|`` (and the same with ``A^T``, ``M``);
* ``DENSE_LU_SOLVER`` configured as the coarse solver of a singular system.
"""

from __future__ import annotations

import threading
import warnings
import weakref
from typing import Any

import numpy as np

from ._core import host_math
from ._core.matrix import compiled_for, on_accelerator

__all__ = [
    "NullSpaceWarning",
    "as_nullspace_basis",
    "validate_basis",
    "project_out",
    "relative_norm",
    "warn_if_singular",
    "verify_nullspace",
    "warn_missing_basis",
]


class NullSpaceWarning(UserWarning):
    """A null-space problem in :func:`jaxamg.solve`: a singular matrix without
    a declared ``nullspace``, a ``nullspace`` without ``transpose_nullspace``
    (or the reverse) on a matrix not marked symmetric, a basis that does not
    span the null space, or a ``DENSE_LU_SOLVER`` coarse solve on a singular
    system."""


_NAMES = ("nullspace", "transpose_nullspace")


def _is_traced(*arrays: Any) -> bool:
    import jax

    return any(isinstance(a, jax.core.Tracer) for a in arrays)


def _eps(*dtypes: Any) -> float:
    """The largest machine epsilon among the floating dtypes given (the
    coarsest precision limits what round-off can be told apart from)."""
    values = [float(np.finfo(d).eps) for d in dtypes if np.dtype(d).kind == "f"]
    return max(values) if values else float(np.finfo(np.float32).eps)


# --------------------------------------------------------------------------
# Bases


def _column_scale_exponents(largest: np.ndarray, dtype: Any) -> np.ndarray:
    """Powers of two that bring extreme columns into a safe range for the
    Gram matrix (zero where a column is left as it is).

    ``B^T B`` sums up to 2^40 products of entries no larger than ``m``; it
    stays finite for ``m <= 2^((maxexp - 40) / 2)`` and its diagonal stays
    normal for ``m >= 2^(minexp / 2)``. The projections do not change when a
    column is scaled, so only the conditioning of the arithmetic does.
    """
    info = np.finfo(dtype)
    upper = (int(info.maxexp) - 40) // 2
    lower = int(info.minexp) // 2 + 1
    _, exponent = np.frexp(largest)
    extreme = np.isfinite(largest) & (largest > 0) & ((exponent > upper) | (exponent < lower))
    return np.where(extreme, exponent, 0).astype(np.int32)


def as_nullspace_basis(
    spec: Any,
    n: int,
    dtype: Any,
    name: str = "nullspace",
    *,
    k_max: int | None = None,
    column_max: Any = None,
):
    """The basis ``spec`` as an ``(n, k)`` array of ``dtype``, or None.

    ``spec`` is None, ``"constant"`` (the vector of ones), a vector of length
    ``n`` (one column) or an ``(n, k)`` array with ``1 <= k <= k_max``
    (``k_max = n`` by default; in MPI mode ``n`` is this rank's rows and
    ``k_max`` the global count). Anything else raises ValueError naming
    ``name``. A concrete basis is returned as a NumPy-backed constant (it
    stays concrete when the solve is traced), with columns whose magnitude
    would overflow or underflow the Gram matrix rescaled by a power of two; a
    traced basis is only cast. ``column_max`` (MPI mode) maps this rank's
    per-column maxima to the global ones, so every rank scales a column
    alike; it is a collective, called for every concrete basis.
    """
    import jax.numpy as jnp

    if spec is None:
        return None
    if isinstance(spec, str):
        if spec.lower() != "constant":
            raise ValueError(
                f"`{name}` must be 'constant', a vector of length {n} or an ({n}, k) array, "
                f"got the string {spec!r}; pass {name}='constant' for the constant vector."
            )
        return jnp.asarray(np.ones((n, 1), dtype=dtype))
    traced = _is_traced(spec)
    if not traced and not hasattr(spec, "shape"):
        try:
            spec = np.asarray(spec)
        except (TypeError, ValueError) as e:
            raise ValueError(
                f"`{name}` must be 'constant' or an array, got {type(spec).__name__} ({e})."
            ) from None
    given = shape = tuple(spec.shape)
    kind = np.dtype(spec.dtype).kind
    if kind not in "fiub":
        raise ValueError(
            f"`{name}` must have a real numeric dtype, got {np.dtype(spec.dtype)}; "
            "pass real basis vectors (split a complex null space into real and imaginary parts)."
        )
    if len(shape) == 1:
        shape = (shape[0], 1)
        spec = spec.reshape(shape)
    limit = n if k_max is None else k_max
    if len(shape) != 2 or shape[0] != n or not 1 <= shape[1] <= limit:
        raise ValueError(
            f"`{name}` must be a vector of length {n} or an ({n}, k) array with 1 <= k <= {limit} "
            f"(one row per row of A, one column per null vector), got shape {given}."
        )
    if traced:
        return spec.astype(dtype)
    raw = np.asarray(spec)
    if raw.dtype.kind != "f":
        raw = raw.astype(np.float64)
    finite = bool(np.isfinite(raw).all())
    largest = np.max(np.abs(raw), axis=0, initial=0.0)
    if column_max is not None:
        largest = column_max(largest)
    if finite:  # rescale before the cast, which could overflow
        shift = _column_scale_exponents(largest, dtype)
        if shift.any():
            raw = np.ldexp(raw, -shift[None, :])
    return jnp.asarray(raw.astype(dtype))


def validate_basis(basis: Any, name: str = "nullspace", reduce: Any = None) -> None:
    """Raises ValueError unless a concrete ``(n, k)`` basis is finite with
    linearly independent columns (judged on the ``k x k`` Gram matrix of the
    columns scaled to unit length); does nothing for a traced basis.

    ``reduce`` (MPI mode: a host hook summing a tuple of NumPy arrays over the
    ranks, identically on each) makes the counts, norms and Gram matrix
    global, so every rank reaches the same verdict."""
    if basis is None or _is_traced(basis):
        return
    B = np.asarray(basis)
    finite = np.isfinite(B)
    bad = int(np.size(B) - np.count_nonzero(finite))
    B = np.where(finite, B, 0).astype(np.float64)
    squares = np.sum(B * B, axis=0)
    if reduce is not None:
        count, squares = reduce((np.asarray(float(bad)), squares))
        bad = int(count)
    if bad:
        raise ValueError(
            f"`{name}` must be finite, but {bad} of its entries are NaN or infinite; "
            "pass finite basis vectors."
        )
    norms = np.sqrt(squares)
    if np.any(norms == 0):
        column = int(np.flatnonzero(norms == 0)[0])
        raise ValueError(
            f"`{name}` has linearly dependent columns: column {column} is zero; "
            "pass independent columns (drop the zero one)."
        )
    unit = B / norms
    gram = host_math.gram(unit)  # not BLAS: see host_math
    if reduce is not None:
        (gram,) = reduce((gram,))
    eigenvalues = np.linalg.eigvalsh(gram)
    threshold = 1e3 * _eps(np.asarray(basis).dtype) * eigenvalues[-1]
    if eigenvalues[0] <= threshold:
        raise ValueError(
            f"`{name}` has linearly dependent columns: the smallest eigenvalue of the Gram "
            f"matrix of its unit columns is {eigenvalues[0]:.3e} (largest {eigenvalues[-1]:.3e}); "
            "pass a basis of independent columns, e.g. orthonormalise it with numpy.linalg.qr "
            "and keep the columns with nonzero diagonal in R."
        )


def project_out(v: Any, basis: Any, reduce: Any = None):
    """``v - B (B^T B)^-1 B^T v``: ``v`` without its component in the span of
    the ``(n, k)`` basis ``B`` (works on a batch ``v`` of shape ``(..., n)``).

    ``reduce`` (MPI mode, where ``v`` and ``B`` hold this rank's rows) sums
    the tuple ``(B^T v, B^T B)`` over the ranks in one collective."""
    import jax.numpy as jnp

    B = jnp.asarray(basis, dtype=v.dtype)
    coefficients = v @ B  # (..., k) = B^T v
    gram = B.T @ B
    if reduce is not None:
        coefficients, gram = reduce((coefficients, gram))
    if B.shape[1] == 1:
        return v - (coefficients / gram[0, 0]) * B[:, 0]
    flat = coefficients.reshape(-1, B.shape[1])
    weights = jnp.linalg.solve(gram, flat.T).T.reshape(coefficients.shape)
    return v - weights @ B.T


def relative_norm(d: Any, v: Any, reduce: Any = None):
    """``|d| / |v|`` (2-norms over the last axis), and 0 where ``v = 0``.
    ``reduce`` (MPI mode) sums both squared norms over the ranks in one
    collective."""
    import jax.numpy as jnp

    num = jnp.sum(d * d, axis=-1)
    den = jnp.sum(v * v, axis=-1)
    if reduce is not None:
        num, den = reduce((num, den))
    nonzero = den > 0
    return jnp.where(nonzero, jnp.sqrt(num / jnp.where(nonzero, den, 1)), 0)


# --------------------------------------------------------------------------
# Warnings


class _Memo:
    """Values keyed by the identity of live objects; an entry disappears with
    any of its objects (so a recycled id never hits a stale entry)."""

    def __init__(self) -> None:
        self._data: dict[tuple, Any] = {}
        self._lock = threading.Lock()

    @staticmethod
    def _key(parts: tuple) -> tuple:
        return tuple(p if isinstance(p, (str, type(None))) else id(p) for p in parts)

    def get(self, *parts: Any) -> Any:
        with self._lock:
            return self._data.get(self._key(parts))

    def put(self, value: Any, *parts: Any) -> None:
        key = self._key(parts)
        try:
            for p in parts:
                if not isinstance(p, (str, type(None))):
                    weakref.finalize(p, self._data.pop, key, None)
        except TypeError:  # not weak-referenceable: do not remember
            return
        with self._lock:
            self._data[key] = value


_singular_memo = _Memo()
_verified_memo = _Memo()


def _row_structure(indptr: Any) -> np.ndarray:
    indptr = np.asarray(indptr, dtype=np.int64)
    return np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))


def _row_sum_extremes(indptr: Any, data: Any) -> Any:
    """(max |row sum|, max absolute row sum), accumulated in float64 when
    enabled."""
    import jax
    import jax.numpy as jnp

    n = indptr.shape[0] - 1
    x64 = jax.config.jax_enable_x64  # type: ignore[attr-defined]
    acc = jnp.float64 if x64 else jnp.float32
    rows = jnp.repeat(jnp.arange(n), jnp.diff(indptr), total_repeat_length=data.shape[0])
    values = data.astype(acc)
    sums = jax.ops.segment_sum(values, rows, num_segments=n)
    absolute = jax.ops.segment_sum(jnp.abs(values), rows, num_segments=n)
    return jnp.max(jnp.abs(sums), initial=0.0), jnp.max(absolute, initial=0.0)


def _row_sum_extremes_on_device(indptr: Any, data: Any, n: int) -> tuple[float, float]:
    """(max |row sum|, max absolute row sum) of concrete JAX arrays, computed
    where the arrays live: a GPU matrix's values are not copied to the host
    (a 256^3 Poisson matrix's would be ~1 GB) only to return two numbers.

    The check may run while the caller traces (a concrete matrix closed over
    by a jitted function): a compiled executable runs now, on the arrays'
    device, instead of being staged into that trace."""
    residual, largest = compiled_for(_row_sum_extremes, indptr, data)(indptr, data)
    return float(residual), float(largest)


def warn_if_singular(
    indptr: Any, data: Any, n: int, buffer: Any = None, stacklevel: int = 3
) -> None:
    """Warns when ``A 1 = 0`` to round-off (``max|row sum| <= 100 eps max
    absolute row sum``): the matrix is singular and no ``nullspace`` was
    declared. Concrete values only; checked and reported once per ``buffer``
    (the matrix's value array, ``data`` by default)."""
    if _is_traced(indptr, data) or n == 0:
        return
    key = data if buffer is None else buffer
    if _singular_memo.get(key) is not None:
        return

    if on_accelerator(indptr, data):
        residual, largest = _row_sum_extremes_on_device(indptr, data, n)
    else:
        values = np.asarray(data)
        rows = _row_structure(indptr)
        sums = np.bincount(rows, weights=values.astype(np.float64), minlength=n)
        absolute = np.bincount(rows, weights=np.abs(values).astype(np.float64), minlength=n)
        largest = float(np.max(absolute, initial=0.0))
        residual = float(np.max(np.abs(sums), initial=0.0))
    singular = largest > 0 and residual <= 100 * _eps(data.dtype) * largest
    _singular_memo.put(singular, key)
    if singular:
        warnings.warn(
            f"`jaxamg.solve`: A·1 = 0 to round-off (largest row sum {residual:.2e}, largest "
            f"absolute row sum {largest:.2e}): the matrix is singular and no `nullspace` is "
            "declared, so the solution's constant component is arbitrary and gradients may "
            "fail to converge. Pass nullspace='constant' (and transpose_nullspace for a "
            "nonsymmetric A), or attach them with jaxamg.with_cache.",
            NullSpaceWarning,
            stacklevel=stacklevel,
        )


def verify_nullspace(
    indptr: Any,
    indices: Any,
    data: Any,
    basis: Any,
    name: str,
    *,
    buffer: Any = None,
    basis_key: Any = None,
    dtype: Any = None,
    stacklevel: int = 3,
) -> None:
    """Warns unless ``basis`` spans a null space: for ``name="nullspace"``,
    ``|A B|_inf <= sqrt(eps) |A|_inf max|B|``; for ``"transpose_nullspace"``
    the same with ``A^T``. ``eps`` is that of the coarsest of the matrix's,
    the basis's and ``dtype``'s precision. Concrete values only; checked and
    reported once per (``buffer``, ``basis_key``, ``name``)."""
    if _is_traced(indptr, indices, data, basis):
        return
    key = (data if buffer is None else buffer, basis if basis_key is None else basis_key, name)
    if _verified_memo.get(*key) is not None:
        return
    import scipy.sparse as sp

    values = np.asarray(data)
    indptr = np.asarray(indptr)
    n = indptr.shape[0] - 1
    A = sp.csr_matrix((values.astype(np.float64), np.asarray(indices), indptr), shape=(n, n))
    B = np.asarray(basis)
    transpose = name == "transpose_nullspace"
    op = A.T.tocsr() if transpose else A
    norm = float(np.max(np.asarray(abs(op).sum(axis=1)), initial=0.0))
    scale = norm * float(np.max(np.abs(B), initial=0.0))
    residual = float(np.max(np.abs(op @ B.astype(np.float64)), initial=0.0))
    ratio = residual / scale if scale > 0 else 0.0
    tolerance = float(np.sqrt(_eps(values.dtype, B.dtype, *(() if dtype is None else (dtype,)))))
    bad = ratio > tolerance
    _verified_memo.put(bad, *key)
    if bad:
        target = "A^T" if transpose else "A"
        warnings.warn(
            f"`jaxamg.solve`: `{name}` does not span a null space of {target}: "
            f"|{target}·B|_inf / (|{target}|_inf max|B|) = {ratio:.2e} > {tolerance:.1e}. "
            f"Pass vectors with {target}·v = 0"
            + (
                " (for A = D^-1 L, the cell volumes)"
                if transpose
                else " (the constant vector for a pure-Neumann Laplacian)"
            )
            + ".",
            NullSpaceWarning,
            stacklevel=stacklevel,
        )


def warn_missing_basis(given: str, stacklevel: int = 3) -> None:
    """Warns that one basis was declared without the other on a matrix not
    marked symmetric (``given`` is the declared argument's name)."""
    if given == "nullspace":
        consequence = (
            "b is not projected onto range(A) (an inconsistent b is not solved in the "
            "least-squares sense) and the gradient with respect to b keeps a component in "
            "null(A^T)"
        )
        missing = "transpose_nullspace"
    else:
        consequence = (
            "the solution is not pinned (its null(A) component is whatever the solver "
            "returns) and the adjoint right-hand side is not projected"
        )
        missing = "nullspace"
    warnings.warn(
        f"`jaxamg.solve`: `{given}` is declared without `{missing}` on a matrix not marked "
        f"symmetric: {consequence}. Pass `{missing}` too, or mark A symmetric with "
        "jaxamg.with_cache(A, is_symmetric=True) so that one basis serves for both.",
        NullSpaceWarning,
        stacklevel=stacklevel,
    )


def declared_specs(
    nullspace: Any, transpose_nullspace: Any, owners: tuple, symmetric: bool
) -> dict:
    """The two specs after the ``with_cache`` defaults of `owners` and the
    symmetric fill-in (shared by the single-process and the MPI solves)."""
    specs = {"nullspace": nullspace, "transpose_nullspace": transpose_nullspace}
    for name in _NAMES:
        if specs[name] is None:
            for owner in owners:
                cached = getattr(owner, f"_{name}", None)
                if cached is not None:
                    specs[name] = cached
                    break
    if symmetric:
        if specs["nullspace"] is None:
            specs["nullspace"] = specs["transpose_nullspace"]
        if specs["transpose_nullspace"] is None:
            specs["transpose_nullspace"] = specs["nullspace"]
    return specs
