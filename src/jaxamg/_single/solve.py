"""The single-process path of `jaxamg.solve`: x = A^-1 b through the native
engine, differentiable.

This module checks and prepares the input (matrix, right-hand side, guess,
configuration, null spaces), runs the differentiable core
(:func:`jaxamg._core.linear_solve.linear_solve`, a ``custom_linear_solve``
over native calls, which says how every derivative is derived), wraps it in
the null-space projections of a singular system and turns its statistics into
`info`. The front door, :func:`jaxamg._solve.solve`, sends every call that is
not distributed here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import nullspace as ns
from .._core.aggregation_modes import as_near_nullspace
from .._core.auto_config import choose as choose_auto_config
from .._core.auto_config import is_auto
from .._core.checks import check_dtype, check_vector, preferred_dtype, validate_with_engine
from .._core.config_rules import uses_amg
from .._core.errors import to_runtime_error
from .._core.ffi import cuda_native
from .._core.info import add_inconsistency, make_info
from .._core.linear_solve import Static, linear_solve
from .._core.matrix import as_csr, is_concrete, structure_fingerprint
from .._core.stats import check_writable, stats_lock, take_stats_text, write_stats_file
from .._core.structure import structure_arrays
from ..config import outer_max_iters, prepare_config
from ..sparsity import materialize_operator


def solve_single(
    A: Any,
    b: Any,
    x0: Any = None,
    config: dict | str | None = None,
    block_dim: int = 1,
    save_stats_file: Any = None,
    reuse_setup: bool = False,
    nullspace: Any = None,
    transpose_nullspace: Any = None,
    near_nullspace: Any = None,
    **kwargs: Any,
):
    """`jaxamg.solve` on one process (its arguments, without the MPI ones)."""
    import jax.numpy as jnp

    if callable(A) and not hasattr(A, "shape"):
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
    check_dtype("b", b.dtype)
    check_dtype("A", csr.data.dtype)
    check_vector("b", b, n_rows)
    if n_rows % block_dim != 0:
        raise ValueError(
            f"`jaxamg.solve`: the {n_rows} rows are not divisible by block_dim={block_dim}; "
            "pass a block_dim that divides the number of rows."
        )
    if x0 is not None:
        if not hasattr(x0, "shape"):
            x0 = np.asarray(x0)
        check_dtype("x0", x0.dtype)
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
        check_writable(save_stats_file, "jaxamg.solve")
    if save_stats_file is not None and not is_concrete(csr.data, b):
        raise ValueError(
            "`jaxamg.solve`: `save_stats_file` works only in a direct call, not under jax.jit, "
            "jax.grad or jax.vmap; call solve directly to write statistics."
        )
    dtype = preferred_dtype(csr.data, b)
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
    choice = None
    if is_auto(config):
        choice = choose_auto_config(
            csr,
            block_dim=int(block_dim),
            singular=singular,
            has_near_nullspace=nns is not None,
            declared_symmetric=symmetric,
        )
        config = choice.config
    config_text = prepare_config(
        config,
        save_stats=save_stats_file is not None,
        block_dim=int(block_dim),
        singular=singular,
        **kwargs,
    )
    validate_with_engine(config_text)
    fingerprint = structure_fingerprint(csr.indptr, csr.indices)
    indptr, indices, rows = structure_arrays(csr, fingerprint)
    st = Static(
        config=config_text,
        structure=fingerprint,
        reuse_setup=bool(reuse_setup),
        block_dim=int(block_dim),
        history_len=outer_max_iters(config_text) + 1,
        symmetric=symmetric,
        use_x0=use_x0,
    )
    if save_stats_file is not None:
        with stats_lock:
            take_stats_text()  # drop text left by earlier solves
            x, info = _run(
                indptr,
                indices,
                rows,
                data,
                b,
                x0,
                null_basis,
                transpose_basis,
                st,
                singular,
                nns=nns,
            )
            text = take_stats_text()
        write_stats_file(text, save_stats_file, amg=uses_amg(config_text))
    else:
        x, info = _run(
            indptr, indices, rows, data, b, x0, null_basis, transpose_basis, st, singular, nns=nns
        )
    if choice is not None and is_concrete(info["iterations"]):
        info["config_choice"] = choice.description  # info holds arrays only when traced
    return x, info


def _near_nullspace(A, csr, spec, dtype):
    """The validated near-null-space array (or None): `spec`, else the one
    attached with ``with_cache``."""
    if spec is None:
        for owner in (A, csr.source):
            spec = getattr(owner, "_near_nullspace", None)
            if spec is not None:
                break
    return as_near_nullspace(spec, csr.n_rows, dtype)


def _run(indptr, indices, rows, data, b, x0, null_basis, transpose_basis, st, singular, nns=None):
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
        raise to_runtime_error(e) from None
    info = make_info(stats, st.history_len)
    if direct:
        _add_host_reasons(info, x)
    if transpose_basis is not None:
        add_inconsistency(info, inconsistency)
    return x, info


def _add_host_reasons(info: dict, x) -> None:
    """In a direct call on a GPU: why the setup (``setup_reason``) or the solve
    (``host_reason``) ran on the host, from the CUDA module's report of the
    call just made. Nothing on a CPU: there the host is the place asked for."""
    devices = getattr(x, "devices", None)
    if devices is None or next(iter(devices())).platform != "gpu":
        return
    if not isinstance(info["solve_on_device"], bool):
        return  # a batch: the report holds its last lane only
    if info["setup_on_device"] and info["solve_on_device"]:
        return
    native = cuda_native()
    last = native.last_solve() if native is not None else {}
    if not info["setup_on_device"]:
        info["setup_reason"] = last.get("setup_reason", "")
    if not info["solve_on_device"]:
        info["host_reason"] = last.get("host_reason", "")


def _singular_solve(indptr, indices, rows, data, b, x0, null_basis, transpose_basis, st, nns=None):
    """The solve with declared null spaces: projections as JAX operations
    around the differentiable core, so reverse mode transposes them (the
    cotangent is projected with N before the adjoint solve, its result with M
    after it)."""
    if transpose_basis is not None:
        b_range = ns.project_out(b, transpose_basis)
        inconsistency = ns.relative_norm(b - b_range, b)
    else:
        b_range, inconsistency = b, None
    x, stats = linear_solve(indptr, indices, rows, data, b_range, x0, st, nns)
    if null_basis is not None:
        x = ns.project_out(x, null_basis)
    return x, stats, inconsistency


def _null_spaces(A, csr, dtype, nullspace, transpose_nullspace, symmetric):
    """The declared bases as (n, k) arrays (or None), after the defaults
    attached by ``with_cache``, the symmetric fill-in, validation and the
    NullSpaceWarning checks on concrete values."""
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
        ns.warn_if_singular(csr.indptr, csr.data, n, buffer=buffer, stacklevel=5)
    if not symmetric:
        for given, missing in (
            ("nullspace", "transpose_nullspace"),
            ("transpose_nullspace", "nullspace"),
        ):
            if bases[given] is not None and bases[missing] is None:
                ns.warn_missing_basis(given, stacklevel=5)
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
                stacklevel=5,
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
