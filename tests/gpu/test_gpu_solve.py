"""jaxamg.solve on a CUDA device (jaxamg._cuda): the solve phase runs on the
GPU through the same API. Solutions against SciPy's spsolve and the CPU path
(float64 and float32), jit, grad (forward and adjoint solves), vmap, value
changes (resetup), bad values under jit, the statistics file of a device
solve, and the host fallback for a configuration the device solve does not
cover. Skipped without a GPU."""

import jax
import jax.numpy as jnp
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

# PCG with one V-cycle of aggregation AMG and l1-Jacobi: runs on the device.
PCG_AGG = {
    "config_version": 2,
    "solver": {
        "scope": "main",
        "solver": "PCG",
        "max_iters": 200,
        "tolerance": 1e-10,
        "convergence": "RELATIVE_INI_CORE",
        "monitor_residual": 1,
        "store_res_history": 1,
        "preconditioner": {
            "scope": "amg",
            "solver": "AMG",
            "algorithm": "AGGREGATION",
            "selector": "SIZE_8",
            "max_iters": 1,
            "cycle": "V",
            "presweeps": 1,
            "postsweeps": 1,
            "coarse_solver": "DENSE_LU_SOLVER",
            "smoother": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 0.9},
        },
    },
}
# PBICGSTAB with classical AMG and Chebyshev smoothing: nonsymmetric systems.
BICG_CHEBY = {
    "config_version": 2,
    "solver": {
        "scope": "main",
        "solver": "PBICGSTAB",
        "max_iters": 200,
        "tolerance": 1e-10,
        "convergence": "RELATIVE_INI_CORE",
        "monitor_residual": 1,
        "store_res_history": 1,
        "preconditioner": {
            "scope": "amg",
            "solver": "AMG",
            "algorithm": "CLASSICAL",
            "max_iters": 1,
            "cycle": "V",
            "coarse_solver": "DENSE_LU_SOLVER",
            "smoother": {
                "scope": "cheby",
                "solver": "CHEBYSHEV",
                "chebyshev_polynomial_order": 2,
                "chebyshev_lambda_estimate_mode": 2,
                "preconditioner": {"scope": "l1", "solver": "JACOBI_L1"},
            },
        },
    },
}
# FGMRES over the aggregation AMG, and GMRES restarted every 10 steps over
# the classical one: the engine's own (F)GMRES, run on the device.
FGMRES_AGG = {"config_version": 2, "solver": dict(PCG_AGG["solver"], solver="FGMRES")}
GMRES_CHEBY = {
    "config_version": 2,
    "solver": dict(BICG_CHEBY["solver"], solver="GMRES", gmres_n_restart=10),
}


def gpu():
    return jax.devices("gpu")[0]


def cpu():
    return jax.devices("cpu")[0]


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


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-8), (np.float32, 1e-4)])
@pytest.mark.parametrize(
    "config, make",
    [
        (PCG_AGG, "poisson"),
        (BICG_CHEBY, "convection"),
        (FGMRES_AGG, "convection"),
        (GMRES_CHEBY, "convection"),
    ],
)
def test_solution_matches_spsolve_and_cpu(rng, dtype, tol, config, make):
    A = poisson3d(14) if make == "poisson" else convection2d(40, rng)
    A = A.astype(dtype)
    b = rng.normal(size=A.shape[0]).astype(dtype)
    ref = spla.spsolve(A.astype(np.float64).tocsc(), b.astype(np.float64))
    cfg = dict(
        config, solver=dict(config["solver"], tolerance=1e-10 if dtype == np.float64 else 1e-6)
    )

    M, bg = on(gpu(), A, b)
    x_gpu, info_gpu = jax.block_until_ready(jaxamg.solve(M, bg, config=cfg))
    assert x_gpu.dtype == dtype
    assert next(iter(x_gpu.devices())).platform == "gpu"
    last = _ffi.cuda_native().last_solve()
    assert last["on_device"], last["host_reason"]
    # info says what the CUDA module reports: the solve on the device, the
    # setup there too unless the config needs the host's (Chebyshev with
    # estimated bounds), and then why.
    assert info_gpu["solve_on_device"] is True and "host_reason" not in info_gpu
    assert info_gpu["setup_on_device"] is bool(last["setup_on_device"])
    if not last["setup_on_device"]:
        assert info_gpu["setup_reason"] == last["setup_reason"] != ""
    else:
        assert "setup_reason" not in info_gpu

    Mc, bc = on(cpu(), A, b)
    x_cpu, info_cpu = jaxamg.solve(Mc, bc, config=cfg)

    assert int(info_gpu["status"]) == 0 and int(info_cpu["status"]) == 0
    assert abs(int(info_gpu["iterations"]) - int(info_cpu["iterations"])) <= 1
    assert rel(x_gpu, ref) < tol
    assert rel(x_gpu, np.asarray(x_cpu, np.float64)) < tol


def test_initial_guess_and_value_change_resetup(rng):
    A = poisson3d(12)
    b = rng.normal(size=A.shape[0])
    M, bg = on(gpu(), A, b)
    x1, _ = jaxamg.solve(M, bg, config=PCG_AGG)
    setups = _ffi.cuda_native().total_setups()
    # Same pattern, new values: a resetup of the cached entry, not a new setup.
    M2 = jsparse.BCSR((M.data * 2.5, M.indices, M.indptr), shape=M.shape)
    x2, info2 = jaxamg.solve(M2, bg, config=PCG_AGG)
    assert _ffi.cuda_native().total_setups() == setups
    np.testing.assert_allclose(np.asarray(x2), np.asarray(x1) / 2.5, rtol=1e-7, atol=1e-12)
    # An initial guess: the same iterations as the CPU path from that guess.
    x0 = rng.normal(size=A.shape[0])
    x3, info3 = jaxamg.solve(M2, bg, x0=jax.device_put(x0, gpu()), config=PCG_AGG)
    Mc, bc, x0c = on(cpu(), A * 2.5, b, x0)
    x4, info4 = jaxamg.solve(Mc, bc, x0=x0c, config=PCG_AGG)
    assert int(info3["status"]) == 0 and int(info4["status"]) == 0
    assert abs(int(info3["iterations"]) - int(info4["iterations"])) <= 1
    assert rel(x3, np.asarray(x2)) < 1e-7


def test_jit_with_values_as_argument(rng):
    A = poisson3d(12)
    b = rng.normal(size=A.shape[0])
    M, bg = on(gpu(), A, b)
    ref = spla.spsolve(A.tocsc(), b)

    @jax.jit
    def f(data, rhs):
        x, info = jaxamg.solve(
            jsparse.BCSR((data, M.indices, M.indptr), shape=M.shape), rhs, config=PCG_AGG
        )
        return x, info["iterations"]

    x, its = f(M.data, bg)
    assert rel(x, ref) < 1e-8 and int(its) > 0
    x, _ = f(M.data * 2.0, bg)  # new values under the same trace
    assert rel(x, ref / 2.0) < 1e-8


def test_jit_with_traced_structure(rng):
    A = poisson3d(10)
    b = rng.normal(size=A.shape[0])
    M, bg = on(gpu(), A, b)

    @jax.jit
    def f(M, rhs):
        return jaxamg.solve(M, rhs, config=PCG_AGG)[0]

    np.testing.assert_allclose(
        np.asarray(f(M, bg)), spla.spsolve(A.tocsc(), b), rtol=1e-7, atol=1e-10
    )


def test_grad_forward_and_adjoint_match_dense(rng):
    A = convection2d(12, rng)
    n = A.shape[0]
    b = rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    M, bg, wg = on(gpu(), A, b, w)
    loss_amg, loss_dense = weighted_losses(A, M, wg, BICG_CHEBY)

    ga = jax.grad(loss_amg, argnums=(0, 1))(M.data, bg)
    gd = jax.grad(loss_dense, argnums=(0, 1))(M.data, bg)
    for a, d in zip(ga, gd):
        np.testing.assert_allclose(np.asarray(a), np.asarray(d), rtol=1e-6, atol=1e-9)
    # Forward mode too.
    t = jnp.asarray(rng.normal(size=n))
    _, ja = jax.jvp(lambda r: loss_amg(M.data, r), (bg,), (t,))
    _, jd = jax.jvp(lambda r: loss_dense(M.data, r), (bg,), (t,))
    np.testing.assert_allclose(float(ja), float(jd), rtol=1e-6)


def test_vmap_over_right_hand_sides(rng):
    A = poisson3d(10)
    B = rng.normal(size=(3, A.shape[0]))
    M, Bg = on(gpu(), A, B)
    X = jax.vmap(lambda r: jaxamg.solve(M, r, config=PCG_AGG)[0])(Bg)
    ref = spla.spsolve(A.tocsc(), B.T).T
    np.testing.assert_allclose(np.asarray(X), ref, rtol=1e-7, atol=1e-10)


def test_nan_values_under_jit_give_failed(rng):
    A = poisson3d(8)
    b = rng.normal(size=A.shape[0])
    M, bg = on(gpu(), A, b)

    @jax.jit
    def f(rhs):
        return jaxamg.solve(M, rhs, config=PCG_AGG)

    x, info = f(bg.at[3].set(jnp.nan))
    assert int(info["status"]) == int(jaxamg.AMGXStatus.FAILED)
    assert np.all(np.isnan(np.asarray(x)))
    x, info = f(bg)  # the cache is not corrupted by the bad call
    assert int(info["status"]) == 0


@pytest.mark.parametrize("setup", ["device", "host"])
def test_save_stats_file_from_a_device_solve(rng, tmp_path, monkeypatch, setup):
    # JAX-AMG's statistics file (grid table, iteration table) from a solve
    # that runs on the GPU, the hierarchy built on the device or on the host,
    # against the same file from the CPU path.
    monkeypatch.setenv("JAXAMG_GPU_SETUP", setup)
    A = poisson3d(12)
    b = rng.normal(size=A.shape[0])
    texts = {}
    for where, dev in (("gpu", gpu()), ("cpu", cpu())):
        M, bd = on(dev, A, b)
        path = tmp_path / f"{where}.txt"
        x, info = jaxamg.solve(M, bd, config=PCG_AGG, save_stats_file=path)
        assert int(info["status"]) == 0
        assert rel(x, spla.spsolve(A.tocsc(), b)) < 1e-8
        texts[where] = (path.read_text(), int(info["iterations"]))
        if where == "gpu":
            assert info["solve_on_device"] is True, info.get("host_reason")
            assert info["setup_on_device"] is (setup == "device")
    for text, iterations in texts.values():
        assert "AMG GRID STATISTICS" in text and "SOLVER ITERATIONS" in text
        assert f"Total Iterations: {iterations}" in text
    levels = [
        [line for line in t.splitlines() if "Number of Levels" in line] for t, _ in texts.values()
    ]
    assert levels[0] and levels[0] == levels[1]
    assert abs(texts["gpu"][1] - texts["cpu"][1]) <= 1


def test_unsupported_configuration_falls_back_to_host(rng):
    A = poisson3d(10)
    b = rng.normal(size=A.shape[0])
    cfg = {
        "config_version": 2,
        "solver": dict(
            PCG_AGG["solver"],
            # Gauss-Seidel makes the cycle nonsymmetric: BiCGStab, not CG.
            solver="PBICGSTAB",
            preconditioner=dict(
                PCG_AGG["solver"]["preconditioner"],
                selector="SIZE_2",
                smoother={"scope": "gs", "solver": "GS"},
            ),
        ),
    }
    M, bg = on(gpu(), A, b)
    x, info = jax.block_until_ready(jaxamg.solve(M, bg, config=cfg))
    last = _ffi.cuda_native().last_solve()
    assert not last["on_device"] and "smoother GS" in last["host_reason"]
    # info says so itself: where each phase ran, and why the host.
    assert info["solve_on_device"] is False and info["setup_on_device"] is False
    assert "smoother GS" in info["host_reason"] and info["setup_reason"]
    _, info_j = jax.jit(lambda M, rhs: jaxamg.solve(M, rhs, config=cfg))(M, bg)
    assert not bool(info_j["solve_on_device"]) and not bool(info_j["setup_on_device"])
    assert int(info["status"]) == 0
    assert rel(x, spla.spsolve(A.tocsc(), b)) < 1e-8
