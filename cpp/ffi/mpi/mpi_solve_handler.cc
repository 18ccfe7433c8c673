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
#include "mpi_error.h"
#include "mpi_solver_cache.h"
#include "../solver_cache.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace jaxamg::mpi_handlers {

namespace {

using mpi_cache::Cache;
using mpi_cache::Entry;
using mpi_cache::Key;

std::vector<int64_t> batch_dims(ffi::AnyBuffer::Dimensions dims) {
  std::vector<int64_t> out;
  for (size_t i = 0; i + 1 < dims.size(); ++i) out.push_back(dims[i]);
  return out;
}

// Output lane -> lane of an operand broadcast against the output's batch shape.
int64_t broadcast_lane(int64_t lane, const std::vector<int64_t>& out_shape,
                       const std::vector<int64_t>& in_shape) {
  int64_t in_lane = 0, in_stride = 1;
  const size_t offset = out_shape.size() - in_shape.size();
  for (size_t d = out_shape.size(); d-- > 0;) {
    const int64_t idx = lane % out_shape[d];
    lane /= out_shape[d];
    if (d >= offset) {
      const int64_t extent = in_shape[d - offset];
      if (extent != 1) in_lane += idx * in_stride;
      in_stride *= extent;
    }
  }
  return in_lane;
}

int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

template <class T>
bool all_finite(const T* v, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(v[i])) return false;
  }
  return true;
}

template <class T>
std::unique_ptr<dist::DistLinearSolver<T>>& solver_slot(Entry& e);
template <>
std::unique_ptr<dist::DistLinearSolver<float>>& solver_slot<float>(Entry& e) { return e.f32; }
template <>
std::unique_ptr<dist::DistLinearSolver<double>>& solver_slot<double>(Entry& e) { return e.f64; }

struct Attrs {
  std::string_view config;
  uint64_t structure_hi, structure_lo;
  bool transpose, use_x0, reuse_setup;
  int64_t block_dim, history_len, comm, row_start, nglobal;
};

template <class T>
void solve_typed(const dist::Communicator& comm, const Attrs& at, ffi::Buffer<ffi::S32> indptr,
                 ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                 ffi::AnyBuffer x0, ffi::AnyBuffer x, ffi::AnyBuffer stats) {
  const int64_t n_ptr = indptr.dimensions().back();
  const int64_t n = n_ptr - 1;
  const int64_t nnz = indices.dimensions().back();
  const auto out_shape = batch_dims(x.dimensions());
  const auto ptr_shape = batch_dims(indptr.dimensions());
  const auto idx_shape = batch_dims(indices.dimensions());
  const auto data_shape = batch_dims(data.dimensions());
  const auto b_shape = batch_dims(b.dimensions());
  const auto x0_shape = batch_dims(x0.dimensions());
  const int64_t lanes = product(out_shape);
  comm.agree_on([&] {
    if (b.dimensions().back() != n) {
      throw InvalidInput("b: has " + std::to_string(b.dimensions().back()) +
                         " entries but this process's block of A has " + std::to_string(n) +
                         " rows; pass one entry per local row");
    }
    if (data.dimensions().back() != nnz) {
      throw InvalidInput("A: " + std::to_string(data.dimensions().back()) + " values for " +
                         std::to_string(nnz) + " column indices; pass one value per stored entry");
    }
  });
  // The same number of lanes everywhere, or the processes would run
  // different numbers of collective solves.
  if (comm.min_int(lanes) != comm.max_int(lanes)) {
    throw InvalidInput("jaxamg_solve_mpi: the processes passed different batch sizes; every "
                       "process must solve the same number of right-hand sides");
  }
  const bool shared_structure = product(ptr_shape) == 1 && product(idx_shape) == 1;
  const int64_t stats_len = 3 + at.history_len;
  const int32_t* ptr_base = indptr.typed_data();
  const int32_t* idx_base = indices.typed_data();
  const T* data_base = data.typed_data<T>();
  const T* b_base = b.typed_data<T>();
  const T* x0_base = x0.typed_data<T>();
  T* x_base = x.typed_data<T>();
  T* stats_base = stats.typed_data<T>();
  Cache& cache = Cache::instance();
  for (int64_t lane = 0; lane < lanes; ++lane) {
    const int32_t* ptr = ptr_base + broadcast_lane(lane, out_shape, ptr_shape) * n_ptr;
    const int32_t* idx = idx_base + broadcast_lane(lane, out_shape, idx_shape) * nnz;
    const T* vals = data_base + broadcast_lane(lane, out_shape, data_shape) * nnz;
    const T* rhs = b_base + broadcast_lane(lane, out_shape, b_shape) * n;
    const T* guess = x0_base + broadcast_lane(lane, out_shape, x0_shape) * n;
    T* sol = x_base + lane * n;
    T* st = stats_base + lane * stats_len;
    // Inside a compiled program a bad value cannot raise: every process
    // reports FAILED with a NaN solution if any process has one.
    const bool finite = all_finite(vals, nnz) && all_finite(rhs, n) &&
                        (!at.use_x0 || all_finite(guess, n));
    if (comm.max(finite ? 0.0 : 1.0) != 0.0) {
      std::fill(sol, sol + n, std::numeric_limits<T>::quiet_NaN());
      std::fill(st, st + stats_len, std::numeric_limits<T>::quiet_NaN());
      st[0] = T(0);
      st[2] = static_cast<T>(static_cast<int>(Status::kFailed));
      continue;
    }
    Key key;
    key.config = std::string(at.config);
    key.is_double = std::is_same<T, double>::value;
    key.block_dim = at.block_dim;
    key.comm = at.comm;
    key.comm_size = comm.size();
    key.row_start = at.row_start;
    key.nglobal = at.nglobal;
    key.n_local = n;
    key.nnz = nnz;
    if (shared_structure && (at.structure_hi | at.structure_lo) != 0) {
      key.structure_hi = at.structure_hi;
      key.structure_lo = at.structure_lo;
    } else {
      mpi_cache::fingerprint(n, ptr, idx, nnz, &key.structure_hi, &key.structure_lo);
    }
    auto entry = cache.acquire(key);
    std::lock_guard<std::mutex> guard(entry->mutex);
    auto& solver = solver_slot<T>(*entry);
    const std::size_t value_bytes = static_cast<std::size_t>(nnz) * sizeof(T);
    // 2: full setup, 1: new values, 0: reuse -- the largest need anywhere wins.
    int64_t need = 0;
    if (!solver) {
      need = 2;
    } else if (std::memcmp(entry->values.data(), vals, value_bytes) != 0) {
      need = 1;
    }
    need = comm.max_int(need);
    if (need == 2) {
      solver.reset();
      auto fresh = std::make_unique<dist::DistLinearSolver<T>>(std::string(at.config), comm.comm());
      fresh->setup(at.row_start, at.nglobal, static_cast<Index>(n), ptr, idx, vals, nnz,
                   static_cast<Index>(at.block_dim));
      solver = std::move(fresh);
    } else if (need == 1) {
      try {
        if (at.reuse_setup) {
          solver->replace_values(vals, nnz);
        } else {
          solver->resetup(vals, nnz);
        }
      } catch (...) {
        solver.reset();  // a half-updated solver must not serve later calls
        throw;
      }
    }
    entry->values.assign(reinterpret_cast<const unsigned char*>(vals),
                         reinterpret_cast<const unsigned char*>(vals) + value_bytes);
    if (at.use_x0) std::memcpy(sol, guess, static_cast<std::size_t>(n) * sizeof(T));
    const SolveResult r = solver->solve(rhs, sol, static_cast<Index>(n), at.use_x0, at.transpose);
    // AmgX-layout statistics (print_solve_stats & co.) for save_stats_file;
    // Python reads them with jaxamg._mpi.take_stats_text() on rank 0.
    const std::string log = solver->take_log();
    if (!log.empty()) ffi_cache::append_stats_text(log);
    st[0] = static_cast<T>(r.iterations);
    st[1] = static_cast<T>(r.residual);
    st[2] = static_cast<T>(static_cast<int>(r.status));
    for (int64_t h = 0; h < at.history_len; ++h) {
      st[3 + h] = h < static_cast<int64_t>(r.history.size())
                      ? static_cast<T>(r.history[h])
                      : std::numeric_limits<T>::quiet_NaN();
    }
  }
}

ffi::Error SolveMpiImpl(std::string_view config, int64_t structure_hi, int64_t structure_lo,
                        bool transpose, bool use_x0, bool reuse_setup, int64_t block_dim,
                        int64_t history_len, int64_t comm_handle, int64_t row_start,
                        int64_t nglobal, ffi::Buffer<ffi::S32> indptr,
                        ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                        ffi::AnyBuffer x0, ffi::Result<ffi::AnyBuffer> x,
                        ffi::Result<ffi::AnyBuffer> stats) {
  return guarded("jaxamg_solve_mpi", [&] {
    require_thread_support("jaxamg_solve_mpi");
    const dist::Communicator comm = dist::Communicator::from_fortran(comm_handle);
    const Attrs at{config,      static_cast<uint64_t>(structure_hi),
                   static_cast<uint64_t>(structure_lo), transpose, use_x0, reuse_setup,
                   block_dim,   history_len, comm_handle, row_start, nglobal};
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
      solve_typed<double>(comm, at, indptr, indices, data, b, x0, *x, *stats);
    } else {
      solve_typed<float>(comm, at, indptr, indices, data, b, x0, *x, *stats);
    }
  });
}

}  // namespace

}  // namespace jaxamg::mpi_handlers

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgSolveMpiCpu, jaxamg::mpi_handlers::SolveMpiImpl,
                              ffi::Ffi::Bind()
                                  .Attr<std::string_view>("config")
                                  .Attr<int64_t>("structure_hi")
                                  .Attr<int64_t>("structure_lo")
                                  .Attr<bool>("transpose")
                                  .Attr<bool>("use_x0")
                                  .Attr<bool>("reuse_setup")
                                  .Attr<int64_t>("block_dim")
                                  .Attr<int64_t>("history_len")
                                  .Attr<int64_t>("comm")
                                  .Attr<int64_t>("row_start")
                                  .Attr<int64_t>("nglobal")
                                  .Arg<ffi::Buffer<ffi::S32>>()  // indptr
                                  .Arg<ffi::Buffer<ffi::S32>>()  // indices (global)
                                  .Arg<ffi::AnyBuffer>()         // data
                                  .Arg<ffi::AnyBuffer>()         // b
                                  .Arg<ffi::AnyBuffer>()         // x0
                                  .Ret<ffi::AnyBuffer>()         // x
                                  .Ret<ffi::AnyBuffer>());       // stats
