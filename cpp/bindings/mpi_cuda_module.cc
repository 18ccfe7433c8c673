// nanobind module jaxamg._mpi_cuda: the MPI FFI targets for JAX processes on
// CUDA devices (cpp/ffi/mpi_cuda/), registered from Python with
// platform="CUDA". A module apart from jaxamg._mpi, which CPU processes load
// without the CUDA libraries; like jaxamg._cuda it keeps its own solver
// cache and statistics text. Built when CMake finds MPI and the CUDA backend.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "../ffi/mpi_cuda/mpi_cuda_handlers.h"
#include "../ffi/solver_cache.h"
#include "core/engine_instance.h"
#include "ffi_capsule.h"
#include "mpi_cache_info.h"
#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace nb = nanobind;

XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgSolveMpiCuda);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgMpiGatherColumnsCuda);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgMpiAllreduceSumCuda);

NB_MODULE(_mpi_cuda, m) {
  m.doc() = "XLA FFI handlers of jaxamg's distributed (MPI) solver for CUDA devices";
  m.def("engine_instance", &jaxamg::engine_instance,
        "The address of a variable of the engine library this module uses (one per process).");
  m.def("registrations", [] {
    nb::dict d;
    d["jaxamg_solve_mpi"] = jaxamg::bindings::encapsulate(JaxamgSolveMpiCuda);
    d["jaxamg_mpi_gather_columns"] = jaxamg::bindings::encapsulate(JaxamgMpiGatherColumnsCuda);
    d["jaxamg_mpi_allreduce_sum"] = jaxamg::bindings::encapsulate(JaxamgMpiAllreduceSumCuda);
    return d;
  });
  // This process's last distributed solve of GPU arrays: on_device, staged
  // (the matrix went to the host), reason (why the host solved).
  m.def("last_device_solve", [] {
    const auto r = jaxamg::mpi_handlers::last_device_solve();
    nb::dict d;
    d["on_device"] = r.on_device;
    d["staged"] = r.staged;
    d["reason"] = r.reason;
    return d;
  });
  // Statistics text printed by these solves since the last call (then cleared).
  m.def("take_stats_text", &jaxamg::ffi_cache::take_stats_text);
  m.def("clear_cache", &jaxamg::bindings::clear_mpi_cache);
  m.def("cache_info", [] { return jaxamg::bindings::mpi_cache_info(); });
}
