// The XLA FFI handler `jaxamg_solve_mpi` (CPU): x = A^-1 b (or A^-T b) for a
// matrix distributed by rows over the processes of an MPI communicator.
// Operands as jaxamg_solve (cpp/ffi/solve_handler.cc) but the matrix is this
// process's contiguous block of rows with global column indices; attributes
// as jaxamg_solve plus comm (a Fortran handle), row_start and nglobal. Every
// process of comm calls it with the same config and lanes. Every error is
// agreed by the processes, so all return the same ffi::Error (the first
// failing rank's message, "rank R: ..."), and none waits forever.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "../handler_common.h"
#include "mpi_error.h"
#include "mpi_handlers.h"
#include "mpi_solver_cache.h"
#include "../solver_cache.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace jaxamg::mpi_handlers {

namespace {

using mpi_cache::Cache;
using mpi_cache::Entry;
using mpi_cache::Key;

template <class T>
std::unique_ptr<dist::DistLinearSolver<T>>& solver_slot(Entry& e);
template <>
std::unique_ptr<dist::DistLinearSolver<float>>& solver_slot<float>(Entry& e) { return e.f32; }
template <>
std::unique_ptr<dist::DistLinearSolver<double>>& solver_slot<double>(Entry& e) { return e.f64; }

using ffi_handlers::CallLayout;
using ffi_handlers::Lane;
using ffi_handlers::Refresh;
using ffi_handlers::SolveAttrs;

template <class T>
void solve_typed(const dist::Communicator& comm, const SolveAttrs& at, const Partition& part,
                 ffi::Buffer<ffi::S32> indptr, ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data,
                 ffi::AnyBuffer b, ffi::AnyBuffer x0, ffi::AnyBuffer x, ffi::AnyBuffer stats,
                 LaneBackend* device) {
  const CallLayout L(indptr, indices, data, b, x0, x, at.history_len);
  const int64_t n = L.n, nnz = L.nnz;
  comm.agree_on([&] {
    L.check_sizes(b.dimensions().back(), data.dimensions().back(), stats.dimensions().back(),
                  "this process's block of A");
  });
  // The same number of lanes everywhere, or the processes would run
  // different numbers of collective solves.
  if (comm.min_int(L.lanes) != comm.max_int(L.lanes)) {
    throw InvalidInput("jaxamg_solve_mpi: the processes passed different batch sizes; every "
                       "process must solve the same number of right-hand sides");
  }
  Cache& cache = Cache::instance();
  for (int64_t lane = 0; lane < L.lanes; ++lane) {
    const Lane<T> in = ffi_handlers::lane_of<T>(
        L, lane, indptr.typed_data(), indices.typed_data(), data.typed_data<T>(),
        b.typed_data<T>(), x0.typed_data<T>(), x.typed_data<T>(), stats.typed_data<T>());
    // Inside a compiled program a bad value cannot raise: every process
    // reports FAILED with a NaN solution if any process has one.
    const bool finite = ffi_handlers::all_finite(in.vals, nnz) &&
                        ffi_handlers::all_finite(in.rhs, n) &&
                        (!at.use_x0 || ffi_handlers::all_finite(in.guess, n));
    if (comm.max(finite ? 0.0 : 1.0) != 0.0) {
      std::fill(in.sol, in.sol + n, std::numeric_limits<T>::quiet_NaN());
      ffi_handlers::fill_stats(in.stats, ffi_handlers::failed_result(), at.history_len);
      continue;
    }
    const Key key = solve_key(comm, at, part, n, nnz, std::is_same<T, double>::value,
                              L.shared_structure, in.ptr, in.idx);
    auto entry = cache.acquire(key);
    std::lock_guard<std::mutex> guard(entry->mutex);
    auto& solver = solver_slot<T>(*entry);
    const std::size_t value_bytes = static_cast<std::size_t>(nnz) * sizeof(T);
    Refresh need = !solver ? Refresh::kSetup
                   : std::memcmp(entry->values.data(), in.vals, value_bytes) != 0
                       ? Refresh::kNewValues
                       : Refresh::kReuse;
    // The largest need anywhere wins, so that every process takes the same
    // collective steps.
    need = static_cast<Refresh>(comm.max_int(static_cast<int64_t>(need)));
    ffi_handlers::refresh(need, solver, in.vals, nnz, at.reuse_setup, [&] {
      auto fresh =
          std::make_unique<dist::DistLinearSolver<T>>(std::string(at.config), comm.comm());
      fresh->setup(part.row_start, part.nglobal, static_cast<Index>(n), in.ptr, in.idx, in.vals,
                   nnz, static_cast<Index>(at.block_dim));
      return fresh;
    });
    if (need != Refresh::kReuse) {
      entry->device.reset();  // a copy of the trees just replaced
      entry->values.assign(reinterpret_cast<const unsigned char*>(in.vals),
                           reinterpret_cast<const unsigned char*>(in.vals) + value_bytes);
    } else {
      solver->print_setup_stats();  // the statistics file has it every call
    }
    SolveResult r;
    int place = ffi_handlers::kOnHost;
    if (device && device->solve(*solver, *entry, need != Refresh::kReuse, lane, at.use_x0,
                                at.transpose, &r)) {
      place = ffi_handlers::kSolveOnDevice;
    } else {
      if (at.use_x0) std::memcpy(in.sol, in.guess, static_cast<std::size_t>(n) * sizeof(T));
      r = solver->solve(in.rhs, in.sol, static_cast<Index>(n), at.use_x0, at.transpose);
    }
    // AmgX-layout statistics (print_solve_stats & co.) for save_stats_file;
    // Python reads them with jaxamg._mpi.take_stats_text() on rank 0.
    const std::string log = solver->take_log();
    if (!log.empty()) ffi_cache::append_stats_text(log);
    ffi_handlers::fill_stats(in.stats, r, at.history_len, place);
  }
}

}  // namespace

Key solve_key(const dist::Communicator& comm, const ffi_handlers::SolveAttrs& at,
              const Partition& part, int64_t n, int64_t nnz, bool is_double, bool shared_structure,
              const int32_t* ptr, const int32_t* idx) {
  Key key;
  key.config = std::string(at.config);
  key.is_double = is_double;
  key.block_dim = at.block_dim;
  // The engine's duplicate, not the caller's handle (reusable once freed).
  key.comm = static_cast<int64_t>(comm.serial());
  key.comm_size = comm.size();
  key.row_start = part.row_start;
  key.nglobal = part.nglobal;
  key.n_local = n;
  key.nnz = nnz;
  if (shared_structure && (at.structure_hi | at.structure_lo) != 0) {
    key.structure_hi = at.structure_hi;
    key.structure_lo = at.structure_lo;
  } else {
    ffi_cache::fingerprint(n, ptr, idx, nnz, &key.structure_hi, &key.structure_lo);
  }
  mpi_cache::bind_layout(key, comm);
  return key;
}

ffi::Error SolveMpiImpl(std::string_view config, int64_t structure_hi, int64_t structure_lo,
                        bool transpose, bool use_x0, bool reuse_setup, int64_t block_dim,
                        int64_t history_len, int64_t comm_handle, int64_t row_start,
                        int64_t nglobal, ffi::Buffer<ffi::S32> indptr,
                        ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                        ffi::AnyBuffer x0, ffi::Result<ffi::AnyBuffer> x,
                        ffi::Result<ffi::AnyBuffer> stats) {
  return SolveMpiWith(nullptr, config, structure_hi, structure_lo, transpose, use_x0, reuse_setup,
                      block_dim, history_len, comm_handle, row_start, nglobal, indptr, indices,
                      data, b, x0, x, stats);
}

ffi::Error SolveMpiWith(LaneBackend* device, std::string_view config, int64_t structure_hi,
                        int64_t structure_lo, bool transpose, bool use_x0, bool reuse_setup,
                        int64_t block_dim, int64_t history_len, int64_t comm_handle,
                        int64_t row_start, int64_t nglobal, ffi::Buffer<ffi::S32> indptr,
                        ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                        ffi::AnyBuffer x0, ffi::Result<ffi::AnyBuffer> x,
                        ffi::Result<ffi::AnyBuffer> stats) {
  return guarded("jaxamg_solve_mpi", [&] {
    require_thread_support("jaxamg_solve_mpi");
    const dist::Communicator comm = dist::Communicator::from_fortran(comm_handle);
    const SolveAttrs at = ffi_handlers::make_attrs(config, structure_hi, structure_lo, transpose,
                                                   use_x0, reuse_setup, block_dim, history_len);
    const Partition part{comm_handle, row_start, nglobal};
    const auto type = data.element_type();
    int64_t code = type == ffi::F64 ? 0 : type == ffi::F32 ? 1 : 2;
    comm.agree_on([&] {
      if (b.element_type() != type || x0.element_type() != type || x->element_type() != type) {
        throw InvalidInput("jaxamg_solve_mpi: A values, b and x0 must share one dtype "
                           "(float32 or float64)");
      }
      if (code == 2) throw InvalidInput("jaxamg_solve_mpi: unsupported dtype; use float32 or float64");
    });
    if (comm.min_int(code) != comm.max_int(code)) {
      throw InvalidInput("jaxamg_solve_mpi: the processes passed different dtypes; pass the "
                         "same dtype (float32 or float64) on every process");
    }
    if (code == 0) {
      solve_typed<double>(comm, at, part, indptr, indices, data, b, x0, *x, *stats, device);
    } else {
      solve_typed<float>(comm, at, part, indptr, indices, data, b, x0, *x, *stats, device);
    }
  });
}

}  // namespace jaxamg::mpi_handlers

namespace jaxamg_bind = jaxamg::ffi_handlers;

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgSolveMpiCpu, jaxamg::mpi_handlers::SolveMpiImpl,
                              jaxamg_bind::bind_system_args(
                                  jaxamg_bind::bind_solve_attrs(ffi::Ffi::Bind())
                                      .Attr<int64_t>("comm")
                                      .Attr<int64_t>("row_start")
                                      .Attr<int64_t>("nglobal"))
                                  .Ret<ffi::AnyBuffer>()    // x
                                  .Ret<ffi::AnyBuffer>());  // stats
