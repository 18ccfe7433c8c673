"""Benchmark problems as scipy.sparse CSR matrices, and their on-disk formats.

Every problem is a sparse matrix ``A`` (CSR, sorted unique column indices,
int32 indices) with a right-hand side ``b``; every solver starts from x0 = 0.
No scaling is applied: every solver receives exactly the same ``A`` and ``b``.

Problem ids are ``family-n``:

``poisson3d-n``   7-point Laplacian on an n^3 interior grid, Dirichlet
                  boundary, stencil (6, -1, ..., -1).  N = n^3.
``aniso2d-n``     -eps u_xx - u_yy (eps = 1e-3) 5-point on an n^2 grid,
                  Dirichlet; strong coupling along y only.  SPD.
``jump3d-n``      -div(k grad u), 7-point on an n^3 grid, Dirichlet; k is a
                  checkerboard of 8^3 blocks with values 1 and 1e4 (face
                  coefficients are harmonic means of the two cell values).
``convdiff2d-n``  -eps Lap(u) + w . grad(u), eps = 1e-3, constant wind
                  w = (cos 30deg, sin 30deg), first-order upwind, n^2 grid,
                  Dirichlet, scaled by h^2.  Nonsymmetric M-matrix; the
                  cell Peclet number h |w| / eps is about 2 at n = 512.

The finite-element families of bench/fem_problems.py (elasticity, jumps,
anisotropy, SUPG, pure Neumann; n = cells per side) share these ids; their
problems may carry a block size, a near null space (the rigid-body modes)
or a constant null space, which the npz file passes on to the runners.

The right-hand side is b ~ N(0, 1) from numpy's default_rng(2024) for every
problem (all frequencies present, independent of the solver), except where
bench/fem_problems.py says otherwise (elasticity's load, Neumann's mean).
"""

from __future__ import annotations

import dataclasses
import math
import os

import fem_problems
import numpy as np
import scipy.sparse as sp

RHS_SEED = 2024
ANISO_EPS = 1e-3
JUMP_CONTRAST = 1e4
JUMP_BLOCKS = 8
CONVDIFF_EPS = 1e-3
CONVDIFF_ANGLE_DEG = 30.0

FAMILIES = {
    "poisson3d": "3D 7-point Poisson, Dirichlet",
    "aniso2d": f"2D anisotropic Poisson, eps = {ANISO_EPS:g}",
    "jump3d": f"3D Poisson, {JUMP_CONTRAST:g} coefficient jumps ({JUMP_BLOCKS}^3 checkerboard)",
    "convdiff2d": f"2D convection-diffusion, eps = {CONVDIFF_EPS:g}, upwind (nonsymmetric)",
    **fem_problems.FAMILIES,
}
SYMMETRIC = {
    "poisson3d": True,
    "aniso2d": True,
    "jump3d": True,
    "convdiff2d": False,
    **fem_problems.SYMMETRIC,
}


@dataclasses.dataclass
class Problem:
    pid: str
    family: str
    n: int
    A: sp.csr_matrix
    b: np.ndarray
    symmetric: bool
    description: str
    block_dim: int = 1
    # (rows, m) near-null-space vectors for smoothed aggregation, e.g. the
    # rigid-body modes of elasticity; None for none.
    near_nullspace: np.ndarray | None = None
    singular: bool = False  # null space: the constants (b is consistent)

    @property
    def rows(self) -> int:
        return self.A.shape[0]

    @property
    def nnz(self) -> int:
        return self.A.nnz

    @property
    def csr_bytes(self) -> int:
        """Bytes of the input CSR as handed to every solver (int32 indptr and
        indices, float64 values)."""
        return 4 * (self.rows + 1) + 4 * self.nnz + 8 * self.nnz


def parse_pid(pid: str) -> tuple[str, int]:
    family, _, n = pid.rpartition("-")
    if family not in FAMILIES or not n.isdigit():
        raise ValueError(
            f"unknown problem id {pid!r}; use one of {', '.join(f + '-N' for f in FAMILIES)}"
        )
    return family, int(n)


def _finish(A: sp.spmatrix) -> sp.csr_matrix:
    A = sp.csr_matrix(A)
    A.sum_duplicates()
    A.sort_indices()
    A.eliminate_zeros()
    A.indptr = A.indptr.astype(np.int32)
    A.indices = A.indices.astype(np.int32)
    A.data = A.data.astype(np.float64)
    return A


def poisson3d(n: int) -> sp.csr_matrix:
    I = sp.identity(n, format="csr")
    T = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
    A = sp.kron(sp.kron(T, I), I) + sp.kron(sp.kron(I, T), I) + sp.kron(sp.kron(I, I), T)
    return _finish(A)


def aniso2d(n: int, eps: float = ANISO_EPS) -> sp.csr_matrix:
    I = sp.identity(n, format="csr")
    T = sp.diags([-np.ones(n - 1), 2 * np.ones(n), -np.ones(n - 1)], [-1, 0, 1], format="csr")
    # unknown (i, j) -> i * n + j with i along x (slow index), j along y (fast index)
    A = eps * sp.kron(T, I) + sp.kron(I, T)
    return _finish(A)


def jump3d(n: int, contrast: float = JUMP_CONTRAST, blocks: int = JUMP_BLOCKS) -> sp.csr_matrix:
    """Node-based finite differences for -div(k grad u) on the unit cube.

    k at node (i, j, l) is ``contrast`` when the block indices sum to an odd
    number and 1 otherwise.  The coupling between neighbours p and q is the
    harmonic mean 2 k_p k_q / (k_p + k_q); a neighbour on the Dirichlet
    boundary contributes k_p to the diagonal.
    """
    idx = np.arange(n)
    blk = (idx * blocks) // n
    bi, bj, bl = np.meshgrid(blk, blk, blk, indexing="ij")
    k = np.where((bi + bj + bl) % 2 == 1, contrast, 1.0).ravel()
    N = n**3
    ids = np.arange(N).reshape(n, n, n)
    diag = np.zeros(N)
    rows, cols, vals = [], [], []
    for axis in range(3):
        for shift in (-1, 1):
            src = [slice(None)] * 3
            dst = [slice(None)] * 3
            if shift == 1:
                src[axis], dst[axis] = slice(0, n - 1), slice(1, n)
            else:
                src[axis], dst[axis] = slice(1, n), slice(0, n - 1)
            p = ids[tuple(src)].ravel()
            q = ids[tuple(dst)].ravel()
            w = 2.0 * k[p] * k[q] / (k[p] + k[q])
            rows.append(p)
            cols.append(q)
            vals.append(-w)
            np.add.at(diag, p, w)
            # boundary face on the other side of p
            bnd = [slice(None)] * 3
            bnd[axis] = n - 1 if shift == 1 else 0
            pb = ids[tuple(bnd)].ravel()
            diag[pb] += k[pb]
    rows.append(np.arange(N))
    cols.append(np.arange(N))
    vals.append(diag)
    A = sp.coo_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(N, N)
    )
    return _finish(A)


def convdiff2d(
    n: int, eps: float = CONVDIFF_EPS, angle_deg: float = CONVDIFF_ANGLE_DEG
) -> sp.csr_matrix:
    h = 1.0 / (n + 1)
    wx = math.cos(math.radians(angle_deg))
    wy = math.sin(math.radians(angle_deg))

    def one_d(w: float) -> sp.csr_matrix:
        # h^2 * (-eps d2/dx2 + w d/dx) with first-order upwind differences
        lower = -eps - h * max(w, 0.0)
        upper = -eps + h * min(w, 0.0)
        main = 2 * eps + h * abs(w)
        return sp.diags(
            [lower * np.ones(n - 1), main * np.ones(n), upper * np.ones(n - 1)],
            [-1, 0, 1],
            format="csr",
        )

    I = sp.identity(n, format="csr")
    A = sp.kron(one_d(wx), I) + sp.kron(I, one_d(wy))
    return _finish(A)


BUILDERS = {"poisson3d": poisson3d, "aniso2d": aniso2d, "jump3d": jump3d, "convdiff2d": convdiff2d}


def make_problem(pid: str) -> Problem:
    family, n = parse_pid(pid)
    rng = np.random.default_rng(RHS_SEED)
    description = f"{FAMILIES[family]}, n = {n}"
    if family not in fem_problems.FAMILIES:
        A = BUILDERS[family](n)
        return Problem(
            pid, family, n, A, rng.standard_normal(A.shape[0]), SYMMETRIC[family], description
        )
    system = fem_problems.build(family, n, rng)
    near_nullspace = None
    if system.coordinates is not None:
        from jaxamg import rigid_body_modes

        near_nullspace = rigid_body_modes(system.coordinates)
    return Problem(
        pid,
        family,
        n,
        _finish(system.A),
        system.b,
        SYMMETRIC[family],
        description + " cells per side",
        block_dim=system.block_dim,
        near_nullspace=near_nullspace,
        singular=system.singular,
    )


# ---- on-disk formats ---------------------------------------------------------


def write_npz(prob: Problem, path: str) -> None:
    extras = {} if prob.near_nullspace is None else {"near_nullspace": prob.near_nullspace}
    np.savez(
        path,
        indptr=prob.A.indptr,
        indices=prob.A.indices,
        data=prob.A.data,
        b=prob.b,
        block_dim=prob.block_dim,
        singular=prob.singular,
        **extras,
    )


def load_npz(path: str) -> tuple[sp.csr_matrix, np.ndarray]:
    """Load (A, b).  Arrays are read straight into the CSR object, so the
    process holds one copy of the matrix after this returns."""
    with np.load(path) as z:
        indptr, indices, data, b = z["indptr"], z["indices"], z["data"], z["b"]
    n = len(indptr) - 1
    A = sp.csr_matrix((data, indices, indptr), shape=(n, n), copy=False)
    A.has_sorted_indices = True
    return A, b


def load_structure(path: str) -> dict:
    """What the npz says about the system beyond (A, b): block_dim,
    near_nullspace (a C-contiguous float64 array or None) and singular."""
    with np.load(path) as z:
        near = z["near_nullspace"] if "near_nullspace" in z.files else None
        return {
            "block_dim": int(z["block_dim"]) if "block_dim" in z.files else 1,
            "near_nullspace": None if near is None else np.ascontiguousarray(near, np.float64),
            "singular": bool(z["singular"]) if "singular" in z.files else False,
        }


def write_bin(prob: Problem, path: str) -> None:
    """Binary format read by peers/hypre_driver.c."""
    A = prob.A
    with open(path, "wb") as f:
        f.write(b"JXAMGCSR")
        np.array([A.shape[0], A.nnz], dtype=np.int64).tofile(f)
        A.indptr.astype(np.int64).tofile(f)
        A.indices.astype(np.int32).tofile(f)
        A.data.astype(np.float64).tofile(f)
        prob.b.astype(np.float64).tofile(f)


def materialize(pid: str, workdir: str) -> dict:
    """Build the problem and write its npz and bin files into workdir."""
    os.makedirs(workdir, exist_ok=True)
    npz = os.path.join(workdir, f"{pid}.npz")
    binp = os.path.join(workdir, f"{pid}.bin")
    prob = make_problem(pid)
    write_npz(prob, npz)  # always rewritten, so a changed generator never
    write_bin(prob, binp)  # leaves stale files behind
    return {
        "pid": pid,
        "family": prob.family,
        "n": prob.n,
        "rows": prob.rows,
        "nnz": prob.nnz,
        "csr_bytes": prob.csr_bytes,
        "symmetric": prob.symmetric,
        "description": prob.description,
        "block_dim": prob.block_dim,
        "near_nullspace": None if prob.near_nullspace is None else prob.near_nullspace.shape[1],
        "singular": prob.singular,
        "npz": npz,
        "bin": binp,
    }


if __name__ == "__main__":  # quick self-check
    for pid in ("poisson3d-8", "aniso2d-16", "jump3d-16", "convdiff2d-16"):
        p = make_problem(pid)
        A = p.A
        sym = abs(A - A.T).max()
        rowsum_min = np.asarray(A.sum(axis=1)).min()
        print(
            f"{pid:14s} N={p.rows:6d} nnz={p.nnz:7d} asym={sym:.2e} "
            f"min rowsum={rowsum_min:.3e} diag>0={bool((A.diagonal() > 0).all())}"
        )
