// nanobind module jaxamg._cuda: the XLA FFI handler of jaxamg_solve for the
// CUDA platform (registered from Python with platform="CUDA"), its solver
// cache (a separate instance from jaxamg._cpu's) and what the last solve did.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <stdexcept>
#include <type_traits>

#include "../ffi/cuda_solve_handler.h"
#include "../ffi/solver_cache.h"
#include "backend/cuda/device_array.h"
#include "cache_info.h"
#include "core/engine_instance.h"
#include "ffi_capsule.h"
#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace nb = nanobind;

XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgSolveCuda);

namespace {


int device_count() {
  int n = 0;
  // No driver or no device: zero devices, not an error.
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace

NB_MODULE(_cuda, m) {
  m.doc() = "XLA FFI handler of jaxamg for CUDA devices";
  m.def("engine_instance", &jaxamg::engine_instance,
        "The address of a variable of the engine library this module uses (one per process).");
  m.def("registrations", [] {
    nb::dict d;
    d["jaxamg_solve"] = jaxamg::bindings::encapsulate(JaxamgSolveCuda);
    return d;
  });
  m.def("device_count", &device_count);
  m.def("cache_info",
        [] {
          return jaxamg::bindings::cache_info_dict(jaxamg::ffi_cache::SolverCache::instance());
        });
  // Frees the device hierarchies of every cached solver (cudaFree).
  m.def("clear_cache",
        [] { jaxamg::bindings::clear_cache(jaxamg::ffi_cache::SolverCache::instance()); });
  m.def("cache_size", [] { return jaxamg::ffi_cache::SolverCache::instance().entries().size(); });
  // This module's statistics text (save_stats_file of a solve on the GPU).
  m.def("take_stats_text", &jaxamg::ffi_cache::take_stats_text);
  m.def("total_setups", [] { return jaxamg::ffi_cache::SolverCache::instance().total_setups(); });
  // Bytes of device memory held by jaxamg's CUDA allocations right now.
  m.def("live_device_bytes", [] { return jaxamg::cuda::live_device_bytes().load(); });
  // The most jaxamg's CUDA allocations have held at once since the last
  // reset (a setup's peak, scratch included); reset=True starts a new window.
  m.def(
      "peak_device_bytes",
      [](bool reset) {
        const long long peak = jaxamg::cuda::peak_device_bytes().load();
        if (reset) jaxamg::cuda::peak_device_bytes() = jaxamg::cuda::live_device_bytes().load();
        return peak;
      },
      nb::arg("reset") = false);
  // (free, total) bytes of the current device, from cudaMemGetInfo.
  m.def("device_memory", [] {
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error("jaxamg._cuda.device_memory: cudaMemGetInfo failed");
    }
    return nb::make_tuple(free_bytes, total_bytes);
  });
  m.def("last_solve", [] {
    const auto info = jaxamg::ffi_handlers::last_cuda_solve();
    nb::dict d;
    d["on_device"] = info.on_device;
    d["host_reason"] = info.host_reason;
    d["setup_on_device"] = info.setup_on_device;
    d["setup_reason"] = info.setup_reason;
    d["iterations"] = info.iterations;
    d["bytes"] = info.bytes;
    d["refresh"] = info.refresh;
    d["refresh_ms"] = info.refresh_ms;
    d["solve_ms"] = info.solve_ms;
    d["lane_ms"] = info.lane_ms;
    nb::list levels;
    for (const auto& l : info.levels) levels.append(nb::make_tuple(l.first, l.second));
    d["levels"] = levels;
    return d;
  });
}
