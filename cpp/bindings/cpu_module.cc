// nanobind module jaxamg._cpu: hands the XLA FFI handler capsules to Python
// (registered there with jax.ffi.register_ffi_target) and exposes the solver
// cache (info, clear, capacity).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <type_traits>

#include "../ffi/solver_cache.h"
#include "cache_info.h"
#include "core/engine_instance.h"
#include "ffi_capsule.h"
#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace nb = nanobind;

XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgSolveCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgSolveNnsCpu);

NB_MODULE(_cpu, m) {
  m.doc() = "XLA FFI handlers and the native solver cache of jaxamg";
  m.def("engine_instance", &jaxamg::engine_instance,
        "The address of a variable of the engine library this module uses (one per process).");
  m.def("registrations", [] {
    nb::dict d;
    d["jaxamg_solve"] = jaxamg::bindings::encapsulate(JaxamgSolveCpu);
    d["jaxamg_solve_nns"] = jaxamg::bindings::encapsulate(JaxamgSolveNnsCpu);
    return d;
  });
  m.def("cache_info",
        [] {
          return jaxamg::bindings::cache_info_dict(jaxamg::ffi_cache::SolverCache::instance());
        });
  m.def("clear_cache",
        [] { jaxamg::bindings::clear_cache(jaxamg::ffi_cache::SolverCache::instance()); });
  m.def("take_stats_text", &jaxamg::ffi_cache::take_stats_text);
  m.def("set_cache_capacity",
        [](std::size_t c) { jaxamg::ffi_cache::SolverCache::instance().set_capacity(c); });
}
