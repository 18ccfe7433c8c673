// What the XLA FFI solve handlers share: jaxamg_solve on the CPU
// (solve_handler.cc) and on CUDA devices (cuda_solve_handler.cc), and
// jaxamg_solve_mpi (mpi/mpi_solve_handler.cc). They take the same
// attributes and operands, lay out vmap lanes the same way, report the same
// stats row, bring a cached solver up to date with new values the same way
// and map engine exceptions to the same ffi::Error codes.
#pragma once
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/linear_solver.h"
#include "batch_lanes.h"
#include "core/error.h"
#include "core/finite_check.h"
#include "xla/ffi/api/ffi.h"

namespace jaxamg::ffi_handlers {

// The attributes every solve target takes, in binding order.
struct SolveAttrs {
  std::string_view config;
  uint64_t structure_hi = 0, structure_lo = 0;  // (0, 0): not fingerprinted in Python
  bool transpose = false, use_x0 = false, reuse_setup = false;
  int64_t block_dim = 1, history_len = 0;
};

// Adds the SolveAttrs attributes to an ffi::Ffi::Bind() chain.
// (Binding's builder methods are rvalue-qualified: each step moves it on.)
template <class Binding>
auto bind_solve_attrs(Binding binding) {
  return std::move(binding)
      .template Attr<std::string_view>("config")
      .template Attr<int64_t>("structure_hi")
      .template Attr<int64_t>("structure_lo")
      .template Attr<bool>("transpose")
      .template Attr<bool>("use_x0")
      .template Attr<bool>("reuse_setup")
      .template Attr<int64_t>("block_dim")
      .template Attr<int64_t>("history_len");
}

// Adds the CSR system operands: indptr, indices, data, b, x0.
template <class Binding>
auto bind_system_args(Binding binding) {
  namespace ffi = xla::ffi;
  return std::move(binding)
      .template Arg<ffi::Buffer<ffi::S32>>()            // indptr
      .template Arg<ffi::Buffer<ffi::S32>>()            // indices
      .template Arg<ffi::AnyBuffer>()                   // data
      .template Arg<ffi::AnyBuffer>()                   // b
      .template Arg<ffi::AnyBuffer>();                  // x0
}

inline SolveAttrs make_attrs(std::string_view config, int64_t structure_hi,
                             int64_t structure_lo, bool transpose, bool use_x0,
                             bool reuse_setup, int64_t block_dim, int64_t history_len) {
  return {config,      static_cast<uint64_t>(structure_hi), static_cast<uint64_t>(structure_lo),
          transpose,   use_x0,
          reuse_setup, block_dim,
          history_len};
}

// Where a lane's setup and solve ran, the stats row's entry 3: bit 0 set
// when the solve ran on the GPU, bit 1 when the hierarchy was built there.
// 0 is the host engine for both (every CPU and distributed solve).
enum Place : int { kOnHost = 0, kSolveOnDevice = 1, kSetupOnDevice = 2 };
// The stats row's entries before the residual history: iterations, final
// residual, status, place.
constexpr int64_t kStatsHead = 4;

// Sizes and batch shapes of one call. Every operand's leading dimensions
// broadcast against x's (each is 1 or the batch size).
struct CallLayout {
  int64_t n_ptr, n, nnz, lanes, stats_len;
  std::vector<int64_t> out, ptr, idx, data, b, x0;
  bool shared_structure;  // one indptr/indices for every lane

  CallLayout(xla::ffi::Buffer<xla::ffi::S32> indptr, xla::ffi::Buffer<xla::ffi::S32> indices,
             xla::ffi::AnyBuffer data_, xla::ffi::AnyBuffer b_, xla::ffi::AnyBuffer x0_,
             xla::ffi::AnyBuffer x, int64_t history_len)
      : n_ptr(indptr.dimensions().back()),
        n(n_ptr - 1),
        nnz(indices.dimensions().back()),
        out(batch_dims(x.dimensions())),
        ptr(batch_dims(indptr.dimensions())),
        idx(batch_dims(indices.dimensions())),
        data(batch_dims(data_.dimensions())),
        b(batch_dims(b_.dimensions())),
        x0(batch_dims(x0_.dimensions())) {
    lanes = product(out);
    stats_len = kStatsHead + history_len;
    shared_structure = product(ptr) == 1 && product(idx) == 1;
  }

  // Throws InvalidInput unless b has one entry per row, data one value per
  // column index and the stats result kStatsHead + history_len entries;
  // `rows_of` names the matrix ("A", or a process's block).
  void check_sizes(int64_t b_len, int64_t data_len, int64_t stats_row,
                   const std::string& rows_of) const {
    if (stats_row != stats_len) {
      throw InvalidInput("stats: the result has " + std::to_string(stats_row) +
                         " entries per solve but history_len " +
                         std::to_string(stats_len - kStatsHead) + " needs " +
                         std::to_string(stats_len) + " (" + std::to_string(kStatsHead) +
                         " + history_len); declare the stats result with that length");
    }
    if (b_len != n) {
      throw InvalidInput("b: has " + std::to_string(b_len) + " entries but " + rows_of + " has " +
                         std::to_string(n) + " rows; pass one entry per row");
    }
    if (data_len != nnz) {
      throw InvalidInput("A: " + std::to_string(data_len) + " values for " +
                         std::to_string(nnz) + " column indices; pass one value per stored entry");
    }
  }
};

// One lane's operands and results (host or device pointers alike).
template <class T>
struct Lane {
  const int32_t* ptr;
  const int32_t* idx;
  const T* vals;
  const T* rhs;
  const T* guess;
  T* sol;
  T* stats;
};

template <class T>
Lane<T> lane_of(const CallLayout& L, int64_t lane, const int32_t* ptr, const int32_t* idx,
                const T* vals, const T* rhs, const T* guess, T* sol, T* stats) {
  return {ptr + broadcast_lane(lane, L.out, L.ptr) * L.n_ptr,
          idx + broadcast_lane(lane, L.out, L.idx) * L.nnz,
          vals + broadcast_lane(lane, L.out, L.data) * L.nnz,
          rhs + broadcast_lane(lane, L.out, L.b) * L.n,
          guess + broadcast_lane(lane, L.out, L.x0) * L.n,
          sol + lane * L.n,
          stats + lane * L.stats_len};
}

template <class T>
bool all_finite(const T* v, int64_t count) {
  return all_entries_finite(v, count);
}

// What a lane with a NaN or Inf input reports: inside a compiled program a
// bad value cannot raise, so FAILED with a NaN residual (direct calls are
// checked in Python first).
inline SolveResult failed_result() {
  SolveResult r;
  r.iterations = 0;
  r.residual = std::numeric_limits<double>::quiet_NaN();
  r.status = Status::kFailed;
  return r;
}

// The stats row: iterations, final residual, status, place (Place bits),
// then the residual history padded with NaN to history_len entries.
template <class T>
void fill_stats(T* row, const SolveResult& r, int64_t history_len, int place = kOnHost) {
  row[0] = static_cast<T>(r.iterations);
  row[1] = static_cast<T>(r.residual);
  row[2] = static_cast<T>(static_cast<int>(r.status));
  row[3] = static_cast<T>(place);
  for (int64_t h = 0; h < history_len; ++h) {
    row[kStatsHead + h] = h < static_cast<int64_t>(r.history.size())
                              ? static_cast<T>(r.history[h])
                              : std::numeric_limits<T>::quiet_NaN();
  }
}

// What a cached solver needs before it can solve with the call's values.
enum class Refresh : int64_t { kReuse = 0, kNewValues = 1, kSetup = 2 };

// Brings `solver` up to date: kSetup builds it with make_fresh(), kNewValues
// keeps the structure (replace_values with reuse_setup, else resetup). A
// failed update drops the solver: a half-updated one must not serve later
// calls.
template <class S, class T, class MakeFresh>
void refresh(Refresh need, std::unique_ptr<S>& solver, const T* vals, int64_t nnz,
             bool reuse_setup, MakeFresh&& make_fresh) {
  if (need == Refresh::kSetup) {
    solver.reset();
    solver = make_fresh();
  } else if (need == Refresh::kNewValues) {
    try {
      if (reuse_setup) {
        solver->replace_values(vals, static_cast<Index>(nnz));
      } else {
        solver->resetup(vals, static_cast<Index>(nnz));
      }
    } catch (...) {
      solver.reset();
      throw;
    }
  }
}

// Calls f(T{}) with T = float or double, the dtype of the values, after
// checking that b, x0 and x share it (InvalidInput otherwise).
template <class F>
void with_value_type(const char* what, xla::ffi::DataType values, xla::ffi::DataType b,
                     xla::ffi::DataType x0, xla::ffi::DataType x, F&& f) {
  namespace ffi = xla::ffi;
  if (b != values || x0 != values || x != values) {
    throw InvalidInput(std::string(what) +
                       ": A values, b and x0 must share one dtype (float32 or float64)");
  }
  if (values == ffi::F64) {
    f(double{});
  } else if (values == ffi::F32) {
    f(float{});
  } else {
    throw InvalidInput(std::string(what) + ": unsupported dtype; use float32 or float64");
  }
}

// The one table from an engine failure to the XLA error code that carries
// its kind to Python (jaxamg._core.errors reads the code back). Config
// errors are invalid arguments too; "config: " marks them so Python raises
// jaxamg.ConfigError.
inline xla::ffi::Error to_ffi_error(const Failure& failure, const char* what) {
  namespace ffi = xla::ffi;
  switch (failure.kind) {
    case ErrorKind::kInvalidInput:
      return ffi::Error(ffi::ErrorCode::kInvalidArgument, failure.message);
    case ErrorKind::kConfig:
      return ffi::Error(ffi::ErrorCode::kInvalidArgument, "config: " + failure.message);
    case ErrorKind::kNotSupported:
      return ffi::Error(ffi::ErrorCode::kUnimplemented, failure.message);
    case ErrorKind::kNumerical:
      return ffi::Error(ffi::ErrorCode::kFailedPrecondition, failure.message);
    case ErrorKind::kInternal: break;
  }
  return ffi::Error(ffi::ErrorCode::kInternal, std::string(what) + ": " + failure.message);
}

// Runs f() and returns its failure, if any, as an ffi::Error.
template <class F>
xla::ffi::Error guarded(const char* what, F&& f) {
  try {
    f();
    return xla::ffi::Error::Success();
  } catch (...) {
    return to_ffi_error(classify(std::current_exception()), what);
  }
}

}  // namespace jaxamg::ffi_handlers
