// nanobind module jaxamg._mpi: the XLA FFI handler capsules of the
// distributed solver (cpp/ffi/mpi/), registered from Python with
// platform="cpu" (jaxamg._mpi_cuda has the "CUDA" ones). Built only when
// CMake finds MPI (option JAXAMG_MPI).
#include <mpi.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "../ffi/mpi/mpi_solver_cache.h"
#include "../ffi/solver_cache.h"
#include "core/engine_instance.h"
#include "dist/exchange_tables.h"
#include "ffi_capsule.h"
#include "mpi_cache_info.h"
#include "owned_array.h"
#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace nb = nanobind;

namespace {

template <class T>
using Ints = nb::ndarray<nb::ro, T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <class T>
std::vector<T> to_vector(const Ints<T>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

// The partition of the rows over the communicator with Fortran handle
// `comm`, built and validated collectively by the engine.
std::pair<jaxamg::dist::Communicator, jaxamg::dist::RowPartition> partition_of(
    int64_t comm, int64_t row_start, int64_t n_local, int64_t nglobal) {
  auto c = jaxamg::dist::Communicator::from_fortran(comm);
  auto part = jaxamg::dist::RowPartition::build(c, row_start, n_local, nglobal);
  return {c, part};
}

using jaxamg::bindings::owned_array;

}  // namespace

XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgSolveMpiCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgMpiGatherColumnsCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgMpiAllreduceSumCpu);

NB_MODULE(_mpi, m) {
  m.doc() = "XLA FFI handlers of jaxamg's distributed (MPI) solver";
  m.def("engine_instance", &jaxamg::engine_instance,
        "The address of a variable of the engine library this module uses (one per process).");
  m.def("registrations", [] {
    nb::dict d;
    d["jaxamg_solve_mpi"] = jaxamg::bindings::encapsulate(JaxamgSolveMpiCpu);
    d["jaxamg_mpi_gather_columns"] = jaxamg::bindings::encapsulate(JaxamgMpiGatherColumnsCpu);
    d["jaxamg_mpi_allreduce_sum"] = jaxamg::bindings::encapsulate(JaxamgMpiAllreduceSumCpu);
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
  m.def("clear_cache", &jaxamg::bindings::clear_mpi_cache);
  m.def("cache_info", [] { return jaxamg::bindings::mpi_cache_info(); });
  // The engine's exchange plans as flat tables (dist/exchange_tables.h), for
  // jaxamg.mpi_utils. Collective over the communicator.
  m.def("halo_tables", [](int64_t comm, int64_t row_start, int64_t n_local, int64_t nglobal,
                          const Ints<int64_t>& ghosts) {
    jaxamg::dist::HaloTables t;
    {
      nb::gil_scoped_release release;
      auto [c, part] = partition_of(comm, row_start, n_local, nglobal);
      t = jaxamg::dist::halo_tables(c, part, to_vector(ghosts));
    }
    nb::dict d;
    d["ghosts"] = owned_array(std::move(t.ghosts));
    d["recv_ranks"] = owned_array(std::move(t.recv_ranks));
    d["recv_offsets"] = owned_array(std::move(t.recv_offsets));
    d["send_ranks"] = owned_array(std::move(t.send_ranks));
    d["send_offsets"] = owned_array(std::move(t.send_offsets));
    d["send_index"] = owned_array(std::move(t.send_index));
    return d;
  }, nb::arg("comm"), nb::arg("row_start"), nb::arg("n_local"), nb::arg("nglobal"),
        nb::arg("ghosts"));
  m.def("transpose_tables", [](int64_t comm, int64_t row_start, int64_t n_local,
                               int64_t nglobal, const Ints<int32_t>& indptr,
                               const Ints<int32_t>& indices) {
    jaxamg::dist::TransposeTables t;
    {
      nb::gil_scoped_release release;
      auto [c, part] = partition_of(comm, row_start, n_local, nglobal);
      t = jaxamg::dist::transpose_tables(c, part, to_vector(indptr), to_vector(indices));
    }
    nb::dict d;
    d["indptr"] = owned_array(std::move(t.row_ptr));
    d["indices"] = owned_array(std::move(t.col));
    d["local_entry"] = owned_array(std::move(t.local_entry));
    d["local_slot"] = owned_array(std::move(t.local_slot));
    d["send_ranks"] = owned_array(std::move(t.send_ranks));
    d["send_offsets"] = owned_array(std::move(t.send_offsets));
    d["send_entry"] = owned_array(std::move(t.send_entry));
    d["recv_ranks"] = owned_array(std::move(t.recv_ranks));
    d["recv_offsets"] = owned_array(std::move(t.recv_offsets));
    d["recv_slot"] = owned_array(std::move(t.recv_slot));
    return d;
  }, nb::arg("comm"), nb::arg("row_start"), nb::arg("n_local"), nb::arg("nglobal"),
        nb::arg("indptr"), nb::arg("indices"));
  m.def("mpi_initialized", [] {
    int flag = 0;
    MPI_Initialized(&flag);
    return flag != 0;
  });
}
