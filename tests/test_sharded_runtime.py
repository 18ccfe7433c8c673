"""The sharded interface's runtime checks, on CPU: a process that sees
several local devices but uses one mesh device is accepted (fresh processes
with XLA_FLAGS=--xla_force_host_platform_device_count=2, one process and two
under mpirun, solutions against SciPy); process-count and process-index
mismatches raise ValueError, as in JAX-AMG; a missing
jax.distributed.initialize raises RuntimeError."""

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("mpi4py")
if importlib.util.find_spec("jaxamg._mpi") is None:
    pytest.skip("needs jaxamg's MPI module", allow_module_level=True)

import jax  # noqa: E402
import numpy as np  # noqa: E402

import jaxamg  # noqa: E402
from jaxamg._sharded import runtime as sharded_runtime  # noqa: E402

# Each process: two local CPU devices, a sharded solve (eager and jitted) of a
# random nonsymmetric system against SciPy, one device per process in the mesh.
SOLVE = textwrap.dedent("""
    import sys
    import jaxamg, jax, numpy as np, scipy.sparse as sp, scipy.sparse.linalg as spla
    from mpi4py import MPI
    if MPI.COMM_WORLD.size > 1:
        jax.distributed.initialize(cluster_detection_method="mpi4py")
    jax.config.update("jax_enable_x64", True)
    comm = MPI.COMM_WORLD
    assert len(jax.local_devices()) == 2, jax.local_devices()
    n = 61
    rng = np.random.default_rng(7)
    A = (sp.random(n, n, density=0.08, random_state=3) + sp.diags(np.full(n, 4.0))).tocsr()
    b = rng.standard_normal(n)
    bounds = np.linspace(0, n, comm.size + 1).astype(int)
    rs, re = bounds[comm.rank], bounds[comm.rank + 1]
    bv = jaxamg.make_sharded_vector(b[rs:re], comm=comm)
    assert len(bv.sharding.mesh.devices.flat) == comm.size
    M = jaxamg.make_sharded_matrix(A[rs:re], bv)
    config = {"solver": "BICGSTAB", "tolerance": 1e-12, "max_iters": 500,
              "preconditioner": {"solver": "BLOCK_JACOBI"}}
    solver = jaxamg.make_sharded_solver(M, bv, config=config)
    reference = spla.spsolve(A.tocsc(), b)[rs:re]
    x, info = solver(bv)
    with jax.set_mesh(M.mesh):
        xj, _ = jax.jit(lambda d, r: solver(r, A=d))(M.data, bv)
    errors = [float(np.max(np.abs(np.asarray(solver.local_vector(v)) - reference)))
              for v in (x, xj)]
    scale = float(np.max(np.abs(reference)))
    ok = all(e <= 1e-9 * scale for e in errors)
    if comm.size == 1:
        # Both local devices in a one-rank mesh: one device per rank is needed.
        two = jax.make_mesh((2,), ("rank",), devices=jax.local_devices())
        try:
            jaxamg.make_sharded_vector(b, comm=comm, mesh=two)
            ok = False
        except ValueError as e:
            ok &= "exactly one device per rank" in str(e)
    ok = comm.allreduce(ok, op=MPI.LAND)
    # One writer: lines of several ranks may interleave in mpirun's output.
    if comm.rank == 0:
        print(f"{'OK' if ok else 'FAILED'} ranks={comm.size} errors={max(errors):.1e}")
    jaxamg.finalize()
""")


def _run(command, tmp_path):
    script = tmp_path / "solve.py"
    script.write_text(SOLVE)
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    env.update(
        OMP_NUM_THREADS="1",
        OMPI_ALLOW_RUN_AS_ROOT="1",
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
        OMPI_MCA_mpi_yield_when_idle="1",
        OMPI_MCA_hwloc_base_binding_policy="none",
    )
    out = subprocess.run(
        [*command, str(script)], env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout


def test_one_process_with_two_local_devices_solves(tmp_path):
    assert _run([sys.executable], tmp_path).split()[:2] == ["OK", "ranks=1"]


@pytest.mark.skipif(shutil.which("mpirun") is None, reason="needs mpirun")
def test_two_processes_with_two_local_devices_each_solve(tmp_path):
    out = _run(["mpirun", "--oversubscribe", "-n", "2", sys.executable], tmp_path)
    assert out.split()[:2] == ["OK", "ranks=2"], out


@pytest.fixture
def comm():
    from mpi4py import MPI

    return MPI.COMM_SELF


def test_process_count_mismatch_is_a_value_error(comm, monkeypatch):
    monkeypatch.setattr(jax, "process_count", lambda: 2)
    with pytest.raises(ValueError, match="process count and the communicator size must match"):
        jaxamg.make_sharded_vector(np.ones(3), comm=comm)


def test_process_index_mismatch_is_a_value_error(comm, monkeypatch):
    monkeypatch.setattr(jax, "process_index", lambda: 1)
    with pytest.raises(ValueError, match="process index must equal the MPI rank"):
        jaxamg.make_sharded_vector(np.ones(3), comm=comm)


class TwoRankComm:
    """A communicator of two ranks whose other rank reports what this one
    does (enough for the checks, which agree by one allgather)."""

    def py2f(self):
        return 0

    def Get_rank(self):
        return 0

    def Get_size(self):
        return 2

    def allgather(self, value):
        return [value, value]


def test_missing_distributed_initialize_is_a_runtime_error(monkeypatch):
    monkeypatch.setattr(jax.distributed, "is_initialized", lambda: False)
    with pytest.raises(RuntimeError, match="jax.distributed.initialize\\(\\) was not called"):
        sharded_runtime.check_runtime(TwoRankComm(), "where")


def test_default_mesh_takes_one_device_per_process(comm):
    mesh = sharded_runtime.default_mesh(comm, "rank")
    assert mesh.devices.size == 1 and mesh.axis_names == ("rank",)
    assert mesh.devices.flat[0].process_index == jax.process_index()
