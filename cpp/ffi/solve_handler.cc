// The XLA FFI handler `jaxamg_solve` for the CPU platform: x = A^-1 b (or
// A^-T b) with A in CSR form, through the solver cache.
//
// Operands: indptr (S32[.., n+1]), indices (S32[.., nnz]), data (F32/F64
// [.., nnz]), b and x0 ([.., n], the dtype of data). Results: x ([.., n]) and
// stats ([.., 4 + history_len]: iterations, final residual, status, place
// (handler_common.h: 0, the host engine, on this platform), then the
// residual history padded with NaN). Leading dimensions are batch dimensions
// added by jax.vmap (vmap_method="expand_dims"): each is either 1 (shared by
// every lane) or the batch size, so a batch of right-hand sides with one
// matrix uses a single setup.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "handler_common.h"
#include "engine_thread.h"
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
std::unique_ptr<LinearSolver<T>>& solver_slot(Entry& e);
template <>
std::unique_ptr<LinearSolver<float>>& solver_slot<float>(Entry& e) { return e.f32; }
template <>
std::unique_ptr<LinearSolver<double>>& solver_slot<double>(Entry& e) { return e.f64; }

// jaxamg_solve_nns: the near-null-space vectors (n x cols, row-major, the
// dtype of the values) and their fingerprint; none for jaxamg_solve.
struct NearNullspace {
  const void* data = nullptr;
  int64_t cols = 0;
  uint64_t hi = 0, lo = 0;
};

template <class T>
void solve_typed(const SolveAttrs& at, const NearNullspace& nns, ffi::Buffer<ffi::S32> indptr,
                 ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                 ffi::AnyBuffer x0, ffi::AnyBuffer x, ffi::AnyBuffer stats) {
  const CallLayout L(indptr, indices, data, b, x0, x, at.history_len);
  L.check_sizes(b.dimensions().back(), data.dimensions().back(), stats.dimensions().back(),
                "A");
  const int64_t n = L.n, nnz = L.nnz;
  const T* b_base = b.typed_data<T>();
  const T* x0_base = x0.typed_data<T>();
  T* x_base = x.typed_data<T>();

  SolverCache& cache = SolverCache::instance();
  // One matrix for every lane: the lanes are solved together on its setup.
  SharedMatrixLanes<T> together(
      L.lanes > 1 && L.shared_structure && product(L.data) == 1, L.lanes, n, at.use_x0,
      at.transpose, [&](int64_t l) { return b_base + broadcast_lane(l, L.out, L.b) * n; },
      [&](int64_t l) { return x0_base + broadcast_lane(l, L.out, L.x0) * n; }, x_base);
  for (int64_t lane = 0; lane < L.lanes; ++lane) {
    const Lane<T> in = lane_of<T>(L, lane, indptr.typed_data(), indices.typed_data(),
                                  data.typed_data<T>(), b_base, x0_base, x_base,
                                  stats.typed_data<T>());
    if (together.solved(lane)) {
      // Solved in the batch of an earlier lane, on the same matrix: its
      // inputs were checked there and its solution is in place.
      fill_stats(in.stats, together.result(lane), at.history_len);
      continue;
    }
    if (!all_finite(in.vals, nnz) || !all_finite(in.rhs, n) ||
        (at.use_x0 && !all_finite(in.guess, n))) {
      std::fill(in.sol, in.sol + n, std::numeric_limits<T>::quiet_NaN());
      fill_stats(in.stats, failed_result(), at.history_len);
      continue;
    }
    CacheKey key;
    key.config = std::string(at.config);
    key.is_double = std::is_same<T, double>::value;
    key.block_dim = at.block_dim;
    key.n_rows = n;
    key.nnz = nnz;
    key.near_nullspace_cols = nns.cols;
    key.near_nullspace_hi = nns.hi;
    key.near_nullspace_lo = nns.lo;
    if (L.shared_structure && (at.structure_hi | at.structure_lo) != 0) {
      key.structure_hi = at.structure_hi;
      key.structure_lo = at.structure_lo;
    } else {
      // The structure was traced in Python (or differs per lane): fingerprint it here.
      ffi_cache::fingerprint(n, in.ptr, in.idx, nnz, &key.structure_hi, &key.structure_lo);
    }
    auto entry = cache.acquire(key);
    std::lock_guard<std::mutex> guard(entry->mutex);
    auto& solver = solver_slot<T>(*entry);
    const std::size_t value_bytes = static_cast<std::size_t>(nnz) * sizeof(T);
    const Refresh need = !solver ? Refresh::kSetup
                         : std::memcmp(entry->values.data(), in.vals, value_bytes) != 0
                             ? Refresh::kNewValues
                             : Refresh::kReuse;
    refresh(need, solver, in.vals, nnz, at.reuse_setup, [&] {
      auto fresh = std::make_unique<LinearSolver<T>>(std::string(at.config));
      fresh->setup(static_cast<Index>(n), in.ptr, in.idx, in.vals, static_cast<Index>(nnz),
                   static_cast<Index>(at.block_dim), static_cast<const T*>(nns.data),
                   static_cast<Index>(nns.cols));
      return fresh;
    });
    if (need != Refresh::kReuse) {
      entry->values.assign(reinterpret_cast<const unsigned char*>(in.vals),
                           reinterpret_cast<const unsigned char*>(in.vals) + value_bytes);
    }
    if (need == Refresh::kSetup) {
      ++entry->setups;
      cache.count_setup();
    } else if (need == Refresh::kNewValues) {
      ++entry->resetups;
    } else {
      ++entry->reuses;
      solver->print_setup_stats();  // the statistics file has them every call
    }
    if (at.transpose) entry->transposed_used = true;
    if (at.use_x0) std::memcpy(in.sol, in.guess, static_cast<std::size_t>(n) * sizeof(T));
    const SolveResult r =
        together.enabled()
            ? together.solve(*solver, lane)
            : solver->solve(in.rhs, in.sol, static_cast<Index>(n), at.use_x0, at.transpose);
    const std::string log = solver->take_log();
    if (!log.empty()) ffi_cache::append_stats_text(log);
    fill_stats(in.stats, r, at.history_len);
  }
}

ffi::Error solve_with(const SolveAttrs& at, const NearNullspace& nns,
                      ffi::Buffer<ffi::S32> indptr, ffi::Buffer<ffi::S32> indices,
                      ffi::AnyBuffer data, ffi::AnyBuffer b, ffi::AnyBuffer x0,
                      ffi::Result<ffi::AnyBuffer> x, ffi::Result<ffi::AnyBuffer> stats) {
  ffi::Error result = ffi::Error::Success();
  EngineThread::run([&] {
    result = guarded("jaxamg_solve", [&] {
      with_value_type("jaxamg_solve", data.element_type(), b.element_type(), x0.element_type(),
                      x->element_type(), [&](auto tag) {
                        using T = decltype(tag);
                        solve_typed<T>(at, nns, indptr, indices, data, b, x0, *x, *stats);
                      });
    });
  });
  return result;
}

ffi::Error SolveImpl(std::string_view config, int64_t structure_hi, int64_t structure_lo,
                     bool transpose, bool use_x0, bool reuse_setup, int64_t block_dim,
                     int64_t history_len, ffi::Buffer<ffi::S32> indptr,
                     ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                     ffi::AnyBuffer x0, ffi::Result<ffi::AnyBuffer> x,
                     ffi::Result<ffi::AnyBuffer> stats) {
  const SolveAttrs at = make_attrs(config, structure_hi, structure_lo, transpose, use_x0,
                                   reuse_setup, block_dim, history_len);
  return solve_with(at, NearNullspace{}, indptr, indices, data, b, x0, x, stats);
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
  const SolveAttrs at = make_attrs(config, structure_hi, structure_lo, transpose, use_x0,
                                   reuse_setup, block_dim, history_len);
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
  NearNullspace nns;
  nns.cols = dims.back();
  if (nns.cols > 0) {
    nns.data = near_nullspace.untyped_data();
    ffi_cache::fingerprint_bytes(near_nullspace.untyped_data(), near_nullspace.size_bytes(),
                                 &nns.hi, &nns.lo);
  }
  return solve_with(at, nns, indptr, indices, data, b, x0, x, stats);
}

}  // namespace

}  // namespace jaxamg::ffi_handlers

namespace jaxamg_bind = jaxamg::ffi_handlers;

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgSolveCpu, jaxamg::ffi_handlers::SolveImpl,
                              jaxamg_bind::bind_system_args(
                                  jaxamg_bind::bind_solve_attrs(ffi::Ffi::Bind()))
                                  .Ret<ffi::AnyBuffer>()    // x
                                  .Ret<ffi::AnyBuffer>());  // stats

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgSolveNnsCpu, jaxamg::ffi_handlers::SolveNnsImpl,
                              jaxamg_bind::bind_system_args(
                                  jaxamg_bind::bind_solve_attrs(ffi::Ffi::Bind()))
                                  .Arg<ffi::AnyBuffer>()    // near_nullspace
                                  .Ret<ffi::AnyBuffer>()    // x
                                  .Ret<ffi::AnyBuffer>());  // stats
