"""Ordering native calls inside a program by a real operand.

Every rank must issue the collectives of one communicator in the same
order, so the native calls that run them (distributed solves, halo
exchanges, reductions) must run in one fixed order inside the program. On
XLA's CPU runtime only an operand dependence orders two custom calls: the
runtime starts a custom call as soon as the buffers it reads are ready, and
runs calls that read disjoint buffers concurrently. An
``optimization_barrier`` does not help, as it only aliases its operands'
buffers and does not order the calls that read them.

:func:`after` therefore recomputes a value from the result it must wait for
(``value + 0 * sum(token)``): whatever reads the new value runs after the
token is computed.
"""

from __future__ import annotations

from typing import Any


def after(value: Any, token: Any, *, per_row: bool = False) -> Any:
    """`value` (an array or a pytree of arrays) recomputed as
    ``value + 0 * sum(token)``, so that whatever reads it runs after `token`
    (an array or a pytree of arrays; no gradient flows into it) is computed.

    ``per_row``: `token` is one array shaped like the vectors ``(..., n)``
    and is summed over its last axis only, so the rows of a batch stay
    independent of each other. Otherwise every entry of every leaf is summed.

    A non-finite token (a failed solve's result) makes the value NaN; the
    solve that reads it then returns NaN anyway.
    """
    import jax
    import jax.numpy as jnp

    token = jax.lax.stop_gradient(token)
    if per_row:
        total = jnp.sum(token, axis=-1, keepdims=True)
    else:
        total = sum(jnp.sum(t) for t in jax.tree_util.tree_leaves(token))
    return jax.tree_util.tree_map(
        lambda v: v + jnp.zeros((), v.dtype) * total.astype(v.dtype), value
    )
