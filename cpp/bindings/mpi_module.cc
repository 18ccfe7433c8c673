// nanobind module jaxamg._mpi: the XLA FFI handler capsules of the
// distributed solver (cpp/ffi/mpi/), registered from Python with
// platform="cpu" (and, in builds with the CUDA backend, the host-staging
// variants of cpp/ffi/mpi_cuda/ with platform="CUDA"). Built only when CMake
// finds MPI (option JAXAMG_MPI).
#include <mpi.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <type_traits>

#include "ffi_capsule.h"
#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"
#include "../ffi/mpi/mpi_solver_cache.h"
#include "../ffi/solver_cache.h"

namespace nb = nanobind;

XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgSolveMpiCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgMpiGatherColumnsCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgMpiAllreduceSumCpu);
#ifdef JAXAMG_MPI_CUDA
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgSolveMpiCuda);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgMpiGatherColumnsCuda);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgMpiAllreduceSumCuda);
#endif

NB_MODULE(_mpi, m) {
  m.doc() = "XLA FFI handlers of jaxamg's distributed (MPI) solver";
  m.def("registrations", [] {
    nb::dict d;
    d["jaxamg_solve_mpi"] = jaxamg::bindings::encapsulate(JaxamgSolveMpiCpu);
    d["jaxamg_mpi_gather_columns"] = jaxamg::bindings::encapsulate(JaxamgMpiGatherColumnsCpu);
    d["jaxamg_mpi_allreduce_sum"] = jaxamg::bindings::encapsulate(JaxamgMpiAllreduceSumCpu);
    return d;
  });
  // The same targets for the "CUDA" platform; empty without the CUDA backend.
  m.def("cuda_registrations", [] {
    nb::dict d;
#ifdef JAXAMG_MPI_CUDA
    d["jaxamg_solve_mpi"] = jaxamg::bindings::encapsulate(JaxamgSolveMpiCuda);
    d["jaxamg_mpi_gather_columns"] = jaxamg::bindings::encapsulate(JaxamgMpiGatherColumnsCuda);
    d["jaxamg_mpi_allreduce_sum"] = jaxamg::bindings::encapsulate(JaxamgMpiAllreduceSumCuda);
#endif
    return d;
  });
  // The module exists only in builds with MPI; the handlers themselves need
  // MPI initialised (mpi4py does that on import) and say so if it is not.
  m.def("available", [] { return true; });
  // Statistics text printed by MPI solves since the last call (then cleared).
  m.def("take_stats_text", &jaxamg::ffi_cache::take_stats_text);
  // This process's cache of distributed solvers and gather plans. Clearing
  // it on some processes only is safe: the processes agree on setup versus
  // reuse collectively at the next solve.
  m.def("clear_cache", [] {
    nb::gil_scoped_release release;
    jaxamg::mpi_cache::Cache::instance().clear();
  });
  m.def("cache_info", [] {
    nb::list entries;
    for (const auto& key : jaxamg::mpi_cache::Cache::instance().keys()) {
      if (key.config.empty()) continue;  // a gather plan, not a solver
      nb::dict d;
      d["n_rows"] = key.n_local;
      d["n_rows_global"] = key.nglobal;
      d["row_start"] = key.row_start;
      d["nnz"] = key.nnz;
      d["mode"] = key.is_double ? "float64" : "float32";
      d["block_dim"] = key.block_dim;
      d["comm_size"] = key.comm_size;
      d["config"] = key.config;
      entries.append(d);
    }
    nb::dict out;
    out["size"] = nb::len(entries);
    out["capacity"] = jaxamg::mpi_cache::Cache::instance().capacity();
    out["entries"] = entries;
    return out;
  });
  m.def("mpi_initialized", [] {
    int flag = 0;
    MPI_Initialized(&flag);
    return flag != 0;
  });
}
