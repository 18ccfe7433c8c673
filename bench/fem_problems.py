"""Finite-element benchmark problems, assembled with scikit-fem (P1 elements).

Problem ids are ``family-n`` with n the cells per side of a structured mesh of
the unit square (triangles) or cube (tetrahedra, 6 per cube). Dirichlet
unknowns are eliminated (``skfem.condense``), so every matrix is nonsingular
except the pure-Neumann one.

``elast3d-nu030-n``, ``-nu045-n``, ``-nu049-n``
    3D linear elasticity (E = 1, nu = 0.3, 0.45, 0.49), clamped on x = 0,
    under its own weight; 3 unknowns per node, node-interleaved (block_dim
    3), with the node coordinates for the rigid-body modes. SPD.
``jumpfem3d-n``   -div(k grad u), k = 1 or 1e4 on a 4^3 checkerboard of
                  subcubes, Dirichlet on the whole boundary. SPD.
``anisofem2d-n``  -eps u_xx - u_yy, eps = 1e-3, Dirichlet. SPD.
``supg2d-n``      -eps Lap u + w . grad u, eps = 1e-3, |w| = 1 at 30 degrees,
                  SUPG-stabilised, Dirichlet. Nonsymmetric.
``neumann3d-n``   -Lap u with natural boundary conditions: singular, its null
                  space the constants; b is orthogonal to them (consistent).

Right-hand sides: elasticity gets its load vector (the body force); the
scalar problems get b ~ N(0, 1) from the caller's generator (all frequencies
present, as for bench/problems.py), projected onto the constants' complement
for the Neumann problem.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import scipy.sparse as sp

ELASTICITY_NUS = {"nu030": 0.3, "nu045": 0.45, "nu049": 0.49}
JUMP_CONTRAST = 1e4
JUMP_BLOCKS = 4
ANISO_EPS = 1e-3
SUPG_EPS = 1e-3
SUPG_ANGLE_DEG = 30.0

FAMILIES = {
    **{
        f"elast3d-{key}": f"3D elasticity, P1 tetrahedra, nu = {nu:g}, clamped, body force"
        for key, nu in ELASTICITY_NUS.items()
    },
    "jumpfem3d": f"3D P1 Poisson, {JUMP_CONTRAST:g} coefficient jumps "
    f"({JUMP_BLOCKS}^3 checkerboard), Dirichlet",
    "anisofem2d": f"2D P1 anisotropic Poisson, eps = {ANISO_EPS:g}, Dirichlet",
    "supg2d": f"2D SUPG P1 convection-diffusion, eps = {SUPG_EPS:g} (nonsymmetric)",
    "neumann3d": "3D P1 Poisson, pure Neumann (singular, constant null space)",
}
SYMMETRIC = {family: family != "supg2d" for family in FAMILIES}


@dataclasses.dataclass
class FemSystem:
    """A x = b with what a solver may need to know about it."""

    A: sp.csr_matrix
    b: np.ndarray
    block_dim: int = 1
    coordinates: np.ndarray | None = None  # (nodes, dim), one row per block
    singular: bool = False  # null space: the constants


def _grid(cells: int) -> np.ndarray:
    return np.linspace(0.0, 1.0, cells + 1)


def _tet_mesh(cells: int):
    import skfem

    return skfem.MeshTet.init_tensor(_grid(cells), _grid(cells), _grid(cells))


def _tri_mesh(cells: int):
    import skfem

    return skfem.MeshTri.init_tensor(_grid(cells), _grid(cells))


def _dirichlet_system(basis, K, rng: np.random.Generator) -> tuple[sp.csr_matrix, np.ndarray]:
    """K restricted to the interior unknowns, and a random right-hand side."""
    import skfem

    A = skfem.condense(K, D=basis.get_dofs(), expand=False)
    A = sp.csr_matrix(A)
    return A, rng.standard_normal(A.shape[0])


# ---- elasticity ------------------------------------------------------------------


def elasticity(dim: int, cells: int, nu: float = 0.3, simplices: bool = False):
    """(A, b, coordinates of the free nodes): K u = f on the unit square or
    cube (E = 1), clamped on x = 0, under its own weight (body force -e_y).
    Q1 / Hex1 elements, or P1 triangles / tetrahedra with ``simplices``."""
    import skfem
    from skfem.models.elasticity import lame_parameters, linear_elasticity

    if dim == 2:
        mesh_type = skfem.MeshTri if simplices else skfem.MeshQuad
        scalar = skfem.ElementTriP1() if simplices else skfem.ElementQuad1()
    else:
        mesh_type = skfem.MeshTet if simplices else skfem.MeshHex
        scalar = skfem.ElementTetP1() if simplices else skfem.ElementHex1()
    mesh = mesh_type.init_tensor(*[_grid(cells)] * dim)
    basis = skfem.Basis(mesh, skfem.ElementVector(scalar))
    # Node-interleaved numbering (what block_dim expects): node i owns
    # unknowns dim*i .. dim*i + dim - 1.
    nodal = basis.nodal_dofs
    expected = dim * np.arange(mesh.nvertices)[None, :] + np.arange(dim)[:, None]
    if basis.N != dim * mesh.nvertices or not np.array_equal(nodal, expected):
        raise RuntimeError("scikit-fem numbered the vector dofs other than node-interleaved")
    K = skfem.asm(linear_elasticity(*lame_parameters(1.0, nu)), basis)

    @skfem.LinearForm
    def weight(v, w):
        return -v[1]

    f = skfem.asm(weight, basis)
    # Every component of a clamped node goes, so the free unknowns stay
    # node-interleaved.
    clamped = basis.get_dofs(lambda x: np.isclose(x[0], 0.0)).all()
    A, b = skfem.condense(K, f, D=clamped, expand=False)
    free = np.setdiff1d(np.arange(basis.N), clamped)
    nodes = free[::dim] // dim
    return sp.csr_matrix(A), b, mesh.p[:, nodes].T


def elasticity_3d(cells: int, nu: float) -> FemSystem:
    """P1-tetrahedron elasticity on the clamped unit cube (block_dim 3)."""
    A, b, coordinates = elasticity(3, cells, nu, simplices=True)
    return FemSystem(A, b, block_dim=3, coordinates=coordinates)


# ---- scalar problems ---------------------------------------------------------------


def checkerboard(x: np.ndarray, blocks: int = JUMP_BLOCKS, contrast: float = JUMP_CONTRAST):
    """k(x) = contrast where the subcube indices of x sum to an odd number."""
    index = np.minimum(np.floor(x * blocks), blocks - 1).astype(int)
    return np.where(index.sum(axis=0) % 2 == 1, contrast, 1.0)


def jump_fem3d(cells: int, rng: np.random.Generator) -> FemSystem:
    """-div(k grad u) with a checkerboard k, P1 tetrahedra, Dirichlet."""
    import skfem
    from skfem.helpers import dot, grad

    @skfem.BilinearForm
    def diffusion(u, v, w):
        # k per element, from its centroid (the mean of its quadrature points),
        # so a jump never falls inside an element.
        k = checkerboard(w.x.mean(axis=-1))[:, None]
        return k * dot(grad(u), grad(v))

    basis = skfem.Basis(_tet_mesh(cells), skfem.ElementTetP1())
    return FemSystem(*_dirichlet_system(basis, skfem.asm(diffusion, basis), rng))


def aniso_fem2d(cells: int, rng: np.random.Generator, eps: float = ANISO_EPS) -> FemSystem:
    """-eps u_xx - u_yy, P1 triangles, Dirichlet."""
    import skfem

    @skfem.BilinearForm
    def anisotropic(u, v, w):
        return eps * u.grad[0] * v.grad[0] + u.grad[1] * v.grad[1]

    basis = skfem.Basis(_tri_mesh(cells), skfem.ElementTriP1())
    return FemSystem(*_dirichlet_system(basis, skfem.asm(anisotropic, basis), rng))


def supg_tau(h, speed: float, eps: float):
    """The SUPG parameter h / (2 |w|) (coth(Pe) - 1 / Pe), Pe = |w| h / (2 eps):
    the optimal one in 1D, which vanishes as diffusion takes over."""
    peclet = speed * h / (2.0 * eps)
    return h / (2.0 * speed) * (1.0 / np.tanh(peclet) - 1.0 / peclet)


def supg2d(
    cells: int, rng: np.random.Generator, eps: float = SUPG_EPS, angle_deg: float = SUPG_ANGLE_DEG
) -> FemSystem:
    """-eps Lap u + w . grad u with streamline-upwind Petrov-Galerkin
    stabilisation, P1 triangles, Dirichlet. On P1 the second derivatives
    vanish, so the stabilisation is tau (w . grad u, w . grad v) per element."""
    import skfem
    from skfem.helpers import dot, grad

    wind = np.array([math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))])

    @skfem.BilinearForm
    def convection_diffusion(u, v, w):
        w_grad_u = wind[0] * u.grad[0] + wind[1] * u.grad[1]
        w_grad_v = wind[0] * v.grad[0] + wind[1] * v.grad[1]
        tau = supg_tau(w.h, 1.0, eps)
        return eps * dot(grad(u), grad(v)) + w_grad_u * v + tau * w_grad_u * w_grad_v

    basis = skfem.Basis(_tri_mesh(cells), skfem.ElementTriP1())
    return FemSystem(*_dirichlet_system(basis, skfem.asm(convection_diffusion, basis), rng))


def neumann3d(cells: int, rng: np.random.Generator) -> FemSystem:
    """-Lap u, P1 tetrahedra, natural boundary conditions everywhere."""
    import skfem
    from skfem.models.poisson import laplace

    basis = skfem.Basis(_tet_mesh(cells), skfem.ElementTetP1())
    A = sp.csr_matrix(skfem.asm(laplace, basis))
    b = rng.standard_normal(A.shape[0])
    return FemSystem(A, b - b.mean(), singular=True)  # 1^T b = 0: consistent


def build(family: str, cells: int, rng: np.random.Generator) -> FemSystem:
    """The system of ``family-cells``; rng draws the scalar right-hand sides."""
    if family.startswith("elast3d-"):
        return elasticity_3d(cells, ELASTICITY_NUS[family[len("elast3d-") :]])
    builders = {
        "jumpfem3d": jump_fem3d,
        "anisofem2d": aniso_fem2d,
        "supg2d": supg2d,
        "neumann3d": neumann3d,
    }
    return builders[family](cells, rng)
