# Checks the handlers of jaxamg._mpi through jax.ffi directly, under mpirun:
# a distributed solve (and the transposed one) equals SciPy's solve, the
# status is the same on every process, gather_columns returns exactly
# x_global[indices], a bad index on one process comes back as the same error
# on every process, and a subcommunicator solves on its own. Usage (the
# folder holding the built _mpi module):
#   mpirun -np 3 --oversubscribe python cpp/tests/mpi/ffi_contract_check.py build/mpi/cpp/bindings
import glob, importlib.util, sys
import numpy as np
import scipy.sparse as sp, scipy.sparse.linalg as spla
from mpi4py import MPI
import jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)

path = glob.glob(sys.argv[1] + "/_mpi*.so")[0]
spec = importlib.util.spec_from_file_location("_mpi", path)
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
assert mod.available()
for name, cap in mod.registrations().items():
    jax.ffi.register_ffi_target(name, cap, platform="cpu")

comm = MPI.COMM_WORLD
rank, size = comm.rank, comm.size
n = 300
rng = np.random.default_rng(0)
A = sp.random(n, n, density=0.02, random_state=1, format="csr") + sp.diags(np.full(n, 4.0))
A = A.tocsr(); A.sort_indices()
b = rng.standard_normal(n)
starts = [n * r // size for r in range(size + 1)]
lo, hi = starts[rank], starts[rank + 1]
Al = A[lo:hi]
cfg = ('{"config_version": 2, "solver": {"solver": "FGMRES", "scope": "main", "max_iters": 500,'
       ' "tolerance": 1e-12, "monitor_residual": 1, "convergence": "RELATIVE_INI", "preconditioner":'
       ' {"solver": "AMG", "scope": "amg", "algorithm": "AGGREGATION", "selector": "SIZE_2",'
       ' "max_iters": 1, "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 16,'
       ' "smoother": {"solver": "JACOBI_L1", "scope": "j"}}}}')

def solve(indptr, indices, data, rhs, transpose=False, history_len=4):
    out = (jax.ShapeDtypeStruct(rhs.shape, rhs.dtype), jax.ShapeDtypeStruct((4 + history_len,), rhs.dtype))
    return jax.ffi.ffi_call("jaxamg_solve_mpi", out, vmap_method="expand_dims")(
        jnp.asarray(indptr, jnp.int32), jnp.asarray(indices, jnp.int32), jnp.asarray(data), jnp.asarray(rhs),
        jnp.zeros_like(rhs), config=cfg, structure_hi=np.int64(0), structure_lo=np.int64(0),
        transpose=transpose, use_x0=False, reuse_setup=False, block_dim=np.int64(1),
        history_len=np.int64(history_len), comm=np.int64(comm.py2f()), row_start=np.int64(lo),
        nglobal=np.int64(n))

ok = True
for transpose in (False, True):
    x, stats = solve(Al.indptr, Al.indices, Al.data, b[lo:hi], transpose)
    xg = np.concatenate(comm.allgather(np.asarray(x)))
    ref = spla.spsolve((A.T if transpose else A).tocsc(), b)
    err = np.linalg.norm(xg - ref) / np.linalg.norm(ref)
    stats_all = comm.allgather(np.asarray(stats)[:3].tolist())
    if rank == 0:
        print(f"transpose={transpose}: rel err {err:.2e}, stats {stats_all[0]}, same on all ranks: {all(s == stats_all[0] for s in stats_all)}")
    ok &= err < 1e-8 and all(s == stats_all[0] for s in stats_all)

# gather_columns
xv = rng.standard_normal(n)
xc = jax.ffi.ffi_call("jaxamg_mpi_gather_columns", jax.ShapeDtypeStruct((Al.nnz,), jnp.float64))(
    jnp.asarray(Al.indptr, jnp.int32), jnp.asarray(Al.indices, jnp.int32), jnp.asarray(xv[lo:hi]),
    comm=np.int64(comm.py2f()), row_start=np.int64(lo), nglobal=np.int64(n),
    structure_hi=np.int64(0), structure_lo=np.int64(0))
good = np.array_equal(np.asarray(xc), xv[Al.indices])
ok &= comm.allreduce(good, op=MPI.LAND)
if rank == 0: print("gather_columns exact:", good)

# bad input on the last rank only
bad = Al.indices.copy()
if rank == size - 1: bad[0] = n + 7
try:
    solve(Al.indptr, bad, Al.data, b[lo:hi])
    msg = "no error"
except Exception as e:
    msg = str(e)
msgs = comm.allgather(msg)
if rank == 0: print("error on every rank:", msgs[0][:160], "| identical:", len(set(msgs)) == 1)
ok &= len(set(msgs)) == 1 and "rank" in msgs[0]
# a subcommunicator (ranks split by parity) next to the world communicator
sub = comm.Split(rank % 2, rank)
ss, sr = sub.size, sub.rank
st = [n * r // ss for r in range(ss + 1)]
As = A[st[sr]:st[sr + 1]]
out = (jax.ShapeDtypeStruct((As.shape[0],), jnp.float64), jax.ShapeDtypeStruct((4,), jnp.float64))
xs, _ = jax.ffi.ffi_call("jaxamg_solve_mpi", out, vmap_method="expand_dims")(
    jnp.asarray(As.indptr, jnp.int32), jnp.asarray(As.indices, jnp.int32), jnp.asarray(As.data),
    jnp.asarray(b[st[sr]:st[sr + 1]]), jnp.zeros(As.shape[0]), config=cfg, structure_hi=np.int64(0),
    structure_lo=np.int64(0), transpose=False, use_x0=False, reuse_setup=False, block_dim=np.int64(1),
    history_len=np.int64(0), comm=np.int64(sub.py2f()), row_start=np.int64(st[sr]), nglobal=np.int64(n))
xsg = np.concatenate(sub.allgather(np.asarray(xs)))
ref = spla.spsolve(A.tocsc(), b)
e2 = np.linalg.norm(xsg - ref) / np.linalg.norm(ref)
ok &= e2 < 1e-8
if rank == 0: print(f"subcommunicator solve rel err {e2:.2e}")
ok = comm.allreduce(ok, op=MPI.LAND)
if rank == 0: print("ALL OK" if ok else "FAILED")
sys.exit(0 if ok else 1)
