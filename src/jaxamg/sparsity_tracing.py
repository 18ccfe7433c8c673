"""Sparsity detection by tracing, under JAX-AMG's module path
``jaxamg.sparsity_tracing``.

A documented re-export: :func:`trace_sparsity_pattern` is the one in
:mod:`jaxamg.sparsity` (its interpreter of the operator's jaxpr lives in
``jaxamg._operators.tracing``). It returns the pattern ``(rows, cols)`` of a
linear operator from one trace, or None when the operator cannot be traced
structurally (then :func:`jaxamg.sparsity.probe_sparsity_pattern` applies).
"""

from .sparsity import trace_sparsity_pattern

__all__ = ["trace_sparsity_pattern"]
