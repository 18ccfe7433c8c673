"""jaxamg.solve on a CUDA device with an AGGREGATION or a CLASSICAL (PMIS, D2)
AMG: the hierarchy is built on the GPU (no host copy of the matrix, no CPU setup), new values on
a cached structure run a device resetup, and the adjoint of a nonsymmetric
system runs on A^T's hierarchy built on the device. Solutions of jitted solves
against SciPy's spsolve (random-valued SPD and nonsymmetric matrices,
float32 and float64), the cache counters (one setup, then resetups), the
same iterations as the host setup (JAXAMG_GPU_SETUP=host), and gradients
with respect to b and the values against finite differences. Skipped
without a GPU."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from gpu_testing import cuda_module, requires_cuda
from jax.experimental import sparse as jsparse

import jaxamg

jax.config.update("jax_enable_x64", True)

pytestmark = requires_cuda


# The coarsening keys of the two hierarchies built on the device.
AGGREGATION = {"algorithm": "AGGREGATION", "selector": "SIZE_8"}
CLASSICAL = {
    "algorithm": "CLASSICAL",
    "selector": "PMIS",
    "interpolator": "D2",
    "strength_threshold": 0.25,
    "interp_max_elements": 4,
}
COARSENINGS = pytest.mark.parametrize(
    "coarsening", [AGGREGATION, CLASSICAL], ids=["aggregation", "classical"]
)


def amg_scope(coarsening=AGGREGATION, **extra):
    return dict(
        {
            "scope": "amg",
            "solver": "AMG",
            **coarsening,
            "cycle": "V",
            "presweeps": 1,
            "postsweeps": 1,
            "max_levels": 20,
            "coarse_solver": "DENSE_LU_SOLVER",
            "dense_lu_num_rows": 64,
            "smoother": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 0.9},
        },
        **extra,
    )


def make_config(outer, tol, coarsening=AGGREGATION, **amg_extra):
    common = {
        "max_iters": 300,
        "tolerance": tol,
        "convergence": "RELATIVE_INI_CORE",
        "norm": "L2",
        "monitor_residual": 1,
        "store_res_history": 1,
    }
    if outer == "AMG":
        # AMG as the solver; NOSOLVER drops the default preconditioner block.
        return {
            "config_version": 2,
            "solver": dict(amg_scope(coarsening, **amg_extra), preconditioner="NOSOLVER", **common),
        }
    return {
        "config_version": 2,
        "solver": dict(
            {
                "scope": "main",
                "solver": outer,
                "preconditioner": amg_scope(coarsening, max_iters=1, **amg_extra),
            },
            **common,
        ),
    }


def spd_matrix(rng, m=14):
    """3D Poisson pattern, random symmetric off-diagonals, dominant diagonal."""
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    eye = sp.identity(m)
    P = (
        sp.kron(sp.kron(one, eye), eye)
        + sp.kron(sp.kron(eye, one), eye)
        + sp.kron(sp.kron(eye, eye), one)
    ).tocsr()
    off = sp.triu(P, k=1).tocoo()
    vals = -rng.uniform(0.5, 1.5, off.nnz)
    U = sp.coo_matrix((vals, (off.row, off.col)), shape=P.shape)
    A = (U + U.T).tocsr()
    row_l1 = np.asarray(abs(A).sum(axis=1)).ravel()
    return (A + sp.diags(row_l1 * rng.uniform(1.05, 1.5, P.shape[0]))).tocsr()


def nonsymmetric_matrix(rng, m=48):
    """2D convection-diffusion pattern with independent random values."""
    one = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    conv = sp.diags([-0.4, 0.4], [-1, 1], shape=(m, m))
    eye = sp.identity(m)
    A = (sp.kron(one + conv, eye) + sp.kron(eye, one)).tocsr()
    A.data *= rng.uniform(0.5, 1.5, A.nnz)
    A = A - sp.diags(A.diagonal())
    row_l1 = np.asarray(abs(A).sum(axis=1)).ravel()
    return (A + sp.diags(row_l1 * rng.uniform(1.05, 1.5, A.shape[0]))).tocsr()


def gpu():
    return jax.devices("gpu")[0]


def on_gpu(A, *vectors):
    A = sp.csr_matrix(A)
    A.sort_indices()
    M = jax.device_put(jsparse.BCSR.from_scipy_sparse(A), gpu())
    return (M,) + tuple(jax.device_put(v, gpu()) for v in vectors)


def rel(x, ref):
    return float(np.linalg.norm(np.asarray(x, np.float64) - ref) / np.linalg.norm(ref))


def jitted_solve(M, config):
    @jax.jit
    def f(data, rhs):
        x, info = jaxamg.solve(
            jsparse.BCSR((data, M.indices, M.indptr), shape=M.shape), rhs, config=config
        )
        return x, info["iterations"], info["status"]

    return f


def cuda_entry(n):
    entries = [
        e
        for e in jaxamg.get_solver_cache_info()["single_gpu"]["entries"]
        if e["device"] == "cuda" and e["n_rows"] == n
    ]
    assert len(entries) == 1, entries
    return entries[0]


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch):
    monkeypatch.delenv("JAXAMG_GPU_SETUP", raising=False)
    jaxamg.clear_solver_cache()
    yield
    jaxamg.clear_solver_cache()


@COARSENINGS
@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-10), (np.float32, 1e-5)])
@pytest.mark.parametrize(
    "kind, outer", [("spd", "PCG"), ("spd", "PCGF"), ("spd", "AMG"), ("nonsymmetric", "PBICGSTAB")]
)
def test_jitted_solve_matches_spsolve(rng, coarsening, dtype, tol, kind, outer):
    A = (spd_matrix(rng) if kind == "spd" else nonsymmetric_matrix(rng)).astype(dtype)
    b = rng.normal(size=A.shape[0]).astype(dtype)
    ref = spla.spsolve(A.astype(np.float64).tocsc(), b.astype(np.float64))
    # AMG as the solver converges more slowly: a looser test in float64.
    config = make_config(outer, max(tol, 1e-8) if outer == "AMG" else tol, coarsening)
    M, bg = on_gpu(A, b)
    x, its, status = jax.block_until_ready(jitted_solve(M, config)(M.data, bg))
    last = cuda_module().last_solve()
    assert last["setup_on_device"], last["setup_reason"]
    assert last["on_device"], last["host_reason"]
    assert len(last["levels"]) > 1
    assert x.dtype == dtype and int(status) == 0 and int(its) > 0
    # The solution error is bounded by the condition number (below 1e2 for
    # these diagonally dominant matrices) times the relative residual.
    assert rel(x, ref) < 1e2 * float(config["solver"]["tolerance"])


@pytest.mark.parametrize(
    "coarsening, reuse_levels",
    [(AGGREGATION, -1), (AGGREGATION, 0), (CLASSICAL, 0)],
    ids=["aggregation-reuse", "aggregation", "classical"],
)
def test_one_setup_then_device_resetups(rng, coarsening, reuse_levels):
    A = spd_matrix(rng)
    b = rng.normal(size=A.shape[0])
    config = make_config("PCG", 1e-10, coarsening, structure_reuse_levels=reuse_levels)
    M, bg = on_gpu(A, b)
    f = jitted_solve(M, config)
    total = jaxamg.get_solver_cache_info()["total_setups"]
    # JAX dispatches asynchronously: wait for each call before reading the counters.
    jax.block_until_ready(f(M.data, bg))
    jax.block_until_ready(f(M.data, bg))
    e = cuda_entry(A.shape[0])
    assert (e["setups"], e["resetups"], e["reuses"]) == (1, 0, 1)
    assert cuda_module().last_solve()["setup_on_device"]
    # New values, same pattern: a resetup on the device, not a setup.
    B = spd_matrix(rng)  # the same pattern, new random values
    B.sort_indices()
    assert np.array_equal(B.indices, np.asarray(M.indices))
    x, _, status = jax.block_until_ready(f(jax.device_put(B.data, gpu()), bg))
    e = cuda_entry(A.shape[0])
    assert (e["setups"], e["resetups"], e["reuses"]) == (1, 1, 1)
    assert jaxamg.get_solver_cache_info()["total_setups"] == total + 1
    assert cuda_module().last_solve()["setup_on_device"]
    assert int(status) == 0
    assert rel(x, spla.spsolve(B.tocsc(), b)) < 1e-7


@COARSENINGS
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    "kind, outer", [("spd", "PCG"), ("nonsymmetric", "PBICGSTAB"), ("spd", "AMG")]
)
def test_same_iterations_as_host_setup(rng, monkeypatch, coarsening, dtype, kind, outer):
    A = (spd_matrix(rng) if kind == "spd" else nonsymmetric_matrix(rng)).astype(dtype)
    b = rng.normal(size=A.shape[0]).astype(dtype)
    config = make_config(outer, 1e-10 if dtype == np.float64 else 1e-5, coarsening)
    M, bg = on_gpu(A, b)
    f = jitted_solve(M, config)

    monkeypatch.setenv("JAXAMG_GPU_SETUP", "host")
    x_host, its_host, st_host = jax.block_until_ready(f(M.data, bg))
    last = cuda_module().last_solve()
    assert not last["setup_on_device"] and last["setup_reason"] == "JAXAMG_GPU_SETUP=host"
    assert last["on_device"], last["host_reason"]
    levels_host = last["levels"]

    monkeypatch.setenv("JAXAMG_GPU_SETUP", "device")
    x_dev, its_dev, st_dev = jax.block_until_ready(f(M.data, bg))
    last = cuda_module().last_solve()
    assert last["setup_on_device"], last["setup_reason"]
    assert int(st_host) == 0 and int(st_dev) == 0
    if coarsening is AGGREGATION:
        assert last["levels"] == levels_host
        assert int(its_dev) == int(its_host)
    else:
        # The same splittings and P (the C++ tests check them entry for
        # entry); cuSPARSE's Galerkin sums may keep entries that cancel to
        # zero, so the levels' rows agree and the solves to an iteration.
        assert [l[0] for l in last["levels"]] == [l[0] for l in levels_host]
        assert abs(int(its_dev) - int(its_host)) <= 1
    tol = 1e-8 if dtype == np.float64 else 1e-3
    assert rel(x_dev, np.asarray(x_host, np.float64)) < tol


def test_bad_switch_value_is_named(rng, monkeypatch):
    A = spd_matrix(rng, 6)
    b = rng.normal(size=A.shape[0])
    M, bg = on_gpu(A, b)
    monkeypatch.setenv("JAXAMG_GPU_SETUP", "gpu")
    with pytest.raises(Exception, match="JAXAMG_GPU_SETUP"):
        jaxamg.solve(M, bg, config=make_config("PCG", 1e-10))


@COARSENINGS
@pytest.mark.parametrize("kind", ["spd", "nonsymmetric"])
def test_grad_matches_finite_differences(rng, coarsening, kind):
    A = spd_matrix(rng, 10) if kind == "spd" else nonsymmetric_matrix(rng, 24)
    n = A.shape[0]
    b = rng.normal(size=n)
    w = rng.normal(size=n)
    config = make_config("PCG" if kind == "spd" else "PBICGSTAB", 1e-12, coarsening)
    M, bg, wg = on_gpu(A, b, w)

    def loss(data, rhs):
        Ad = jsparse.BCSR((data, M.indices, M.indptr), shape=M.shape)
        if kind == "spd":
            Ad = jaxamg.with_cache(Ad, is_symmetric=True)
        x, _ = jaxamg.solve(Ad, rhs, config=config)
        return jnp.sum(wg * x)

    g_data, g_b = jax.block_until_ready(jax.jit(jax.grad(loss, argnums=(0, 1)))(M.data, bg))
    # The last solve is the adjoint (A^T's hierarchy built on the device
    # when A is nonsymmetric).
    last = cuda_module().last_solve()
    assert last["setup_on_device"] and last["on_device"], last
    f = jax.jit(loss)
    # The loss is linear in b: a large step has no truncation error and keeps
    # the solver's rounding small against it.
    h = 1e-2
    v_b = jax.device_put(rng.normal(size=n), gpu())
    fd_b = (float(f(M.data, bg + h * v_b)) - float(f(M.data, bg - h * v_b))) / (2 * h)
    assert float(jnp.vdot(g_b, v_b)) == pytest.approx(fd_b, rel=1e-6)
    # Perturbations of the values on the pattern (symmetric for the SPD case
    # keeps it on the symmetric path; the gradient is the same either way).
    v = rng.normal(size=A.nnz)
    if kind == "spd":
        V = sp.csr_matrix((v, A.indices, A.indptr), shape=A.shape)
        V = ((V + V.T) * 0.5).tocsr()
        V.sort_indices()
        v = V.data
    v_d = jax.device_put(v, gpu())
    h = 1e-4
    fd_d = (float(f(M.data + h * v_d, bg)) - float(f(M.data - h * v_d, bg))) / (2 * h)
    assert float(jnp.vdot(g_data, v_d)) == pytest.approx(fd_d, rel=1e-6)


def test_gpu_structures_are_fingerprinted_on_the_device(rng, monkeypatch):
    """A large structure on the GPU is hashed there (Python never copies it
    to the host): the same matrix is set up once, and two patterns of the
    same size and nonzero count never share a setup."""
    from jaxamg._core import matrix as _matrix

    monkeypatch.setattr(_matrix, "_DEVICE_HASH_MIN_NNZ", 0)  # as for a large matrix
    real_asarray = np.asarray

    def no_host_copy(a, *args, **kwargs):
        assert not (
            isinstance(a, jax.Array) and a.dtype == np.int32 and a.ndim == 1 and a.size >= n
        ), "a GPU structure was copied to the host"
        return real_asarray(a, *args, **kwargs)

    A = spd_matrix(rng)
    n = A.shape[0]
    perm = rng.permutation(n)
    B = (A[perm][:, perm]).tocsr()  # the same nonzero count, another pattern
    B.sort_indices()
    assert B.nnz == A.nnz
    assert not (np.array_equal(B.indptr, A.indptr) and np.array_equal(B.indices, A.indices))
    b = rng.normal(size=n)
    config = make_config("PCG", 1e-10)
    (MA, bg), (MB, _) = on_gpu(A, b), on_gpu(B, b)
    total = jaxamg.get_solver_cache_info()["total_setups"]
    monkeypatch.setattr(np, "asarray", no_host_copy)
    for _ in range(2):
        for M, S in ((MA, A), (MB, B)):
            x, info = jaxamg.solve(M, bg, config=config)
            assert info["status"] == jaxamg.AMGXStatus.SUCCESS
            assert rel(x, spla.spsolve(S.tocsc(), b)) < 1e-7
    monkeypatch.setattr(np, "asarray", real_asarray)
    assert jaxamg.get_solver_cache_info()["total_setups"] == total + 2


@pytest.mark.parametrize("kind", ["spd", "nonsymmetric"])
def test_default_config_is_set_up_and_solved_on_device(rng, kind):
    """JAX-AMG's default (PBICGSTAB + classical + BLOCK_JACOBI) without a
    config: the hierarchy is built and cycled on the GPU, and the solution
    meets the default tolerance (1e-6 relative to the initial residual)."""
    A = spd_matrix(rng) if kind == "spd" else nonsymmetric_matrix(rng)
    b = rng.normal(size=A.shape[0])
    M, bg = on_gpu(A, b)

    @jax.jit
    def f(data, rhs):
        x, info = jaxamg.solve(jsparse.BCSR((data, M.indices, M.indptr), shape=M.shape), rhs)
        return x, info["status"]

    x, status = jax.block_until_ready(f(M.data, bg))
    last = cuda_module().last_solve()
    assert last["setup_on_device"], last["setup_reason"]
    assert last["on_device"], last["host_reason"]
    assert len(last["levels"]) > 1
    assert int(status) == 0
    x = np.asarray(x)
    assert np.linalg.norm(b - A @ x) <= 1e-6 * np.linalg.norm(b) * 1.01
