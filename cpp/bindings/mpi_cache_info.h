// The MPI solver cache of one native module (jaxamg._mpi or
// jaxamg._mpi_cuda, each with its own) as a Python dict, and its clearing.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "../ffi/mpi/mpi_solver_cache.h"

namespace jaxamg::bindings {

// This process's cache of distributed solvers and gather plans. Clearing it
// on some processes only is safe: the processes agree on setup versus reuse
// collectively at the next solve.
inline void clear_mpi_cache() {
  nanobind::gil_scoped_release release;
  jaxamg::mpi_cache::Cache::instance().clear();
}

inline nanobind::dict mpi_cache_info() {
  namespace nb = nanobind;
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
}

}  // namespace jaxamg::bindings
