"""IDR(s) and IDRMSYNC on the GPU: the engine's one IDR method
(idr_method.h) on the CUDA backend. Compared with SciPy's solve, with the
CPU engine's solve of the same config (iterations within one) and, for
gradients, with a dense solve; info says the solve ran on the device."""

import jax
import numpy as np
import pytest
import scipy.sparse.linalg as spla
from gpu_testing import assert_gradient_matches_dense, requires_cuda
from test_gpu_solve import PCG_AGG, convection2d, cpu, gpu, on, rel

import jaxamg

pytestmark = requires_cuda


def idr_config(name, s, preconditioner=None):
    solver = dict(PCG_AGG["solver"], solver=name, subspace_dim_s=s, max_iters=400)
    if preconditioner is not None:
        solver["preconditioner"] = preconditioner
    return {"config_version": 2, "solver": solver}


@pytest.mark.parametrize(
    "name, s, preconditioner",
    [
        ("IDR", 1, None),
        ("IDR", 4, None),
        ("IDRMSYNC", 8, None),
        ("IDRMSYNC", 4, {"scope": "p", "solver": "MULTICOLOR_DILU"}),
    ],
)
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-8), (np.float32, 1e-4)])
def test_idr_runs_on_the_device_and_matches_spsolve_and_cpu(
    rng, name, s, preconditioner, dtype, tol
):
    A = convection2d(40, rng).astype(dtype)
    b = rng.normal(size=A.shape[0]).astype(dtype)
    cfg = idr_config(name, s, preconditioner)
    # float32: one decade above the precision floor (a relative residual of
    # 1e-6 is float32's eps in the stopping rule), where whether the true
    # residual passes the last check depends on the order of the roundings,
    # which differs between the GPU and the CPU.
    cfg["solver"]["tolerance"] = 1e-10 if dtype == np.float64 else 1e-5
    M, bg = on(gpu(), A, b)
    x, info = jax.block_until_ready(jaxamg.solve(M, bg, config=cfg))
    assert info["solve_on_device"] is True, info.get("host_reason")
    Mc, bc = on(cpu(), A, b)
    x_cpu, info_cpu = jaxamg.solve(Mc, bc, config=cfg)
    assert int(info["status"]) == 0 and int(info_cpu["status"]) == 0
    assert abs(int(info["iterations"]) - int(info_cpu["iterations"])) <= 1
    ref = spla.spsolve(A.astype(np.float64).tocsc(), b.astype(np.float64))
    assert rel(x, ref) < tol


def test_gradient_through_idr_matches_dense(rng):
    A = convection2d(12, rng)
    n = A.shape[0]
    b = rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    M, bg, wg = on(gpu(), A, b, w)
    cfg = idr_config("IDRMSYNC", 4)
    cfg["solver"]["tolerance"] = 1e-12
    assert_gradient_matches_dense(A, M, bg, wg, cfg)
