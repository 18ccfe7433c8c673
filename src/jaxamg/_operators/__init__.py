"""Matrix-free operators made matrices, behind :mod:`jaxamg.sparsity`: the
sparsity pattern traced from the jaxpr (``tracing`` with ``const_eval``,
``index_maps``, ``deps``) or probed (``probing``), the column colouring
(``coloring``) and the values recovered by coloured products
(``materialize``). Imports only ``_core``."""
