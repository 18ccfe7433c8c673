"""A float32 AMG hierarchy inside a float64 solve on a CUDA device
("x_amg_precision": "FLOAT", the hierarchy set up on the device): the
device solve (DeviceMixedAmg) against
SciPy's spsolve, the CPU path and a float64 hierarchy; AMG as the solver
(refinement steps on the device); gradients (the adjoint's transposed
hierarchy on the device). Skipped without a GPU."""

import jax
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from gpu_testing import requires_cuda, weighted_losses
from jax.experimental import sparse as jsparse

import jaxamg
from jaxamg._core import ffi as _ffi

jax.config.update("jax_enable_x64", True)

pytestmark = requires_cuda


def config(outer, precision="FLOAT", tolerance=1e-10, max_iters=200):
    amg = {
        "scope": "amg",
        "solver": "AMG",
        "algorithm": "CLASSICAL",
        "selector": "PMIS",
        "interpolator": "D2",
        "interp_max_elements": 4,
        "strength_threshold": 0.25,
        "x_amg_precision": precision,
        "max_iters": 1,
        "cycle": "V",
        "coarse_solver": "DENSE_LU_SOLVER",
        "dense_lu_num_rows": 64,
        "smoother": {"scope": "l1", "solver": "JACOBI_L1"},
    }
    main = {
        "scope": "main",
        "solver": outer,
        "max_iters": max_iters,
        "tolerance": tolerance,
        "convergence": "RELATIVE_INI_CORE",
        "monitor_residual": 1,
        "store_res_history": 1,
    }
    if outer == "AMG":
        # AMG as the solver; NOSOLVER drops the default preconditioner block.
        main = {**amg, **main, "preconditioner": "NOSOLVER"}
    else:
        main["preconditioner"] = amg
    return {"config_version": 2, "solver": main}


def poisson3d(m):
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    eye = sp.identity(m)
    return (
        sp.kron(sp.kron(one, eye), eye)
        + sp.kron(sp.kron(eye, one), eye)
        + sp.kron(sp.kron(eye, eye), one)
    ).tocsr()


def convection2d(m, rng):
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    conv = sp.diags([-0.4, 0.4], [-1, 1], shape=(m, m))
    eye = sp.identity(m)
    A = sp.kron(one + conv, eye) + sp.kron(eye, one)
    return (A + sp.diags(rng.uniform(0.0, 0.2, m * m))).tocsr()


def on(device, A, *vectors):
    A = sp.csr_matrix(A)
    A.sort_indices()
    M = jax.device_put(jsparse.BCSR.from_scipy_sparse(A), device)
    return (M,) + tuple(jax.device_put(v, device) for v in vectors)


def rel(x, ref):
    return float(np.linalg.norm(np.asarray(x) - ref) / np.linalg.norm(ref))


@pytest.mark.parametrize("outer", ["PCG", "PCGF", "PBICGSTAB", "AMG"])
def test_device_solve_matches_spsolve_cpu_and_float64_hierarchy(rng, outer):
    A = poisson3d(20)
    b = rng.normal(size=A.shape[0])
    ref = spla.spsolve(A.tocsc(), b)
    cfg = config(outer)
    M, bg = on(jax.devices("gpu")[0], A, b)
    x, info = jax.block_until_ready(jaxamg.solve(M, bg, config=cfg))
    last = _ffi.cuda_native().last_solve()
    assert last["on_device"], last["host_reason"]
    # The float32 hierarchy is built on the device from float32(A).
    assert last["setup_on_device"], last["setup_reason"]
    assert int(info["status"]) == 0
    x = np.asarray(x)
    assert np.linalg.norm(b - A @ x) <= 1e-10 * np.linalg.norm(b)
    assert rel(x, ref) < 1e-8
    # The CPU engine with the same float32 hierarchy: same iterations (the
    # rounding of float32 sums may move one).
    Mc, bc = on(jax.devices("cpu")[0], A, b)
    x_cpu, info_cpu = jaxamg.solve(Mc, bc, config=cfg)
    assert abs(int(info["iterations"]) - int(info_cpu["iterations"])) <= 1
    assert rel(x, np.asarray(x_cpu)) < 1e-8
    # A float64 hierarchy on the device: at most two fewer iterations.
    _, info_hi = jaxamg.solve(M, bg, config=config(outer, "SAME"))
    assert int(info["iterations"]) <= int(info_hi["iterations"]) + 2


def test_device_gradient_matches_dense(rng):
    A = convection2d(12, rng)
    n = A.shape[0]
    b = rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    M, bg, wg = on(jax.devices("gpu")[0], A, b, w)
    loss_amg, loss_dense = weighted_losses(A, M, wg, config("PBICGSTAB", tolerance=1e-12))

    ga = jax.block_until_ready(jax.grad(loss_amg, argnums=(0, 1))(M.data, bg))
    assert _ffi.cuda_native().last_solve()["on_device"]
    gd = jax.grad(loss_dense, argnums=(0, 1))(M.data, bg)
    for a, d in zip(ga, gd):
        np.testing.assert_allclose(np.asarray(a), np.asarray(d), rtol=1e-6, atol=1e-9)


def test_device_resetup_with_new_values(rng):
    A = poisson3d(12)
    b = rng.normal(size=A.shape[0])
    M, bg = on(jax.devices("gpu")[0], A, b)
    cfg = config("PCG")
    x1, _ = jaxamg.solve(M, bg, config=cfg)
    M2 = jsparse.BCSR((M.data * 2.5, M.indices, M.indptr), shape=M.shape)
    x2, info2 = jax.block_until_ready(jaxamg.solve(M2, bg, config=cfg))
    assert _ffi.cuda_native().last_solve()["on_device"]
    assert int(info2["status"]) == 0
    np.testing.assert_allclose(np.asarray(x2), np.asarray(x1) / 2.5, rtol=1e-8, atol=1e-12)
