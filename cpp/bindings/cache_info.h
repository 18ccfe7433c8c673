// The solver cache of one native module as a Python dict (size, capacity,
// entries, total_setups). jaxamg._cpu and jaxamg._cuda each hold their own
// SolverCache instance; both report it through this one function.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdio>
#include <string>
#include <vector>

#include "../ffi/solver_cache.h"

namespace jaxamg::bindings {

inline nanobind::dict cache_info_dict(jaxamg::ffi_cache::SolverCache& cache) {
  namespace nb = nanobind;
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

// Frees every cached solver; without the GIL because freeing large
// hierarchies takes a while.
inline void clear_cache(jaxamg::ffi_cache::SolverCache& cache) {
  nanobind::gil_scoped_release release;
  cache.clear();
}

}  // namespace jaxamg::bindings
