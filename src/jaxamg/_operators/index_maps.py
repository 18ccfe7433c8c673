"""Element maps of JAX primitives, computed on the host.

For a primitive that moves, reduces or contracts data, these functions say
which operand elements each output element reads. Movement primitives are
evaluated on *label arrays* (operand element k carries the label k, constants
carry -1), which gives the map exactly for any parameters; the common ones are
re-implemented in NumPy so no XLA compilation is needed, and the rest (gather,
scatter targets) are bound by JAX on the host CPU. Convolutions, contractions
and reductions get their maps from index arithmetic.

The NumPy movement implementations double as constant folding for the same
primitives (they are value-agnostic).
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np

__all__ = [
    "host_context",
    "MOVEMENT_INDEX_OPERANDS",
    "movement",
    "gather_labels",
    "reduction_table",
    "conv_table",
    "dot_general_pairs",
    "scatter_targets",
    "MapTooLarge",
]

# Movement primitives and the operand positions that are indices (their values
# steer the move; they are not moved). Every other operand is data.
MOVEMENT_INDEX_OPERANDS = {
    "reshape": (),
    "squeeze": (),
    "expand_dims": (),
    "broadcast_in_dim": (),
    "transpose": (),
    "rev": (),
    "slice": (),
    "concatenate": (),
    "stack": (),
    "pad": (),
    "copy": (),
    "copy_p": (),
    "split": (),
    "dynamic_slice": "1:",
    "dynamic_update_slice": "2:",
    "gather": (1,),
    "select_n": (0,),
}

# Maps with more entries than this are refused (the caller falls back to
# probing); a dense contraction of that size is better probed anyway.
_MAX_MAP_ENTRIES = 50_000_000


class MapTooLarge(Exception):
    pass


def index_positions(name: str, n_operands: int) -> tuple[int, ...]:
    spec = MOVEMENT_INDEX_OPERANDS[name]
    if isinstance(spec, str):
        return tuple(range(int(spec[:-1]), n_operands))
    return spec


@contextlib.contextmanager
def host_context():
    """Runs JAX computations on this process's CPU device: host-side maps must
    not touch an accelerator (where float arithmetic may be reduced-precision)
    and must work on every process of a multi-process run."""
    import jax

    try:
        device = jax.local_devices(backend="cpu")[0]
    except Exception:  # no CPU backend (JAX_PLATFORMS excludes it)
        device = None
    if device is None:
        yield
    else:
        with jax.default_device(device):
            yield


# ----------------------------------------------------------------- movement


def _reshape(ops, p, out_shapes):
    a = ops[0]
    if p.get("dimensions") is not None:
        a = np.transpose(a, p["dimensions"])
    return [np.reshape(a, out_shapes[0])]


def _broadcast_in_dim(ops, p, out_shapes):
    a, shape = ops[0], tuple(p["shape"])
    full = [1] * len(shape)
    for k, d in enumerate(p["broadcast_dimensions"]):
        full[d] = a.shape[k]
    return [np.broadcast_to(a.reshape(full), shape)]


def _slice(ops, p, out_shapes):
    strides = p.get("strides") or (1,) * ops[0].ndim
    index = tuple(
        slice(s, e, st) for s, e, st in zip(p["start_indices"], p["limit_indices"], strides)
    )
    return [ops[0][index]]


def _pad(ops, p, out_shapes):
    a, fill = ops[0], np.asarray(ops[1]).reshape(())
    config = p["padding_config"]
    # Interior and non-negative edge padding first, then crop negative edges.
    grown = [
        max(lo, 0) + (n + max(n - 1, 0) * interior) + max(hi, 0)
        for n, (lo, hi, interior) in zip(a.shape, config)
    ]
    out = np.full(grown, fill, dtype=np.result_type(a.dtype, fill.dtype))
    place = tuple(
        slice(max(lo, 0), max(lo, 0) + n + max(n - 1, 0) * interior, interior + 1)
        for n, (lo, hi, interior) in zip(a.shape, config)
    )
    out[place] = a
    crop = tuple(slice(-min(lo, 0), g - (-min(hi, 0))) for g, (lo, hi, _) in zip(grown, config))
    return [out[crop]]


def _clamped_starts(starts, operand_shape, window_shape):
    return [
        int(min(max(int(np.asarray(s)), 0), n - w))
        for s, n, w in zip(starts, operand_shape, window_shape)
    ]


def _dynamic_slice(ops, p, out_shapes):
    a, sizes = ops[0], tuple(p["slice_sizes"])
    starts = _clamped_starts(ops[1:], a.shape, sizes)
    return [a[tuple(slice(s, s + w) for s, w in zip(starts, sizes))]]


def _dynamic_update_slice(ops, p, out_shapes):
    a, update = ops[0], ops[1]
    starts = _clamped_starts(ops[2:], a.shape, update.shape)
    out = np.array(a, dtype=np.result_type(a.dtype, update.dtype), copy=True)
    out[tuple(slice(s, s + w) for s, w in zip(starts, update.shape))] = update
    return [out]


def _select_n(ops, p, out_shapes):
    which, cases = np.asarray(ops[0]).astype(np.int64), ops[1:]
    out = np.broadcast_to(cases[0], out_shapes[0]).copy()
    for k in range(1, len(cases)):
        out = np.where(which == k, cases[k], out)
    return [out]


def _split(ops, p, out_shapes):
    bounds = np.cumsum(p["sizes"])[:-1]
    return list(np.split(ops[0], bounds, axis=p["axis"]))


_NUMPY_MOVEMENT = {
    "reshape": _reshape,
    "squeeze": lambda ops, p, s: [np.reshape(ops[0], s[0])],
    "expand_dims": lambda ops, p, s: [np.reshape(ops[0], s[0])],
    "broadcast_in_dim": _broadcast_in_dim,
    "transpose": lambda ops, p, s: [np.transpose(ops[0], p["permutation"])],
    "rev": lambda ops, p, s: [np.flip(ops[0], axis=tuple(p["dimensions"]))],
    "slice": _slice,
    "concatenate": lambda ops, p, s: [np.concatenate(ops, axis=p["dimension"])],
    "stack": lambda ops, p, s: [np.stack(ops, axis=p["axis"])],
    "pad": _pad,
    "copy": lambda ops, p, s: [ops[0]],
    "copy_p": lambda ops, p, s: [ops[0]],
    "split": _split,
    "dynamic_slice": _dynamic_slice,
    "dynamic_update_slice": _dynamic_update_slice,
    "select_n": _select_n,
}


def movement(name: str, params: dict, operands: list, out_shapes: list) -> list | None:
    """The primitive applied in NumPy, or None when it has no NumPy version.
    Shapes of the results are checked against `out_shapes`."""
    fn = _NUMPY_MOVEMENT.get(name)
    if fn is None:
        return None
    if name == "broadcast_in_dim" and len(operands) != 1:
        return None  # dynamic shapes
    outs = fn([np.asarray(o) for o in operands], params, out_shapes)
    if [tuple(o.shape) for o in outs] != [tuple(s) for s in out_shapes]:
        return None
    return outs


def gather_labels(params: dict, labels: np.ndarray, indices: np.ndarray, index_dtype) -> np.ndarray:
    """lax.gather of int32 labels on the host; positions filled by an
    out-of-bounds window read -1 (no source)."""
    import jax.numpy as jnp
    from jax import lax

    with host_context():
        out = lax.gather(
            jnp.asarray(labels, dtype=jnp.int32),
            jnp.asarray(indices, dtype=index_dtype),
            params["dimension_numbers"],
            tuple(params["slice_sizes"]),
            unique_indices=bool(params.get("unique_indices", False)),
            indices_are_sorted=bool(params.get("indices_are_sorted", False)),
            mode=params.get("mode"),
            fill_value=-1,
        )
    return np.asarray(out)


# ---------------------------------------------------------------- reductions


def reduction_table(axes, in_shape) -> np.ndarray:
    """(n_out, fibre) table of the input elements each output of a reduction
    over ``axes`` reads."""
    axes = tuple(sorted(int(a) for a in axes))
    keep = [d for d in range(len(in_shape)) if d not in axes]
    labels = np.arange(int(np.prod(in_shape)), dtype=np.int64).reshape(in_shape)
    n_out = int(np.prod([in_shape[d] for d in keep]))
    fibre = int(np.prod([in_shape[a] for a in axes]))
    return np.transpose(labels, keep + list(axes)).reshape(n_out, fibre)


# -------------------------------------------------------------- convolution


def _c_strides(shape) -> np.ndarray:
    strides = np.ones(len(shape), dtype=np.int64)
    for d in range(len(shape) - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    return strides


def conv_table(params: dict, lhs_shape, rhs_shape, out_shape, kernel_nonzero) -> np.ndarray:
    """(n_out, slots) table of the lhs elements each output of
    conv_general_dilated reads through the nonzero kernel taps."""
    nd = len(lhs_shape)
    dn = params.get("dimension_numbers")
    if dn is None:
        lhs_spec = rhs_spec = out_spec = tuple(range(nd))
    else:
        lhs_spec, rhs_spec, out_spec = (tuple(s) for s in (dn.lhs_spec, dn.rhs_spec, dn.out_spec))
    n_sp = nd - 2
    strides = tuple(params["window_strides"])
    padding = tuple(tuple(p) for p in params["padding"])
    lhs_dil = tuple(params.get("lhs_dilation") or (1,) * n_sp)
    rhs_dil = tuple(params.get("rhs_dilation") or (1,) * n_sp)
    groups = int(params.get("feature_group_count", 1))
    batch_groups = int(params.get("batch_group_count", 1))

    x_sizes = [lhs_shape[d] for d in lhs_spec[2:]]
    n_out_batch = out_shape[out_spec[0]]
    n_out_feat = out_shape[out_spec[1]]
    y_sizes = [out_shape[d] for d in out_spec[2:]]
    in_per_group = rhs_shape[rhs_spec[1]]
    ls, os_ = _c_strides(lhs_shape), _c_strides(out_shape)

    taps = np.argwhere(np.asarray(kernel_nonzero)).reshape(-1, nd)
    out_size = int(np.prod(out_shape))
    slots = int(np.bincount(taps[:, rhs_spec[0]]).max()) if len(taps) else 0
    if out_size * slots > _MAX_MAP_ENTRIES:
        raise MapTooLarge(f"convolution map of {out_size} x {slots}")
    table = np.full((out_size, slots), -1, dtype=np.int64)
    next_slot = np.zeros(n_out_feat, dtype=np.int64)

    shape_b = (n_out_batch,) + (1,) * n_sp
    for tap in taps:
        o, i = int(tap[rhs_spec[0]]), int(tap[rhs_spec[1]])
        # Output feature o belongs to feature group o // (O / groups), whose
        # kernel input channel i is lhs feature group * (C / groups) + i; with
        # batch groups, its batch group reads that block of the lhs batch.
        feature_in = (o // (n_out_feat // groups)) * in_per_group + i
        n = np.arange(n_out_batch, dtype=np.int64)
        batch_in = (o // (n_out_feat // batch_groups)) * n_out_batch + n
        src = (batch_in * ls[lhs_spec[0]] + feature_in * ls[lhs_spec[1]]).reshape(shape_b)
        dst = (n * os_[out_spec[0]] + o * os_[out_spec[1]]).reshape(shape_b)
        valid = np.ones(shape_b, dtype=bool)
        for d in range(n_sp):
            k = int(tap[rhs_spec[2 + d]])
            y = np.arange(y_sizes[d], dtype=np.int64)
            # Position in the lhs after dilation and padding: an lhs element
            # only at in-range multiples of the dilation, zero elsewhere.
            pos = y * strides[d] + k * rhs_dil[d] - padding[d][0]
            ok = (pos >= 0) & (pos <= (x_sizes[d] - 1) * lhs_dil[d]) & (pos % lhs_dil[d] == 0)
            axis_shape = [1] * (n_sp + 1)
            axis_shape[1 + d] = y_sizes[d]
            src = src + (np.where(ok, pos // lhs_dil[d], 0) * ls[lhs_spec[2 + d]]).reshape(
                axis_shape
            )
            dst = dst + (y * os_[out_spec[2 + d]]).reshape(axis_shape)
            valid = valid & ok.reshape(axis_shape)
        valid = np.broadcast_to(valid, np.broadcast_shapes(src.shape, dst.shape, valid.shape))
        src = np.broadcast_to(src, valid.shape)[valid]
        dst = np.broadcast_to(dst, valid.shape)[valid]
        table[dst, next_slot[o]] = src
        next_slot[o] += 1
    return table


# -------------------------------------------------------------- contraction


def dot_general_pairs(dimension_numbers, data_shape, const_nonzero, data_is_lhs: bool, out_shape):
    """(dst, src) pairs: output element dst reads data element src, for a
    dot_general whose other operand is a constant with the given nonzeros."""
    (lc, rc), (lb, rb) = dimension_numbers
    d_con, d_bat = (tuple(lc), tuple(lb)) if data_is_lhs else (tuple(rc), tuple(rb))
    c_con, c_bat = (tuple(rc), tuple(rb)) if data_is_lhs else (tuple(lc), tuple(lb))
    const_nonzero = np.asarray(const_nonzero)
    d_free = [d for d in range(len(data_shape)) if d not in d_con and d not in d_bat]
    c_free = [d for d in range(const_nonzero.ndim) if d not in c_con and d not in c_bat]

    def size(shape, dims):
        return int(np.prod([shape[d] for d in dims]))

    n_b, n_k = size(data_shape, d_bat), size(data_shape, d_con)
    n_fd, n_fc = size(data_shape, d_free), size(const_nonzero.shape, c_free)
    data = np.arange(int(np.prod(data_shape)), dtype=np.int64).reshape(data_shape)
    data = np.transpose(data, list(d_bat) + d_free + list(d_con)).reshape(n_b, n_fd, n_k)
    mask = np.transpose(const_nonzero, list(c_bat) + c_free + list(c_con)).reshape(n_b, n_fc, n_k)
    # dot_general orders the output as (batch, lhs free, rhs free).
    out = np.arange(int(np.prod(out_shape)), dtype=np.int64)
    out = (
        out.reshape(n_b, n_fd, n_fc)
        if data_is_lhs
        else out.reshape(n_b, n_fc, n_fd).transpose(0, 2, 1)
    )

    b, c, k = np.nonzero(mask)
    if b.size * n_fd > _MAX_MAP_ENTRIES:
        raise MapTooLarge(f"contraction map of {b.size} x {n_fd}")
    f = np.arange(n_fd, dtype=np.int64)[None, :]
    dst = out[b[:, None], f, c[:, None]]
    src = data[b[:, None], f, k[:, None]]
    return dst.ravel(), src.ravel()


# ------------------------------------------------------------------ scatter


def scatter_targets(params: dict, operand_shape, indices: np.ndarray, index_dtype, updates_shape):
    """For each update element (C order), the operand element it lands on, or
    -1 when its window is out of bounds (dropped).

    Scatter is the transpose of the gather with the matching dimension
    numbers, so gathering the operand's labels with the scatter's indices
    returns, at every update position, the label of its destination.
    """
    from jax import lax

    dn = params["dimension_numbers"]
    inserted = tuple(dn.inserted_window_dims)
    operand_batching = tuple(getattr(dn, "operand_batching_dims", ()))
    window_dims = tuple(dn.update_window_dims)
    slice_sizes, j = [], 0
    for d in range(len(operand_shape)):
        if d in inserted or d in operand_batching:
            slice_sizes.append(1)
        else:
            slice_sizes.append(int(updates_shape[window_dims[j]]))
            j += 1
    gather_dn = lax.GatherDimensionNumbers(
        offset_dims=window_dims,
        collapsed_slice_dims=inserted,
        start_index_map=tuple(dn.scatter_dims_to_operand_dims),
        operand_batching_dims=operand_batching,
        start_indices_batching_dims=tuple(getattr(dn, "scatter_indices_batching_dims", ())),
    )
    labels = np.arange(int(np.prod(operand_shape)), dtype=np.int64).reshape(operand_shape)
    params = {
        "dimension_numbers": gather_dn,
        "slice_sizes": tuple(slice_sizes),
        "unique_indices": False,
        "indices_are_sorted": False,
        "mode": lax.GatherScatterMode.FILL_OR_DROP,
    }
    targets = gather_labels(params, labels, indices, index_dtype)
    if tuple(targets.shape) != tuple(updates_shape):
        raise ValueError("scatter target map has the wrong shape")
    return targets.reshape(-1).astype(np.int64)


def nonzero_mask(value: Any) -> np.ndarray:
    """Where a constant is not exactly zero (NaN counts as nonzero)."""
    v = np.asarray(value)
    return v != 0
