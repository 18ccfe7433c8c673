"""Smoothers on the GPU: MULTICOLOR_GS, MULTICOLOR_DILU and MULTICOLOR_ILU
run the engine's one sweep (multicolor_methods.h) on the CUDA backend,
with the colouring and factors of the host setup, inside AMG or as a
Krylov method's preconditioner (as are JACOBI_L1 and BLOCK_JACOBI).
Compared with SciPy's solve and a dense adjoint; info says the solve ran
on the device."""

import jax
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from gpu_testing import assert_gradient_matches_dense, requires_cuda
from test_gpu_solve import PCG_AGG, convection2d, gpu, on, poisson3d, rel

import jaxamg
from jaxamg._core import ffi as _ffi

pytestmark = requires_cuda


def with_smoother(outer, smoother, selector="SIZE_8"):
    amg = dict(PCG_AGG["solver"]["preconditioner"], selector=selector, smoother=smoother)
    return {
        "config_version": 2,
        "solver": dict(PCG_AGG["solver"], solver=outer, preconditioner=amg),
    }


DILU = {"scope": "dilu", "solver": "MULTICOLOR_DILU", "relaxation_factor": 1.0}
SYM_GS = {"scope": "gs", "solver": "MULTICOLOR_GS", "symmetric_GS": 1}
ILU = {"scope": "ilu", "solver": "MULTICOLOR_ILU"}


@pytest.mark.parametrize(
    "outer, smoother",
    [("FGMRES", DILU), ("PCG", SYM_GS), ("PBICGSTAB", DILU), ("FGMRES", ILU)],
)
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-8), (np.float32, 1e-4)])
def test_solve_runs_on_the_device_and_matches_spsolve(rng, outer, smoother, dtype, tol):
    A = poisson3d(14).astype(dtype)
    b = rng.normal(size=A.shape[0]).astype(dtype)
    cfg = with_smoother(outer, smoother)
    if dtype == np.float32:
        cfg["solver"]["tolerance"] = 1e-6
    M, bg = on(gpu(), A, b)
    x, info = jax.block_until_ready(jaxamg.solve(M, bg, config=cfg))
    assert int(info["status"]) == 0
    assert _ffi.cuda_native().last_solve()["on_device"]
    assert info["solve_on_device"] is True
    # The colouring is built by the host setup, and info names why.
    assert info["setup_on_device"] is False and smoother["solver"] in info["setup_reason"]
    ref = spla.spsolve(A.astype(np.float64).tocsc(), b.astype(np.float64))
    assert rel(x, ref) < tol


def test_gradient_through_multicolour_gauss_seidel_matches_dense(rng):
    A = convection2d(12, rng)
    n = A.shape[0]
    b = rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    M, bg, wg = on(gpu(), A, b, w)
    gs = dict(SYM_GS, symmetric_GS=0)
    cfg = with_smoother("PBICGSTAB", gs, selector="SIZE_2")
    assert_gradient_matches_dense(A, M, bg, wg, cfg)


def krylov_with(outer, preconditioner):
    cfg = with_smoother(outer, SYM_GS)
    cfg["solver"]["preconditioner"] = preconditioner
    cfg["solver"]["max_iters"] = 500
    return cfg


@pytest.mark.parametrize(
    "outer, preconditioner",
    [
        ("PCG", {"scope": "p", "solver": "MULTICOLOR_DILU"}),
        ("PCG", dict(SYM_GS, max_iters=2)),
        ("PBICGSTAB", {"scope": "p", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.8}),
        ("FGMRES", {"scope": "p", "solver": "JACOBI_L1"}),
        ("PBICGSTAB", ILU),
    ],
)
def test_smoother_preconditioner_runs_on_the_device(rng, outer, preconditioner):
    A = convection2d(24, rng) if outer != "PCG" else poisson3d(10)
    b = rng.normal(size=A.shape[0])
    M, bg = on(gpu(), A, b)
    x, info = jax.block_until_ready(jaxamg.solve(M, bg, config=krylov_with(outer, preconditioner)))
    assert int(info["status"]) == 0
    assert info["solve_on_device"] is True, info.get("host_reason")
    assert rel(x, spla.spsolve(A.tocsc(), b)) < 1e-7


def test_unsupported_smoother_preconditioner_names_itself(rng):
    A = poisson3d(8)
    b = rng.normal(size=A.shape[0])
    M, bg = on(gpu(), A, b)
    cfg = krylov_with("PBICGSTAB", {"scope": "p", "solver": "GS"})
    x, info = jax.block_until_ready(jaxamg.solve(M, bg, config=cfg))
    assert info["solve_on_device"] is False and "GS" in info["host_reason"]
    assert rel(x, spla.spsolve(A.tocsc(), b)) < 1e-7


@pytest.mark.parametrize("smoother", ["BLOCK_JACOBI", "MULTICOLOR_GS"])
def test_block_smoothers_run_on_the_device(rng, smoother):
    # A 2x2-block system: a coupled pair of Poisson problems.
    P = poisson3d(8)
    A = sp.kron(P, np.array([[2.0, 1.0], [1.0, 2.0]])).tocsr()
    b = rng.normal(size=A.shape[0])
    cfg = with_smoother("PBICGSTAB", {"scope": "s", "solver": smoother, "relaxation_factor": 0.7})
    M, bg = on(gpu(), A, b)
    x, info = jax.block_until_ready(jaxamg.solve(M, bg, config=cfg, block_dim=2))
    assert int(info["status"]) == 0
    assert info["solve_on_device"] is True, info.get("host_reason")
    assert rel(x, spla.spsolve(A.tocsc(), b)) < 1e-7
