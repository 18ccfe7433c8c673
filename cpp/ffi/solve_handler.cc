// The XLA FFI handler `jaxamg_solve` for the CPU platform: x = A^-1 b (or
// A^-T b) with A in CSR form, through the solver cache.
//
// Operands: indptr (S32[.., n+1]), indices (S32[.., nnz]), data (F32/F64
// [.., nnz]), b and x0 ([.., n], the dtype of data). Results: x ([.., n]) and
// stats ([.., 3 + history_len]: iterations, final residual, status, then the
// residual history padded with NaN). Leading dimensions are batch dimensions
// added by jax.vmap (vmap_method="expand_dims"): each is either 1 (shared by
// every lane) or the batch size, so a batch of right-hand sides with one
// matrix uses a single setup.
#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "batch_lanes.h"
#include "core/error.h"
#include "shared_matrix_lanes.h"
#include "solver_cache.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace jaxamg::ffi_handlers {

namespace {

using ffi_cache::CacheKey;
using ffi_cache::Entry;
using ffi_cache::SolverCache;

template <class T>
bool all_finite(const T* v, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(v[i])) return false;
  }
  return true;
}

template <class T>
std::unique_ptr<LinearSolver<T>>& solver_slot(Entry& e);
template <>
std::unique_ptr<LinearSolver<float>>& solver_slot<float>(Entry& e) { return e.f32; }
template <>
std::unique_ptr<LinearSolver<double>>& solver_slot<double>(Entry& e) { return e.f64; }

struct Attrs {
  std::string_view config;
  uint64_t structure_hi, structure_lo;
  bool transpose, use_x0, reuse_setup;
  int64_t block_dim, history_len;
  // jaxamg_solve_nns: the near-null-space vectors (n x cols, row-major, the
  // dtype of the values) and their fingerprint; none for jaxamg_solve.
  const void* near_nullspace = nullptr;
  int64_t near_nullspace_cols = 0;
  uint64_t near_nullspace_hi = 0, near_nullspace_lo = 0;
};

template <class T>
void solve_typed(const Attrs& at, ffi::Buffer<ffi::S32> indptr, ffi::Buffer<ffi::S32> indices,
                 ffi::AnyBuffer data, ffi::AnyBuffer b, ffi::AnyBuffer x0, ffi::AnyBuffer x,
                 ffi::AnyBuffer stats) {
  const auto n_ptr = indptr.dimensions().back();
  const int64_t n = n_ptr - 1;
  const int64_t nnz = indices.dimensions().back();
  if (b.dimensions().back() != n) {
    throw InvalidInput("b: has " + std::to_string(b.dimensions().back()) +
                       " entries but A has " + std::to_string(n) + " rows; pass one entry per row");
  }
  if (data.dimensions().back() != nnz) {
    throw InvalidInput("A: " + std::to_string(data.dimensions().back()) + " values for " +
                       std::to_string(nnz) + " column indices; pass one value per stored entry");
  }
  const auto out_shape = batch_dims(x.dimensions());
  const auto ptr_shape = batch_dims(indptr.dimensions());
  const auto idx_shape = batch_dims(indices.dimensions());
  const auto data_shape = batch_dims(data.dimensions());
  const auto b_shape = batch_dims(b.dimensions());
  const auto x0_shape = batch_dims(x0.dimensions());
  const int64_t lanes = product(out_shape);
  const bool shared_structure = product(ptr_shape) == 1 && product(idx_shape) == 1;
  const int64_t stats_len = 3 + at.history_len;

  const int32_t* ptr_base = indptr.typed_data();
  const int32_t* idx_base = indices.typed_data();
  const T* data_base = data.typed_data<T>();
  const T* b_base = b.typed_data<T>();
  const T* x0_base = x0.typed_data<T>();
  T* x_base = x.typed_data<T>();
  T* stats_base = stats.typed_data<T>();

  SolverCache& cache = SolverCache::instance();
  // One matrix for every lane: the lanes are solved together on its setup.
  SharedMatrixLanes<T> together(
      lanes > 1 && shared_structure && product(data_shape) == 1, lanes, n, at.use_x0,
      at.transpose, [&](int64_t l) { return b_base + broadcast_lane(l, out_shape, b_shape) * n; },
      [&](int64_t l) { return x0_base + broadcast_lane(l, out_shape, x0_shape) * n; });
  for (int64_t lane = 0; lane < lanes; ++lane) {
    const int32_t* ptr = ptr_base + broadcast_lane(lane, out_shape, ptr_shape) * n_ptr;
    const int32_t* idx = idx_base + broadcast_lane(lane, out_shape, idx_shape) * nnz;
    const T* vals = data_base + broadcast_lane(lane, out_shape, data_shape) * nnz;
    const T* rhs = b_base + broadcast_lane(lane, out_shape, b_shape) * n;
    const T* guess = x0_base + broadcast_lane(lane, out_shape, x0_shape) * n;
    T* sol = x_base + lane * n;
    T* st = stats_base + lane * stats_len;

    if (!all_finite(vals, nnz) || !all_finite(rhs, n) || (at.use_x0 && !all_finite(guess, n))) {
      // Inside a compiled program a bad value cannot raise: report FAILED
      // with a NaN solution (direct calls are checked in Python first).
      std::fill(sol, sol + n, std::numeric_limits<T>::quiet_NaN());
      std::fill(st, st + stats_len, std::numeric_limits<T>::quiet_NaN());
      st[0] = T(0);
      st[2] = static_cast<T>(static_cast<int>(Status::kFailed));
      continue;
    }
    CacheKey key;
    key.config = std::string(at.config);
    key.is_double = std::is_same<T, double>::value;
    key.block_dim = at.block_dim;
    key.n_rows = n;
    key.nnz = nnz;
    key.near_nullspace_cols = at.near_nullspace_cols;
    key.near_nullspace_hi = at.near_nullspace_hi;
    key.near_nullspace_lo = at.near_nullspace_lo;
    if (shared_structure && (at.structure_hi | at.structure_lo) != 0) {
      key.structure_hi = at.structure_hi;
      key.structure_lo = at.structure_lo;
    } else {
      // The structure was traced in Python (or differs per lane): fingerprint it here.
      ffi_cache::fingerprint(n, ptr, idx, nnz, &key.structure_hi, &key.structure_lo);
    }
    auto entry = cache.acquire(key);
    std::lock_guard<std::mutex> guard(entry->mutex);
    auto& solver = solver_slot<T>(*entry);
    const std::size_t value_bytes = static_cast<std::size_t>(nnz) * sizeof(T);
    if (!solver) {
      auto fresh = std::make_unique<LinearSolver<T>>(std::string(at.config));
      fresh->setup(static_cast<Index>(n), ptr, idx, vals, static_cast<Index>(nnz),
                   static_cast<Index>(at.block_dim), static_cast<const T*>(at.near_nullspace),
                   static_cast<Index>(at.near_nullspace_cols));
      solver = std::move(fresh);
      entry->values.assign(reinterpret_cast<const unsigned char*>(vals),
                           reinterpret_cast<const unsigned char*>(vals) + value_bytes);
      ++entry->setups;
      cache.count_setup();
    } else if (std::memcmp(entry->values.data(), vals, value_bytes) != 0) {
      try {
        if (at.reuse_setup) {
          solver->replace_values(vals, static_cast<Index>(nnz));
        } else {
          solver->resetup(vals, static_cast<Index>(nnz));
        }
      } catch (...) {
        solver.reset();  // a half-updated solver must not serve later calls
        throw;
      }
      std::memcpy(entry->values.data(), vals, value_bytes);
      ++entry->resetups;
    } else {
      ++entry->reuses;
    }
    if (at.transpose) entry->transposed_used = true;
    if (at.use_x0) {
      std::memcpy(sol, guess, static_cast<std::size_t>(n) * sizeof(T));
    }
    const SolveResult r =
        together.enabled()
            ? together.solve(*solver, lane, sol)
            : solver->solve(rhs, sol, static_cast<Index>(n), at.use_x0, at.transpose);
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

ffi::Error solve_with(const Attrs& at, ffi::Buffer<ffi::S32> indptr,
                      ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                      ffi::AnyBuffer x0, ffi::Result<ffi::AnyBuffer> x,
                      ffi::Result<ffi::AnyBuffer> stats) {
  try {
    const auto type = data.element_type();
    if (b.element_type() != type || x0.element_type() != type || x->element_type() != type) {
      return ffi::Error::InvalidArgument(
          "jaxamg_solve: A values, b and x0 must share one dtype (float32 or float64)");
    }
    if (type == ffi::F64) {
      solve_typed<double>(at, indptr, indices, data, b, x0, *x, *stats);
    } else if (type == ffi::F32) {
      solve_typed<float>(at, indptr, indices, data, b, x0, *x, *stats);
    } else {
      return ffi::Error::InvalidArgument("jaxamg_solve: unsupported dtype; use float32 or float64");
    }
    return ffi::Error::Success();
  } catch (const InvalidInput& e) {
    return ffi::Error::InvalidArgument(e.what());
  } catch (const ConfigError& e) {
    return ffi::Error::InvalidArgument(std::string("config: ") + e.what());
  } catch (const NotSupported& e) {
    return ffi::Error(ffi::ErrorCode::kUnimplemented, e.what());
  } catch (const std::exception& e) {
    return ffi::Error::Internal(e.what());
  } catch (...) {
    return ffi::Error::Internal("jaxamg_solve: unknown C++ exception");
  }
}

ffi::Error SolveImpl(std::string_view config, int64_t structure_hi, int64_t structure_lo,
                     bool transpose, bool use_x0, bool reuse_setup, int64_t block_dim,
                     int64_t history_len, ffi::Buffer<ffi::S32> indptr,
                     ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                     ffi::AnyBuffer x0, ffi::Result<ffi::AnyBuffer> x,
                     ffi::Result<ffi::AnyBuffer> stats) {
  const Attrs at{config,      static_cast<uint64_t>(structure_hi),
                 static_cast<uint64_t>(structure_lo), transpose, use_x0, reuse_setup,
                 block_dim,   history_len};
  return solve_with(at, indptr, indices, data, b, x0, x, stats);
}

// jaxamg_solve_nns: jaxamg_solve with one more operand, the near-null-space
// vectors ([.., n, m], one set shared by every lane), for smoothed
// aggregation. Their fingerprint joins the cache key, so different vectors
// never share a setup.
ffi::Error SolveNnsImpl(std::string_view config, int64_t structure_hi, int64_t structure_lo,
                        bool transpose, bool use_x0, bool reuse_setup, int64_t block_dim,
                        int64_t history_len, ffi::Buffer<ffi::S32> indptr,
                        ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                        ffi::AnyBuffer x0, ffi::AnyBuffer near_nullspace,
                        ffi::Result<ffi::AnyBuffer> x, ffi::Result<ffi::AnyBuffer> stats) {
  Attrs at{config,      static_cast<uint64_t>(structure_hi),
           static_cast<uint64_t>(structure_lo), transpose, use_x0, reuse_setup,
           block_dim,   history_len};
  const auto dims = near_nullspace.dimensions();
  const int64_t n = indptr.dimensions().back() - 1;
  int64_t lanes = 1;
  for (std::size_t d = 0; d + 2 < dims.size(); ++d) lanes *= dims[d];
  if (dims.size() < 2 || dims[dims.size() - 2] != n || lanes != 1) {
    return ffi::Error::InvalidArgument(
        "near_nullspace: expected one (n, m) array with n = " + std::to_string(n) +
        " rows shared by every batch lane; pass the same vectors for all right-hand sides");
  }
  if (near_nullspace.element_type() != data.element_type()) {
    return ffi::Error::InvalidArgument(
        "near_nullspace: its dtype differs from A's values; pass it in A's dtype");
  }
  at.near_nullspace_cols = dims.back();
  if (at.near_nullspace_cols > 0) {
    at.near_nullspace = near_nullspace.untyped_data();
    ffi_cache::fingerprint_bytes(near_nullspace.untyped_data(), near_nullspace.size_bytes(),
                                 &at.near_nullspace_hi, &at.near_nullspace_lo);
  }
  return solve_with(at, indptr, indices, data, b, x0, x, stats);
}

}  // namespace

}  // namespace jaxamg::ffi_handlers

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgSolveCpu, jaxamg::ffi_handlers::SolveImpl,
                              ffi::Ffi::Bind()
                                  .Attr<std::string_view>("config")
                                  .Attr<int64_t>("structure_hi")
                                  .Attr<int64_t>("structure_lo")
                                  .Attr<bool>("transpose")
                                  .Attr<bool>("use_x0")
                                  .Attr<bool>("reuse_setup")
                                  .Attr<int64_t>("block_dim")
                                  .Attr<int64_t>("history_len")
                                  .Arg<ffi::Buffer<ffi::S32>>()  // indptr
                                  .Arg<ffi::Buffer<ffi::S32>>()  // indices
                                  .Arg<ffi::AnyBuffer>()         // data
                                  .Arg<ffi::AnyBuffer>()         // b
                                  .Arg<ffi::AnyBuffer>()         // x0
                                  .Ret<ffi::AnyBuffer>()         // x
                                  .Ret<ffi::AnyBuffer>());       // stats

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgSolveNnsCpu, jaxamg::ffi_handlers::SolveNnsImpl,
                              ffi::Ffi::Bind()
                                  .Attr<std::string_view>("config")
                                  .Attr<int64_t>("structure_hi")
                                  .Attr<int64_t>("structure_lo")
                                  .Attr<bool>("transpose")
                                  .Attr<bool>("use_x0")
                                  .Attr<bool>("reuse_setup")
                                  .Attr<int64_t>("block_dim")
                                  .Attr<int64_t>("history_len")
                                  .Arg<ffi::Buffer<ffi::S32>>()  // indptr
                                  .Arg<ffi::Buffer<ffi::S32>>()  // indices
                                  .Arg<ffi::AnyBuffer>()         // data
                                  .Arg<ffi::AnyBuffer>()         // b
                                  .Arg<ffi::AnyBuffer>()         // x0
                                  .Arg<ffi::AnyBuffer>()         // near_nullspace
                                  .Ret<ffi::AnyBuffer>()         // x
                                  .Ret<ffi::AnyBuffer>());       // stats
