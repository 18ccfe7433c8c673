// nanobind module jaxamg._cpu: hands the XLA FFI handler capsules to Python
// (registered there with jax.ffi.register_ffi_target) and exposes the solver
// cache (info, clear, capacity).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <type_traits>

#include "../ffi/solver_cache.h"
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

nb::dict cache_info() {
  using jaxamg::ffi_cache::SolverCache;
  SolverCache& cache = SolverCache::instance();
  // Without the GIL: the snapshot waits for solves in progress on an entry,
  // and other Python threads must run meanwhile.
  std::vector<jaxamg::ffi_cache::EntryInfo> snapshot;
  {
    nb::gil_scoped_release release;
    snapshot = cache.entries();
  }
  nb::list entries;
  for (const auto& e : snapshot) {
    nb::dict d;
    d["n_rows"] = e.key.n_rows;
    d["nnz"] = e.key.nnz;
    d["mode"] = e.key.is_double ? "float64" : "float32";
    d["transpose_solve"] = e.transposed_used;
    d["block_dim"] = e.key.block_dim;
    char hash[40];
    std::snprintf(hash, sizeof hash, "%016llx%016llx",
                  static_cast<unsigned long long>(e.key.structure_hi),
                  static_cast<unsigned long long>(e.key.structure_lo));
    d["structure_hash"] = std::string(hash);
    d["config"] = e.key.config;
    d["setups"] = e.setups;
    d["resetups"] = e.resetups;
    d["reuses"] = e.reuses;
    entries.append(d);
  }
  nb::dict out;
  out["size"] = nb::len(entries);
  out["capacity"] = cache.capacity();
  out["entries"] = entries;
  out["total_setups"] = cache.total_setups();
  return out;
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
  m.def("cache_info", &cache_info);
  m.def("clear_cache", [] {
    nb::gil_scoped_release release;  // freeing large hierarchies takes a while
    jaxamg::ffi_cache::SolverCache::instance().clear();
  });
  m.def("take_stats_text", &jaxamg::ffi_cache::take_stats_text);
  m.def("set_cache_capacity",
        [](std::size_t c) { jaxamg::ffi_cache::SolverCache::instance().set_capacity(c); });
}
