"""``config="auto"``: a tuned shipped config chosen from what the matrix and
the call say, for users who do not know which config fits their system.

The choice:

* the outer solver is PCG when the matrix is symmetric (declared with
  ``with_cache(A, is_symmetric=True)``, or its values checked, which needs
  concrete values), and FGMRES otherwise (it converges on either, so a
  matrix whose values are traced under ``jit`` gets it);
* a scalar system (``block_dim == 1``) gets classical AMG: for a symmetric
  matrix the tuned one of ``PCG_CLASSICAL_AGG1_CHEBY2`` (aggressive
  coarsening on the first level, Chebyshev smoothing), otherwise the one of
  ``FGMRES_CLASSICAL_MCGS`` (multicolour Gauss-Seidel, which does not assume
  a symmetric spectrum);
* a block system (``block_dim > 1``, e.g. elasticity) gets smoothed
  aggregation (``PCG_SA_NEAR_NULLSPACE``): with the near null space when one
  is given (``near_nullspace=`` or ``with_cache``, e.g. rigid-body modes),
  else with the block's constant modes;
* a declared null space replaces the dense LU coarse solver, which would
  meet a singular coarse matrix, by block-Jacobi sweeps on a small grid.

The choice is a config dict like any other: keyword overrides
(``tolerance=``, ``max_iters=``) apply to it, and ``info["config_choice"]``
says what was chosen and why (in direct calls; under a transformation
``info`` holds arrays only, and :func:`jaxamg.config.auto_config` tells the
choice for given arguments).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np

from .config_rules import singular_coarse
from .matrix import as_csr, is_concrete
from .shipped_configs import load as load_shipped

AUTO = "auto"
_SCALAR_SYMMETRIC = "PCG_CLASSICAL_AGG1_CHEBY2"
_SCALAR_NONSYMMETRIC = "FGMRES_CLASSICAL_MCGS"
_BLOCK = "PCG_SA_NEAR_NULLSPACE"
_GMRES_RESTART = 30


def is_auto(config: Any) -> bool:
    return isinstance(config, str) and config.strip().lower() == AUTO


@dataclass(frozen=True)
class AutoChoice:
    config: dict
    description: str


def values_are_symmetric(csr: Any) -> bool | None:
    """Whether A equals A^T to rounding (1000 eps of the largest entry);
    None when the structure or the values are traced or batched."""
    import scipy.sparse as sp

    if not is_concrete(csr.indptr, csr.indices, csr.data) or np.ndim(csr.data) != 1:
        return None
    data = np.asarray(csr.data)
    A = sp.csr_matrix((data, np.asarray(csr.indices), np.asarray(csr.indptr)), shape=csr.shape)
    scale = float(np.max(np.abs(data))) if data.size else 0.0
    if scale == 0.0:
        return True
    difference = abs(A - A.T)
    largest = float(difference.max()) if difference.nnz else 0.0
    return largest <= 1000 * np.finfo(data.dtype).eps * scale


def choose(
    csr: Any,
    *,
    block_dim: int,
    singular: bool,
    has_near_nullspace: bool,
    declared_symmetric: bool,
) -> AutoChoice:
    """The config ``"auto"`` stands for on this matrix and call."""
    if declared_symmetric:
        symmetric, why = True, "symmetric (declared)"
    else:
        checked = values_are_symmetric(csr)
        if checked is None:
            symmetric, why = False, "symmetry not checked (traced values)"
        else:
            symmetric = checked
            why = "symmetric (checked)" if checked else "nonsymmetric (checked)"
    reasons = [why]
    if block_dim == 1:
        name = _SCALAR_SYMMETRIC if symmetric else _SCALAR_NONSYMMETRIC
        reasons.append("scalar: classical AMG")
    else:
        name = _BLOCK
        modes = "the given near null space" if has_near_nullspace else "constant modes"
        reasons.append(f"block_dim={block_dim}: smoothed aggregation with {modes}")
    config = load_shipped(name)
    outer = config["solver"]
    if symmetric:
        outer["solver"] = "PCG"
        outer.pop("gmres_n_restart", None)
    else:
        outer["solver"] = "FGMRES"
        outer.setdefault("gmres_n_restart", _GMRES_RESTART)
    if singular:
        outer["preconditioner"] = singular_coarse(outer["preconditioner"])
        reasons.append("declared null space: block-Jacobi sweeps on the coarsest level")
    description = f"{outer['solver']} + AMG from {name}: " + "; ".join(reasons)
    return AutoChoice(config=config, description=description)


def auto_config(
    A: Any,
    block_dim: int = 1,
    *,
    singular: bool = False,
    near_nullspace: bool = False,
) -> tuple[dict[str, Any], str]:
    """The config that ``jaxamg.solve(A, b, config="auto", ...)`` runs with,
    and why it was chosen.

    **Arguments:**

    - `A`: the matrix, as for :func:`jaxamg.solve` (its ``with_cache``
      metadata counts: ``is_symmetric=True`` declares it symmetric).
    - `block_dim`: the block size given to solve.
    - `singular`: True when solve gets a null space (``nullspace=`` or
      ``transpose_nullspace=``, or one attached with ``with_cache``).
    - `near_nullspace`: True when solve gets a near null space.

    **Returns:** ``(config, description)``: a fresh config dict (safe to
    modify) and one line saying what was chosen and why.
    """
    csr = as_csr(A)
    declared = bool(
        getattr(A, "_is_symmetric", False) or getattr(csr.source, "_is_symmetric", False)
    )
    choice = choose(
        csr,
        block_dim=int(block_dim),
        singular=bool(singular),
        has_near_nullspace=bool(near_nullspace),
        declared_symmetric=declared,
    )
    return copy.deepcopy(choice.config), choice.description
