// nanobind module jaxamg._cpu: hands the XLA FFI handler capsules to Python
// (registered there with jax.ffi.register_ffi_target) and exposes the solver
// cache (info, clear, capacity).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <type_traits>

#include "../ffi/solver_cache.h"
#include "cache_info.h"
#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace nb = nanobind;

XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgSolveCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgSolveNnsCpu);

namespace {

template <class T>
nb::capsule encapsulate(T* fn) {
  static_assert(std::is_invocable_r_v<XLA_FFI_Error*, T, XLA_FFI_CallFrame*>,
                "not an XLA FFI handler");
  return nb::capsule(reinterpret_cast<void*>(fn));
}

}  // namespace

NB_MODULE(_cpu, m) {
  m.doc() = "XLA FFI handlers and the native solver cache of jaxamg";
  m.def("registrations", [] {
    nb::dict d;
    d["jaxamg_solve"] = encapsulate(JaxamgSolveCpu);
    d["jaxamg_solve_nns"] = encapsulate(JaxamgSolveNnsCpu);
    return d;
  });
  m.def("cache_info",
        [] { return jaxamg::bindings::cache_info_dict(jaxamg::ffi_cache::SolverCache::instance()); });
  m.def("clear_cache",
        [] { jaxamg::bindings::clear_cache(jaxamg::ffi_cache::SolverCache::instance()); });
  m.def("take_stats_text", &jaxamg::ffi_cache::take_stats_text);
  m.def("set_cache_capacity",
        [](std::size_t c) { jaxamg::ffi_cache::SolverCache::instance().set_capacity(c); });
}
