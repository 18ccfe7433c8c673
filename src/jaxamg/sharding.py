"""The JAX sharding interface under JAX-AMG's module path ``jaxamg.sharding``.

A documented re-export: the functions live in ``jaxamg._sharded``
(:func:`make_sharded_vector` in ``_sharded.layout``,
:func:`make_sharded_matrix` and :class:`ShardedMatrix` in
``_sharded.matrix``, :func:`make_sharded_solver` and :class:`ShardedSolve`
in ``_sharded.solver``) and are the same objects as ``jaxamg.make_sharded_*``.
See docs/sharding.md.
"""

from ._sharded.layout import make_sharded_vector
from ._sharded.matrix import ShardedMatrix, make_sharded_matrix
from ._sharded.solver import ShardedSolve, make_sharded_solver

__all__ = [
    "make_sharded_vector",
    "make_sharded_matrix",
    "ShardedMatrix",
    "make_sharded_solver",
    "ShardedSolve",
]
