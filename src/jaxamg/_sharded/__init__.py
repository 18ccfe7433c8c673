"""The sharded interface: a row-sharded ``jax.Array`` solved under
``shard_map`` by :func:`jaxamg.make_sharded_solver` (``solver``), with its
matrix (``matrix``), layout of vectors (``layout``), operators
(``operator``), the column exchange of gradients (``exchange``) and the
runtime checks (``runtime``). Builds on ``_dist``'s collective core."""
