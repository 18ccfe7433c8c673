"""`jaxamg.solve`: x = A^-1 b through the native engine, differentiable.

This module checks and prepares the input (matrix, right-hand side, guess,
configuration, null spaces), runs the differentiable core
(:func:`jaxamg._linear_solve.linear_solve`, a ``custom_linear_solve`` over
native calls, which says how every derivative is derived) and turns its
statistics into `info`.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

import numpy as np

from . import _ffi
# Re-exported: solve() documents it (defined with the core that warns).
from ._linear_solve import AdjointConvergenceWarning as AdjointConvergenceWarning
from ._linear_solve import _Static, linear_solve
from ._matrix import (
    CsrInput,
    as_csr,
    compiled_for,
    is_concrete,
    on_accelerator,
    structure_fingerprint,
)
from ._status import AMGXStatus


def _preferred_dtype(data: Any, b: Any):
    """float64 if A or b is float64 (and x64 is on), else float32."""
    import jax.numpy as jnp

    def is64(x):
        return np.dtype(getattr(x, "dtype", np.float32)) == np.float64

    if (is64(data) or is64(b)) and jnp.zeros((), jnp.float64).dtype == np.float64:
        return jnp.float64
    return jnp.float32


@functools.lru_cache(maxsize=32)
def _device_structure(fingerprint: tuple[int, int], indptr_bytes: bytes, indices_bytes: bytes):
    """Device copies of a concrete structure, made once per structure."""
    import jax.numpy as jnp

    import jax

    indptr = np.frombuffer(indptr_bytes, dtype=np.int32)
    indices = np.frombuffer(indices_bytes, dtype=np.int32)
    rows = np.repeat(np.arange(indptr.shape[0] - 1, dtype=np.int32), np.diff(indptr))
    # The first call may come from inside a trace (jit, a Krylov loop): the
    # memoised arrays must be concrete, never that trace's tracers.
    with jax.ensure_compile_time_eval():
        return jnp.asarray(indptr), jnp.asarray(indices), jnp.asarray(rows)


def _rows_of(indptr: Any, indices: Any):
    import jax.numpy as jnp

    n = indptr.shape[0] - 1
    return jnp.repeat(jnp.arange(n, dtype=jnp.int32), jnp.diff(indptr),
                      total_repeat_length=indices.shape[0])


def _rows_on_device(indptr: Any, indices: Any):
    """The row of every stored entry, computed where the structure lives."""
    return compiled_for(_rows_of, indptr, indices)(indptr, indices)


def structure_arrays(csr: CsrInput, fingerprint: tuple[int, int]):
    """(indptr, indices, rows) as arrays for the jitted core."""
    import jax.numpy as jnp

    if fingerprint != (0, 0):
        resident = on_accelerator(csr.indptr, csr.indices)
        # Arrays already on a GPU are committed to it: memoised per device.
        # The host-made copies are uncommitted and follow the values anywhere.
        key = (fingerprint, tuple(sorted(str(d) for d in csr.indices.devices()))) \
            if resident else fingerprint
        cached = _structure_memo.get(key)
        if cached is None:
            if resident:
                # Already on its device: no host round trip, rows made there.
                cached = (csr.indptr, csr.indices, _rows_on_device(csr.indptr, csr.indices))
            else:
                cached = _device_structure(
                    fingerprint,
                    np.ascontiguousarray(csr.indptr, dtype=np.int32).tobytes(),
                    np.ascontiguousarray(csr.indices, dtype=np.int32).tobytes(),
                )
            with _structure_memo_lock:  # solves may run in several threads
                _structure_memo[key] = cached
                while len(_structure_memo) > 32:
                    _structure_memo.pop(next(iter(_structure_memo)))
        return cached
    n = csr.n_rows
    rows = jnp.repeat(
        jnp.arange(n, dtype=jnp.int32), jnp.diff(csr.indptr), total_repeat_length=csr.nnz
    )
    return csr.indptr, csr.indices, rows


_structure_memo: dict = {}
_structure_memo_lock = threading.Lock()
# The engine's statistics text is one process-wide buffer: solves that write
# a stats file take it in turn, so that no thread takes (or drops) another's.
_stats_lock = threading.Lock()


def make_info(stats, history_len: int) -> dict:
    """`info` from the stats vector: Python scalars when concrete, arrays when traced."""
    if not is_concrete(stats):
        return {
            "iterations": stats[..., 0],
            "residual": stats[..., 1],
            "status": stats[..., 2],
            "residual_history": stats[..., 3:],
        }
    s = np.asarray(stats)
    if s.ndim > 1:  # a batch computed eagerly: keep arrays
        return {
            "iterations": s[..., 0].astype(int),
            "residual": s[..., 1],
            "status": s[..., 2].astype(int),
            "residual_history": s[..., 3:],
        }
    iterations = int(s[0])
    history = s[3 : 3 + iterations + 1]
    history = history[~np.isnan(history)]
    return {
        "iterations": iterations,
        "residual": float(s[1]),
        "status": AMGXStatus(int(s[2])),
        "residual_history": [float(v) for v in history],
    }


def _to_runtime_error(e: Exception) -> Exception:
    """An engine error raised through XLA, re-raised as a Python error."""
    text = str(e)
    for prefix, kind in (
        ("INVALID_ARGUMENT: ", ValueError),
        ("UNIMPLEMENTED: ", NotImplementedError),
        ("INTERNAL: ", RuntimeError),
    ):
        if prefix in text:
            message = text.split(prefix, 1)[1].split("\n")[0]
            return kind(f"jaxamg.solve: {message}")
    return RuntimeError(f"jaxamg.solve: {text}")


def _check_vector(name: str, v: Any, n: int) -> None:
    shape = tuple(getattr(v, "shape", ()))
    if len(shape) != 1:
        raise ValueError(
            f"`jaxamg.solve`: `{name}` must be a 1-D vector of length {n}, got shape {shape}; "
            "use jax.vmap for several right-hand sides."
        )
    if shape[0] != n:
        raise ValueError(
            f"`jaxamg.solve`: `{name}` has {shape[0]} entries but `A` has {n} rows; "
            "pass one entry per row."
        )


def _check_dtype(name: str, dtype: Any) -> None:
    kind = np.dtype(dtype).kind
    if kind == "c":
        raise TypeError(
            f"`jaxamg.solve`: `{name}` is complex ({np.dtype(dtype)}); complex systems are not "
            "supported. Solve the real 2x2 block form instead."
        )
    if kind not in "fiub":
        raise TypeError(
            f"`jaxamg.solve`: `{name}` has unsupported dtype {np.dtype(dtype)}; pass a "
            "numeric (float, int or bool) array."
        )


def solve(
    A: Any,
    b: Any,
    x0: Any = None,
    config: dict | None = None,
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
    - `config`: an AmgX-style config dict (flat or nested); merged over the
      default (PBICGSTAB preconditioned by classical AMG), see
      :mod:`jaxamg.config`. `**kwargs` override keys of the outer solver.
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
    (:class:`jaxamg.AMGXStatus`), `residual_history` (trimmed when called
    directly, NaN-padded to `max_iters + 1` entries under a transformation).

    Non-convergence is data, not an exception: check `info["status"]`.
    Gradients: `jax.grad`, `jax.jvp` and `jax.vmap` work through the solve;
    an adjoint solve that fails to converge emits an
    :class:`AdjointConvergenceWarning` (set `JAXAMG_ADJOINT_FAILURE=raise` to
    raise instead).
    """
    import jax
    import jax.numpy as jnp

    from .config import prepare_config, outer_max_iters

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
        from ._mpi_solve import solve_mpi

        return solve_mpi(
            A, b, x0=x0, config=config, block_dim=block_dim, comm=comm, nglobal=nglobal,
            partition_info=partition_info, save_stats_file=save_stats_file,
            reuse_setup=reuse_setup, nullspace=nullspace,
            transpose_nullspace=transpose_nullspace, **kwargs,
        )
    if callable(A) and not hasattr(A, "shape"):
        from .sparsity import materialize_operator

        n_b = int(np.shape(b)[-1]) if np.ndim(b) else 0
        # The materialised matrix carries the operator's with_cache metadata.
        operator = A
        A = materialize_operator(operator, n_b)
        for name in ("_is_symmetric", "_nullspace", "_transpose_nullspace", "_near_nullspace"):
            if hasattr(operator, name):
                setattr(A, name, getattr(operator, name))
    if not isinstance(block_dim, (int, np.integer)) or isinstance(block_dim, bool) or block_dim < 1:
        raise ValueError(f"`jaxamg.solve`: `block_dim` must be an integer >= 1, got {block_dim!r}.")
    csr = as_csr(A)
    n_rows, n_cols = csr.shape
    if n_rows != n_cols:
        raise ValueError(
            f"`jaxamg.solve`: `A` must be square, got shape {csr.shape}; pass a square matrix."
        )
    if n_rows == 0:
        raise ValueError("`jaxamg.solve`: `A` is empty (0 rows); pass a non-empty matrix.")
    if not hasattr(b, "shape"):
        b = np.asarray(b)
    _check_dtype("b", b.dtype)
    _check_dtype("A", csr.data.dtype)
    _check_vector("b", b, n_rows)
    if n_rows % block_dim != 0:
        raise ValueError(
            f"`jaxamg.solve`: the {n_rows} rows are not divisible by block_dim={block_dim}; "
            "pass a block_dim that divides the number of rows."
        )
    if x0 is not None:
        if not hasattr(x0, "shape"):
            x0 = np.asarray(x0)
        _check_dtype("x0", x0.dtype)
        if tuple(x0.shape) != tuple(b.shape):
            raise ValueError(
                f"`jaxamg.solve`: x0 must have the same shape as b, got {tuple(x0.shape)} and "
                f"{tuple(b.shape)}; pass an initial guess of shape {tuple(b.shape)} or None."
            )
    if not isinstance(reuse_setup, (bool, np.bool_)):
        raise TypeError(
            f"`jaxamg.solve`: `reuse_setup` must be True or False, got {reuse_setup!r}; "
            "pass a bool."
        )
    if save_stats_file is not None:
        from ._stats import check_writable

        check_writable(save_stats_file, "jaxamg.solve")
    if save_stats_file is not None and not is_concrete(csr.data, b):
        raise ValueError(
            "`jaxamg.solve`: `save_stats_file` works only in a direct call, not under jax.jit, "
            "jax.grad or jax.vmap; call solve directly to write statistics."
        )
    dtype = _preferred_dtype(csr.data, b)
    data = jnp.asarray(csr.data, dtype=dtype)
    b = jnp.asarray(b, dtype=dtype)
    use_x0 = x0 is not None
    x0 = jnp.zeros_like(b) if x0 is None else jnp.asarray(x0, dtype=dtype)
    if is_concrete(data, b, x0):
        for name, v in (("A", data), ("b", b), ("x0", x0)):
            if not bool(jnp.all(jnp.isfinite(v))):
                raise ValueError(
                    f"`jaxamg.solve`: `{name}` contains NaN or infinite values; pass finite "
                    "values (under jax.jit such input gives status FAILED and a NaN solution)."
                )
    symmetric = bool(
        getattr(A, "_is_symmetric", False) or getattr(csr.source, "_is_symmetric", False)
    )
    null_basis, transpose_basis = _null_spaces(
        A, csr, dtype, nullspace, transpose_nullspace, symmetric
    )
    singular = null_basis is not None or transpose_basis is not None
    nns = _near_nullspace(A, csr, near_nullspace, dtype)
    config_text = prepare_config(
        config,
        save_stats=save_stats_file is not None,
        block_dim=int(block_dim),
        singular=singular,
        **kwargs,
    )
    _validate_with_engine(config_text)
    if singular:
        from .config import uses_dense_lu_coarse_solver
        from .nullspace import warn_dense_lu

        if uses_dense_lu_coarse_solver(config_text):
            warn_dense_lu(stacklevel=3)
    fingerprint = structure_fingerprint(csr.indptr, csr.indices)
    indptr, indices, rows = structure_arrays(csr, fingerprint)
    st = _Static(
        config=config_text,
        structure=fingerprint,
        reuse_setup=bool(reuse_setup),
        block_dim=int(block_dim),
        history_len=outer_max_iters(config_text) + 1,
        symmetric=symmetric,
        use_x0=use_x0,
    )
    if save_stats_file is not None:
        with _stats_lock:
            _ffi.native().take_stats_text()  # drop text left by earlier solves
            x, info = _run(indptr, indices, rows, data, b, x0, null_basis, transpose_basis,
                           st, singular, nns=nns)
            text = _ffi.native().take_stats_text()
        from ._stats import write_stats_file

        write_stats_file(text, save_stats_file)
        return x, info
    return _run(indptr, indices, rows, data, b, x0, null_basis, transpose_basis, st, singular,
                nns=nns)


def _near_nullspace(A, csr, spec, dtype):
    """The validated near-null-space array (or None): `spec`, else the one
    attached with ``with_cache``."""
    from ._near_nullspace import as_near_nullspace

    if spec is None:
        for owner in (A, csr.source):
            spec = getattr(owner, "_near_nullspace", None)
            if spec is not None:
                break
    return as_near_nullspace(spec, csr.n_rows, dtype)


def _run(indptr, indices, rows, data, b, x0, null_basis, transpose_basis, st, singular,
         nns=None):
    """The solve and its `info` dict, engine errors re-raised as Python ones."""
    import jax

    direct = is_concrete(data, b, x0)
    try:
        if singular:
            x, stats, inconsistency = _singular_solve(
                indptr, indices, rows, data, b, x0, null_basis, transpose_basis, st, nns
            )
        else:
            x, stats = linear_solve(indptr, indices, rows, data, b, x0, st, nns)
        if direct:
            x = jax.block_until_ready(x)
    except jax.errors.JaxRuntimeError as e:
        raise _to_runtime_error(e) from None
    info = make_info(stats, st.history_len)
    if transpose_basis is not None:
        add_inconsistency(info, inconsistency)
    return x, info


def add_inconsistency(info: dict, inconsistency: Any) -> None:
    """``info["rhs_inconsistency"]``: a float (or array) when concrete, the
    traced value under a transformation."""
    if is_concrete(inconsistency):
        value = np.asarray(inconsistency)
        info["rhs_inconsistency"] = float(value) if value.ndim == 0 else value
    else:
        info["rhs_inconsistency"] = inconsistency


def _singular_solve(indptr, indices, rows, data, b, x0, null_basis, transpose_basis, st,
                    nns=None):
    """The solve with declared null spaces: projections as JAX operations
    around the differentiable core, so reverse mode transposes them (the
    cotangent is projected with N before the adjoint solve, its result with M
    after it)."""
    from .nullspace import project_out, relative_norm

    if transpose_basis is not None:
        b_range = project_out(b, transpose_basis)
        inconsistency = relative_norm(b - b_range, b)
    else:
        b_range, inconsistency = b, None
    x, stats = linear_solve(indptr, indices, rows, data, b_range, x0, st, nns)
    if null_basis is not None:
        x = project_out(x, null_basis)
    return x, stats, inconsistency


def _null_spaces(A, csr, dtype, nullspace, transpose_nullspace, symmetric):
    """The declared bases as (n, k) arrays (or None), after the defaults
    attached by ``with_cache``, the symmetric fill-in, validation and the
    NullSpaceWarning checks on concrete values."""
    from . import nullspace as ns

    specs = ns.declared_specs(nullspace, transpose_nullspace, (A, csr.source), symmetric)
    n = csr.n_rows
    bases = {}
    for name, spec in specs.items():
        basis = ns.as_nullspace_basis(spec, n, dtype, name)
        ns.validate_basis(basis, name)
        bases[name] = basis

    # Checks on concrete values (each at most once per matrix buffer).
    buffer = _value_buffer(A, csr)
    if bases["nullspace"] is None:
        ns.warn_if_singular(csr.indptr, csr.data, n, buffer=buffer, stacklevel=4)
    if not symmetric:
        for given, missing in (("nullspace", "transpose_nullspace"),
                               ("transpose_nullspace", "nullspace")):
            if bases[given] is not None and bases[missing] is None:
                ns.warn_missing_basis(given, stacklevel=4)
    for name, basis in bases.items():
        if basis is not None:
            spec = specs[name]
            ns.verify_nullspace(
                csr.indptr,
                csr.indices,
                csr.data,
                basis,
                name,
                buffer=buffer,
                basis_key="constant" if isinstance(spec, str) else spec,
                dtype=dtype,
                stacklevel=4,
            )
    return bases["nullspace"], bases["transpose_nullspace"]


def _value_buffer(A, csr):
    """The user's array holding the matrix values (what the checks are
    remembered by): ``A`` itself when dense, else its ``data`` array."""
    import jax

    if isinstance(A, (np.ndarray, jax.Array)):
        return A
    for owner in (A, csr.source):
        values = getattr(owner, "data", None)
        if isinstance(values, (np.ndarray, jax.Array)):
            return values
    return csr.data


@functools.lru_cache(maxsize=256)
def _validate_with_engine(config_text: str) -> None:
    """Parses the config with the engine once per distinct text, so unknown
    keys and values fail here, in Python, naming the key."""
    from ._errors import ConfigError
    from ._native import engine

    try:
        engine().canonical_config(config_text)
    except ConfigError:
        raise
    except ValueError as e:
        raise ConfigError(f"`jaxamg.solve`: invalid config: {e}") from None
