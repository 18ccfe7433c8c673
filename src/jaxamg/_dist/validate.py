"""Input checks of the MPI solve, agreed by every rank before any native call.

Two phases:

1. :func:`prepare_local` normalises and checks this rank's input (matrix
   block, right-hand side, initial guess, partition, config). It may fail on
   one rank only, so it runs inside ``run_and_agree``: one allgather shares
   "failed or not" plus a small summary of this rank (sizes, partition,
   dtype, a hash of the configuration), and every rank raises the lowest
   failing rank's error.
2. :func:`check_global` looks at the gathered summaries (identical on every
   rank, so every rank reaches the same verdict without more communication):
   the partition (gaps, overlaps, order, empty ranks), `nglobal`, and
   settings that must agree (config, dtype, x0, symmetry, batch shape).

Nothing larger than these summaries is ever gathered.
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

import numpy as np

from .._core.checks import check_dtype, preferred_dtype, validate_with_engine
from .._core.matrix import as_csr, is_concrete
from .._core.stats import check_writable
from ..config import prepare_config
from ..sparsity import cache_coloring, materialize_operator
from .comm import DistributedInputError
from .nullspace import declared_specs, local_bases

WHERE = "jaxamg.solve"


@dataclasses.dataclass
class LocalInput:
    """This rank's checked input (JAX arrays, maybe traced)."""

    csr: Any  # CsrInput of shape (n_local, nglobal), global columns
    data: Any
    b: Any
    x0: Any
    use_x0: bool
    dtype: Any
    row_start: int
    row_end: int
    nglobal: int
    block_dim: int
    config_text: str
    symmetric: bool
    source: Any  # the object carrying with_cache metadata
    null_specs: dict = dataclasses.field(default_factory=dict)  # declared null spaces
    null_columns: tuple = (None, None)  # k of nullspace, transpose_nullspace (None: none)

    @property
    def singular(self) -> bool:
        return any(k is not None for k in self.null_columns)


def _int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"`{WHERE}`: `{name}` must be an integer >= {minimum}, got {value!r}.")
    return int(value)


def parse_partition(partition_info: Any, nglobal: Any) -> tuple[int, int, int]:
    if nglobal is None or partition_info is None:
        missing = [
            n for n, v in (("nglobal", nglobal), ("partition_info", partition_info)) if v is None
        ]
        raise ValueError(
            f"`{WHERE}`: MPI mode needs `nglobal` and `partition_info=(row_start, row_end)`; "
            f"missing {', '.join(missing)}. Pass both (see jaxamg.mpi_utils.get_partition_info), "
            "or attach them with jaxamg.with_cache(A, mpi=jaxamg.cache_mpi_metadata(...))."
        )
    nglobal = _int("nglobal", nglobal, 1)
    try:
        rs, re = partition_info
        rs, re = _int("partition_info[0]", rs, 0), _int("partition_info[1]", re, 0)
    except (TypeError, ValueError) as e:
        raise ValueError(
            f"`{WHERE}`: `partition_info` must be (row_start, row_end) with integers "
            f"0 <= row_start <= row_end <= nglobal, got {partition_info!r} ({e})."
        ) from None
    if not rs <= re <= nglobal:
        raise ValueError(
            f"`{WHERE}`: `partition_info` ({rs}, {re}) is not a range of rows of the "
            f"{nglobal}-row system; pass 0 <= row_start <= row_end <= nglobal."
        )
    return rs, re, nglobal


def _materialize(A: Any, n_local: int, nglobal: int):
    """A callable operator as its BCSR row block (colored as (n_local,
    nglobal) on first use), carrying the operator's with_cache flags."""
    if getattr(A, "_coloring_info", None) is None:
        cache_coloring(A, (n_local, nglobal))
    M = materialize_operator(A, n_local, where=WHERE)
    for name in ("_is_symmetric", "_nullspace", "_transpose_nullspace"):
        if hasattr(A, name):
            setattr(M, name, getattr(A, name))
    return M


def prepare_local(
    A: Any,
    b: Any,
    x0: Any,
    *,
    partition_info: Any,
    nglobal: Any,
    block_dim: Any,
    reuse_setup: Any,
    save_stats_file: Any,
    rank: int,
    config_text: str | None = None,
    config: Any = None,
    kwargs: dict | None = None,
    nullspace: Any = None,
    transpose_nullspace: Any = None,
    save_stats: bool = False,
    singular: bool = False,
) -> LocalInput:
    """Checks this rank's input; raises on the first problem."""
    import jax.numpy as jnp

    rs, re, nglobal = parse_partition(partition_info, nglobal)
    n_local = re - rs
    if isinstance(block_dim, bool) or not isinstance(block_dim, (int, np.integer)) or block_dim < 1:
        raise ValueError(f"`{WHERE}`: `block_dim` must be an integer >= 1, got {block_dim!r}.")
    block_dim = int(block_dim)
    if not isinstance(reuse_setup, (bool, np.bool_)):
        raise TypeError(f"`{WHERE}`: `reuse_setup` must be True or False, got {reuse_setup!r}.")
    source = A
    if callable(A) and not hasattr(A, "shape"):
        A = _materialize(A, n_local, nglobal)
    csr = as_csr(A, WHERE)
    if tuple(csr.shape) != (n_local, nglobal):
        raise ValueError(
            f"`{WHERE}`: `A` has shape {tuple(csr.shape)} but this rank owns rows {rs}:{re} of "
            f"a {nglobal}-row system, so it must be ({n_local}, {nglobal}): this rank's rows "
            "with global column indices."
        )
    check_dtype("A", csr.data.dtype)
    if is_concrete(csr.indices) and csr.nnz:
        cols = np.asarray(csr.indices)
        if cols.min() < 0 or cols.max() >= nglobal:
            raise ValueError(
                f"`{WHERE}`: `A` has column indices in [{cols.min()}, {cols.max()}], outside the "
                f"global range [0, {nglobal}); pass global column indices."
            )
    if n_local % block_dim or nglobal % block_dim or rs % block_dim:
        raise ValueError(
            f"`{WHERE}`: with block_dim={block_dim} every rank's rows must be whole blocks, "
            f"but this rank owns rows {rs}:{re} of {nglobal} (not divisible by {block_dim}); "
            "pick a partition whose boundaries are multiples of block_dim."
        )
    if b is not None:
        if not hasattr(b, "shape"):
            b = np.asarray(b)
        check_dtype("b", b.dtype)
        if len(b.shape) != 1 or b.shape[0] != n_local:
            raise ValueError(
                f"`{WHERE}`: `b` has shape {tuple(b.shape)} but this rank owns {n_local} rows "
                f"({rs}:{re}); pass this rank's slice of b (jaxamg.mpi_utils.partition_vector)."
            )
    if x0 is not None:
        if not hasattr(x0, "shape"):
            x0 = np.asarray(x0)
        check_dtype("x0", x0.dtype)
        if b is not None and tuple(x0.shape) != tuple(b.shape):
            raise ValueError(
                f"`{WHERE}`: x0 must have the same shape as b, got {tuple(x0.shape)} and "
                f"{tuple(b.shape)}; pass this rank's slice of the initial guess."
            )
    if save_stats_file is not None:
        if b is not None and not is_concrete(csr.data, b):
            raise ValueError(
                f"`{WHERE}`: `save_stats_file` works only in a direct call, not under jax.jit, "
                "jax.grad or jax.vmap; call solve directly to write statistics."
            )
        if rank == 0:
            check_writable(save_stats_file, WHERE)
    dtype = preferred_dtype(csr.data, b if b is not None else csr.data)
    data = jnp.asarray(csr.data, dtype=dtype)
    b = None if b is None else jnp.asarray(b, dtype=dtype)
    use_x0 = x0 is not None
    if b is not None:
        x0 = jnp.zeros_like(b) if x0 is None else jnp.asarray(x0, dtype=dtype)
        if is_concrete(data, b, x0):
            for name, v in (("A", data), ("b", b), ("x0", x0)):
                if not bool(jnp.all(jnp.isfinite(v))):
                    raise ValueError(
                        f"`{WHERE}`: `{name}` contains NaN or infinite values on this rank; "
                        "pass finite values."
                    )
    symmetric = bool(
        getattr(source, "_is_symmetric", False)
        or getattr(A, "_is_symmetric", False)
        or getattr(csr.source, "_is_symmetric", False)
    )
    null_specs = declared_specs(nullspace, transpose_nullspace, (source, A, csr.source), symmetric)
    columns = local_bases(null_specs, n_local, nglobal, dtype)
    null_columns = (columns["nullspace"], columns["transpose_nullspace"])
    if config_text is None:
        config_text = prepare_config(
            config,
            mpi=True,
            save_stats=save_stats or save_stats_file is not None,
            block_dim=block_dim,
            singular=singular or any(k is not None for k in null_columns),
            **(kwargs or {}),
        )
    validate_with_engine(config_text)
    return LocalInput(
        csr=csr,
        data=data,
        b=b,
        x0=x0,
        use_x0=use_x0,
        dtype=dtype,
        row_start=rs,
        row_end=re,
        nglobal=nglobal,
        block_dim=block_dim,
        config_text=config_text,
        symmetric=symmetric,
        source=source,
        null_specs=null_specs,
        null_columns=null_columns,
    )


def summary(local: LocalInput, reuse_setup: bool) -> dict:
    """What every rank must know about this one (a few numbers and a hash)."""
    settings = (local.config_text, local.block_dim, bool(reuse_setup))
    digest = hashlib.blake2b(repr(settings).encode(), digest_size=8).hexdigest()
    return {
        "row_start": local.row_start,
        "row_end": local.row_end,
        "nglobal": local.nglobal,
        "nnz": local.csr.nnz,
        "config_hash": digest,
        "dtype": np.dtype(local.dtype).name,
        "use_x0": local.use_x0,
        "symmetric": local.symmetric,
        "batch": None if local.b is None else tuple(local.b.shape[:-1]),
        "null_columns": local.null_columns,
    }


def check_global(summaries: list[dict]) -> None:
    """Raises DistributedInputError (identically on every rank) when the
    ranks' inputs do not form one consistent system."""
    nglobals = [s["nglobal"] for s in summaries]
    if len(set(nglobals)) > 1:
        raise DistributedInputError(
            f"`{WHERE}`: the ranks disagree on nglobal: {_per_rank(nglobals)}; pass the same "
            "global number of rows on every rank."
        )
    nglobal = nglobals[0]
    expected = 0
    for rank, s in enumerate(summaries):
        rs, re = s["row_start"], s["row_end"]
        if rs != expected:
            kind = "a gap" if rs > expected else "an overlap"
            raise DistributedInputError(
                f"`{WHERE}`: the row partition has {kind}: rank {rank} starts at row {rs} but "
                f"the rows of the ranks before it end at {expected} (partitions: "
                f"{_per_rank([(t['row_start'], t['row_end']) for t in summaries])}); every rank "
                "must own the contiguous block that follows the previous rank's, as "
                "jaxamg.mpi_utils.get_partition_info gives."
            )
        if re == rs:
            raise DistributedInputError(
                f"`{WHERE}`: rank {rank} owns no rows (partition_info=({rs}, {re})); every rank "
                "must own at least one row: run on fewer ranks or pass a sub-communicator "
                "(comm.Split) of the ranks that own rows."
            )
        expected = re
    if expected != nglobal:
        raise DistributedInputError(
            f"`{WHERE}`: the ranks' rows end at {expected} but nglobal={nglobal}; the row "
            "blocks must cover every row exactly once."
        )
    for key, what in (
        ("config_hash", "the solver configuration (config, kwargs, block_dim, reuse_setup)"),
        ("dtype", "the precision (dtype of A and b)"),
        ("use_x0", "whether an initial guess x0 is given"),
        ("symmetric", "the is_symmetric flag of with_cache"),
        ("batch", "the batch shape (jax.vmap lanes) of b"),
        (
            "null_columns",
            "the declared null spaces (number of columns of nullspace and "
            "transpose_nullspace, None where not declared)",
        ),
    ):
        values = [s[key] for s in summaries]
        if len(set(values)) > 1:
            raise DistributedInputError(
                f"`{WHERE}`: the ranks disagree on {what}: {_per_rank(values)}; every rank "
                "must call solve with the same settings."
            )


def _per_rank(values: list) -> str:
    return ", ".join(f"rank {r}: {v}" for r, v in enumerate(values))
