"""Sparsity detection by interpreting an operator's jaxpr.

The operator is traced once to a jaxpr, and every value in it is interpreted
either as a *constant* (it does not depend on the input; its value is folded
when possible) or as a *dependence matrix* (row i lists the input elements that
element i may read; see ``deps``). The input starts as the identity, and each
primitive maps the dependences of its operands to those of its results. This
follows the global sparsity detection of SparseConnectivityTracer.jl (Hill and
Dalle, 2025), done on a jaxpr instead of by operator overloading.

The result is a superset of the true pattern (exact for the supported
primitives, up to coefficients that are zero only numerically). Primitives with
no rule are over-approximated by "every output reads every input column the
operands read" when that set is local; otherwise, and for data-dependent
indexing, the trace gives up and the caller falls back to probing.
"""

from __future__ import annotations

import logging

import numpy as np

from . import deps as D
from .const_eval import as_value, fold
from .index_maps import (
    MOVEMENT_INDEX_OPERANDS,
    conv_table,
    dot_general_pairs,
    gather_labels,
    index_positions,
    movement,
    nonzero_mask,
    reduction_table,
    scatter_targets,
)

__all__ = ["trace_pattern", "Bail"]

_log = logging.getLogger("jaxamg.sparsity")

_ELEMENTWISE = frozenset(
    """add add_any sub mul div rem pow max min atan2 nextafter and or xor not eq ne lt le gt
    ge neg sign floor ceil round is_finite abs exp exp2 log log1p expm1 tanh logistic sin cos
    tan asin acos atan sinh cosh asinh acosh atanh sqrt rsqrt cbrt square integer_pow erf erfc
    erf_inv lgamma digamma igamma igammac bessel_i0e bessel_i1e real imag conj complex
    convert_element_type reduce_precision stop_gradient clamp select_n population_count clz
    shift_left shift_right_logical shift_right_arithmetic copy copy_p""".split()
)
_REDUCTIONS = frozenset(
    """reduce_sum reduce_max reduce_min reduce_prod reduce_and reduce_or reduce_xor argmax
    argmin""".split()
)
# Primitives that call a sub-jaxpr on exactly their operands.
_CALLS = frozenset(
    """pjit jit closed_call core_call custom_jvp_call custom_vjp_call custom_vjp_call_jaxpr
    remat remat2 checkpoint""".split()
)
# Multi-operand identities: result k is operand k.
_PASS_THROUGH = frozenset("optimization_barrier device_put pvary sharding_constraint".split())
_REPLACE_SCATTERS = frozenset({"scatter"})
_COMBINE_SCATTERS = frozenset(
    "scatter-add scatter_add scatter-sub scatter_sub scatter-mul scatter_mul scatter-min "
    "scatter_min scatter-max scatter_max".split()
)
# Equations evaluated while unrolling scans, over the whole trace.
_UNROLL_BUDGET = 200_000
# Label arrays for JAX-bound maps are int32.
_MAX_LABELS = 2**31 - 1


class Bail(Exception):
    """The operator cannot be traced structurally; the caller probes instead."""


class _Const:
    """A value that does not depend on the operator input. `value` is a NumPy
    array, another array type JAX can fold further, or None when unknown."""

    __slots__ = ("value",)

    def __init__(self, value=None):
        self.value = value

    def array(self):
        return self.value if isinstance(self.value, np.ndarray) else None


def _size(var) -> int:
    return int(np.prod(getattr(var.aval, "shape", ())))


def _open(sub):
    """(jaxpr, consts) of a closed or open sub-jaxpr."""
    if hasattr(sub, "consts") and hasattr(sub, "jaxpr"):
        return sub.jaxpr, list(sub.consts)
    if getattr(sub, "constvars", ()):
        raise Bail("a sub-jaxpr with unbound constants")
    return sub, []


def _literal_type():
    try:
        from jax.extend.core import Literal
    except ImportError:  # older layouts
        from jax.core import Literal
    return Literal


def _live_equations(jaxpr, literal_type):
    """The equations the outputs depend on, in order. Dead code is skipped, so
    an unsupported primitive whose result is unused does not end the trace."""
    live = {v for v in jaxpr.outvars if not isinstance(v, literal_type)}
    kept = []
    for eqn in reversed(jaxpr.eqns):
        if any(v in live for v in eqn.outvars):
            kept.append(eqn)
            live.update(v for v in eqn.invars if not isinstance(v, literal_type))
    kept.reverse()
    return kept


class _Interpreter:
    def __init__(self, n_global: int):
        self.n = n_global
        self.budget = _UNROLL_BUDGET
        self.literal = _literal_type()

    # ----------------------------------------------------------------- driver

    def run(self, jaxpr, consts, args) -> list:
        env = {}
        for var, val in zip(jaxpr.constvars, consts):
            env[var] = _Const(as_value(val))
        for var, val in zip(jaxpr.invars, args):
            env[var] = val
        for eqn in _live_equations(jaxpr, self.literal):
            ins = [self._read(env, v) for v in eqn.invars]
            outs = self._equation(eqn, ins)
            for var, val in zip(eqn.outvars, outs):
                env[var] = val
        return [self._read(env, v) for v in jaxpr.outvars]

    def _read(self, env, var):
        if isinstance(var, self.literal):
            return _Const(np.asarray(var.val, dtype=var.aval.dtype))
        return env[var]

    def _equation(self, eqn, ins) -> list:
        name = eqn.primitive.name
        if name not in _CALLS and all(isinstance(v, _Const) for v in ins):
            values = fold(eqn, [v.value for v in ins])
            if values is None:
                return [_Const() for _ in eqn.outvars]
            return [_Const(v) for v in values]
        if name in _CALLS:
            return self._call(eqn, ins)
        if name == "mul":
            return self._mul(eqn, ins)
        if name == "select_n":
            return self._select(eqn, ins)
        if name in _ELEMENTWISE:
            return self._elementwise(eqn, ins)
        if name in MOVEMENT_INDEX_OPERANDS:
            return self._movement(eqn, ins)
        if name in _REDUCTIONS:
            return self._reduction(eqn, ins)
        if name in _REPLACE_SCATTERS or name in _COMBINE_SCATTERS:
            return self._scatter(eqn, ins)
        if name == "dot_general":
            return self._dot_general(eqn, ins)
        if name == "conv_general_dilated":
            return self._conv(eqn, ins)
        if name == "scan":
            return self._scan(eqn, ins)
        if name == "cond":
            return self._cond(eqn, ins)
        if name in _PASS_THROUGH and len(ins) == len(eqn.outvars):
            return list(ins)
        return self._opaque(eqn, ins)

    # ------------------------------------------------------------ elementwise

    def _elementwise(self, eqn, ins) -> list:
        size = _size(eqn.outvars[0])
        parts = []
        for v in ins:
            if isinstance(v, _Const):
                continue
            if v.size == size:
                parts.append(v)
            elif v.size == 1:
                parts.append(D.broadcast_row(v, size))
            else:
                return self._opaque(eqn, ins)
        return [D.union(parts, size, self.n)]

    def _mul(self, eqn, ins) -> list:
        """A product is zero wherever a constant factor is exactly zero, so those
        elements read nothing ("zero-skip")."""
        (out,) = self._elementwise(eqn, ins)
        shape = eqn.outvars[0].aval.shape
        zero = None
        for v in ins:
            arr = v.array() if isinstance(v, _Const) else None
            if arr is not None:
                z = np.broadcast_to(arr == 0, shape).ravel()
                zero = z if zero is None else zero | z
        if zero is not None and zero.any():
            out = D.keep_rows(out, ~zero)
        return [out]

    def _select(self, eqn, ins) -> list:
        """A constant predicate picks one case per element (a movement); a
        predicate that depends on the input makes every case, and the
        predicate itself, a dependence."""
        pred = ins[0]
        if isinstance(pred, _Const) and pred.array() is not None:
            return self._movement(eqn, ins)
        return self._elementwise(eqn, ins)

    # -------------------------------------------------------------- movement

    def _movement(self, eqn, ins) -> list:
        name = eqn.primitive.name
        index_ops = index_positions(name, len(ins))
        operands, data, offset = [], [], 0
        for k, (var, v) in enumerate(zip(eqn.invars, ins)):
            shape = var.aval.shape
            if k in index_ops:
                arr = v.array() if isinstance(v, _Const) else None
                if arr is None:
                    raise Bail(f"`{name}` with indices that depend on the input")
                operands.append(arr)
            elif isinstance(v, _Const):
                operands.append(np.full(shape, -1, dtype=np.int64))
            else:
                size = _size(var)
                operands.append(np.arange(offset, offset + size, dtype=np.int64).reshape(shape))
                data.append(v)
                offset += size
        if name == "gather":
            if offset > _MAX_LABELS:
                raise Bail("gather operand too large for int32 labels")
            labels = [gather_labels(eqn.params, operands[0], operands[1], eqn.invars[1].aval.dtype)]
        else:
            labels = movement(name, eqn.params, operands, [v.aval.shape for v in eqn.outvars])
            if labels is None:
                raise Bail(f"no element map for `{name}` with these parameters")
        source = D.stack(data)
        outs = []
        for lab in labels:
            flat = np.asarray(lab).reshape(-1)
            if flat.size == offset and np.array_equal(flat, np.arange(offset)):
                outs.append(source)  # a pure reshape: same rows in the same order
            else:
                outs.append(D.apply_map(D.from_table(flat[:, None], offset), source))
        return outs

    def _reduction(self, eqn, ins) -> list:
        (v,) = ins
        table = reduction_table(eqn.params["axes"], eqn.invars[0].aval.shape)
        return [D.apply_map(D.from_table(table, v.size), v)]

    def _scatter(self, eqn, ins) -> list:
        if len(ins) != 3:
            return self._opaque(eqn, ins)
        operand, indices, updates = ins
        idx = indices.array() if isinstance(indices, _Const) else None
        if idx is None:
            raise Bail("scatter with indices that depend on the input")
        if "CLIP" in str(eqn.params.get("mode")):
            raise Bail("scatter in CLIP mode")
        op_var, idx_var, upd_var = eqn.invars
        op_size, upd_size = _size(op_var), _size(upd_var)
        if op_size > _MAX_LABELS:
            raise Bail("scatter operand too large for int32 labels")
        targets = scatter_targets(
            eqn.params, op_var.aval.shape, idx, idx_var.aval.dtype, upd_var.aval.shape
        )
        hit = targets >= 0
        parts = []
        if isinstance(operand, D.Deps):
            if eqn.primitive.name in _REPLACE_SCATTERS:
                keep = np.ones(op_size, dtype=bool)
                keep[targets[hit]] = False  # overwritten elements lose the operand
                parts.append(D.keep_rows(operand, keep))
            else:
                parts.append(operand)
        if isinstance(updates, D.Deps):
            element_map = D.from_pairs(targets[hit], np.flatnonzero(hit), op_size, upd_size)
            parts.append(D.apply_map(element_map, updates))
        return [D.union(parts, op_size, self.n)]

    # ---------------------------------------------------- linear with a constant

    def _dot_general(self, eqn, ins) -> list:
        lhs, rhs = ins
        if isinstance(lhs, D.Deps) and isinstance(rhs, D.Deps):
            raise Bail("dot_general of two operands that depend on the input")
        data_is_lhs = isinstance(lhs, D.Deps)
        data, const = (lhs, rhs) if data_is_lhs else (rhs, lhs)
        data_var, const_var = eqn.invars if data_is_lhs else eqn.invars[::-1]
        arr = const.array()
        mask = nonzero_mask(arr) if arr is not None else np.ones(const_var.aval.shape, bool)
        out_var = eqn.outvars[0]
        dst, src = dot_general_pairs(
            eqn.params["dimension_numbers"],
            data_var.aval.shape,
            mask,
            data_is_lhs,
            out_var.aval.shape,
        )
        return [D.apply_map(D.from_pairs(dst, src, _size(out_var), data.size), data)]

    def _conv(self, eqn, ins) -> list:
        lhs, rhs = ins
        if isinstance(rhs, D.Deps) or not isinstance(lhs, D.Deps):
            raise Bail("convolution whose kernel depends on the input")
        lhs_var, rhs_var = eqn.invars
        kernel = rhs.array()
        mask = nonzero_mask(kernel) if kernel is not None else np.ones(rhs_var.aval.shape, bool)
        table = conv_table(
            eqn.params, lhs_var.aval.shape, rhs_var.aval.shape, eqn.outvars[0].aval.shape, mask
        )
        return [D.apply_map(D.from_table(table, lhs.size), lhs)]

    # ---------------------------------------------------------- control flow

    def _call(self, eqn, ins) -> list:
        sub = next(
            (
                eqn.params[k]
                for k in ("jaxpr", "call_jaxpr", "fun_jaxpr")
                if eqn.params.get(k) is not None
            ),
            None,
        )
        if sub is None:
            return self._opaque(eqn, ins)
        jaxpr, consts = _open(sub)
        if len(jaxpr.invars) != len(ins) or len(jaxpr.outvars) != len(eqn.outvars):
            raise Bail(f"`{eqn.primitive.name}` whose sub-jaxpr does not match its operands")
        return self.run(jaxpr, consts, ins)

    def _cond(self, eqn, ins) -> list:
        """The union over all branches (which one runs is not decided here); an
        index that depends on the input adds its dependence everywhere."""
        index, operands = ins[0], ins[1:]
        branch_outs = [self.run(*_open(br), operands) for br in eqn.params["branches"]]
        results = []
        for j, var in enumerate(eqn.outvars):
            candidates = [outs[j] for outs in branch_outs]
            if isinstance(index, _Const) and all(isinstance(c, _Const) for c in candidates):
                k = index.array()
                if k is None:
                    results.append(_Const())
                else:
                    results.append(candidates[int(np.clip(k, 0, len(candidates) - 1))])
                continue
            size = _size(var)
            parts = [c for c in candidates if isinstance(c, D.Deps)]
            if isinstance(index, D.Deps):
                parts.append(D.dense_rows(D.columns_of([index]), size, self.n))
            results.append(D.union(parts, size, self.n))
        return results

    def _scan(self, eqn, ins) -> list:
        """Unrolled: the body is interpreted once per iteration, threading the
        carry, so dependences that travel through the carry are exact."""
        p = eqn.params
        body, body_consts = _open(p["jaxpr"])
        n_consts, n_carry = _scan_counts(p, len(ins))
        length, reverse = int(p["length"]), bool(p.get("reverse", False))
        self.budget -= length * max(len(body.eqns), 1)
        if self.budget < 0:
            raise Bail("scan too long to unroll")
        consts, carry = ins[:n_consts], list(ins[n_consts : n_consts + n_carry])
        xs_vars, xs = eqn.invars[n_consts + n_carry :], ins[n_consts + n_carry :]
        ys_vars = eqn.outvars[n_carry:]
        steps = [[None] * length for _ in ys_vars]
        for t in range(length - 1, -1, -1) if reverse else range(length):
            x_t = [_leading_slice(v, var, t, length) for v, var in zip(xs, xs_vars)]
            outs = self.run(body, body_consts, [*consts, *carry, *x_t])
            carry = outs[:n_carry]
            for j, y in enumerate(outs[n_carry:]):
                steps[j][t] = y
        ys = [self._stack_leading(s, var) for s, var in zip(steps, ys_vars)]
        return [*carry, *ys]

    def _stack_leading(self, steps, var):
        if not steps:
            return _Const(np.zeros(var.aval.shape, dtype=var.aval.dtype))
        if all(isinstance(s, _Const) for s in steps):
            arrays = [s.array() for s in steps]
            return _Const(None if any(a is None for a in arrays) else np.stack(arrays))
        inner = _size(var) // len(steps)
        return D.stack([s if isinstance(s, D.Deps) else D.empty(inner, self.n) for s in steps])

    # --------------------------------------------------------------- opaque

    def _opaque(self, eqn, ins) -> list:
        """Every result reads every input column any operand reads, provided
        those columns are local (at most half the input); otherwise give up."""
        name = eqn.primitive.name
        columns = D.columns_of([v for v in ins if isinstance(v, D.Deps)])
        if columns.size > self.n // 2:
            raise Bail(f"`{name}` has no rule and reads {columns.size} of {self.n} inputs")
        outs = []
        for var in eqn.outvars:
            size = _size(var)
            if size * columns.size > 50_000_000:
                raise Bail(f"`{name}` has no rule and its over-approximation is too large")
            outs.append(D.dense_rows(columns, size, self.n))
        return outs


def _leading_slice(v, var, t: int, length: int):
    if isinstance(v, _Const):
        arr = v.array()
        return _Const(None if arr is None else arr[t])
    inner = _size(var) // length
    return D.Deps(v.mat[t * inner : (t + 1) * inner])


def _scan_counts(params, n_operands: int) -> tuple[int, int]:
    """(number of constants, number of carries) of a scan, in either of the
    parameter layouts JAX has used."""
    if "num_consts" in params and "num_carry" in params:
        return int(params["num_consts"]), int(params["num_carry"])
    # Newer layout: a flat-tree description of (consts, carry, xs); only the
    # plain one, where the operands are the concatenation of the three groups.
    ft = params.get("ft_in")
    if ft is not None and hasattr(ft, "unpack"):
        groups = ft.unpack()
        if len(groups) == 3 and not any(e is not None for g in groups for e in g):
            n_consts, n_carry = len(groups[0]), len(groups[1])
            if n_consts + n_carry + len(groups[2]) == n_operands:
                return n_consts, n_carry
    raise Bail("scan with an unrecognised parameter layout")


def trace_pattern(operator, shape: tuple[int, int], dtype=None):
    """(rows, cols) of the operator's pattern, sorted row-major, or None when
    it cannot be traced structurally (the reason is logged at DEBUG level)."""
    import jax
    import jax.numpy as jnp

    n_local, n_global = shape
    dtype = jnp.result_type(float) if dtype is None else jnp.dtype(dtype)
    try:
        closed = jax.make_jaxpr(operator)(jax.ShapeDtypeStruct((n_global,), dtype))
        jaxpr = closed.jaxpr
        if len(jaxpr.invars) != 1 or len(jaxpr.outvars) != 1:
            raise Bail("the operator must map one array to one array")
        if _size(jaxpr.outvars[0]) != n_local:
            raise Bail(f"the operator returns {_size(jaxpr.outvars[0])} values, not {n_local}")
        (out,) = _Interpreter(n_global).run(jaxpr, closed.consts, [D.identity(n_global)])
    except Bail as e:
        _log.debug("sparsity tracing gave up: %s", e)
        return None
    except Exception as e:  # any failure of the tracer means: probe instead
        _log.debug("sparsity tracing failed: %r", e)
        return None
    if isinstance(out, _Const):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return D.to_pattern(out)
