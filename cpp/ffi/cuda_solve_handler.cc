// The XLA FFI handler `jaxamg_solve` for the CUDA platform: the same operands,
// attributes and results as the CPU handler (solve_handler.cc), with device
// buffers and XLA's stream.
//
// The setup runs on the host: on a cache miss the matrix is copied to the
// host once, set up by the engine, and its hierarchy uploaded
// (DeviceSolver). A cached call copies nothing: one kernel compares the
// values with a device copy of those of the setup (and checks them, b and x0
// for NaN/Inf), and the solve runs on the device. Changed values are copied
// to the host for a resetup (or replace_values) and the hierarchy is
// uploaded again. Configurations the device solve does not cover
// (DeviceSolver::unsupported) are solved on the host with copies of b, x0
// and x. When Python could not fingerprint the structure at trace time
// (indices traced under jax.jit) a kernel hashes it on the device.
#include <cuda_runtime_api.h>

#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/device_solver.h"
#include "backend/cuda/kernels.h"
#include "batch_lanes.h"
#include "core/error.h"
#include "cuda_solve_handler.h"
#include "solver_cache.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace jaxamg::ffi_handlers {

namespace {

using cuda::check;
using cuda::DeviceArray;
using cuda::DeviceSolver;
using ffi_cache::CacheKey;
using ffi_cache::Entry;
using ffi_cache::SolverCache;

std::mutex last_mutex;
CudaSolveInfo last_info;

// What a cache entry keeps on the device for value type T.
template <class T>
struct DeviceState {
  std::unique_ptr<LinearSolver<T>> host;        // the engine's solver (setup on the host)
  DeviceArray<T> values;                        // the values of that setup, caller's layout
  std::unique_ptr<DeviceSolver<T>> solver;      // nullptr: solved on the host
  std::unique_ptr<Solver<T>> host_transposed;   // the tree for A^T (built on first use)
  std::unique_ptr<DeviceSolver<T>> transposed;  // its device copy
  std::string host_reason;                      // why the solve runs on the host
  DeviceArray<int> flags{6};                    // the input check's results
};

// Two words per thread and device for structure_hash.
DeviceArray<unsigned long long>& hash_scratch() {
  thread_local std::map<int, DeviceArray<unsigned long long>> scratch;
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  DeviceArray<unsigned long long>& a = scratch[device];
  if (a.empty()) a.resize(2);
  return a;
}

template <class T>
std::vector<T> to_host(const T* d, std::size_t n, cudaStream_t s, const char* what) {
  std::vector<T> h(n);
  if (n > 0) check(cudaMemcpyAsync(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, s), what);
  check(cudaStreamSynchronize(s), what);
  return h;
}

template <class T>
void from_host(T* d, const T* h, std::size_t n, cudaStream_t s, const char* what) {
  if (n > 0) check(cudaMemcpyAsync(d, h, n * sizeof(T), cudaMemcpyHostToDevice, s), what);
  // The host buffer may go out of scope: finish the copy first.
  check(cudaStreamSynchronize(s), what);
}

// Builds (or rebuilds) the device copy of state.host's tree.
template <class T>
void upload(DeviceState<T>& st) {
  st.solver.reset();
  st.transposed.reset();
  st.host_transposed.reset();
  st.host_reason = DeviceSolver<T>::unsupported(st.host->solver());
  if (st.host_reason.empty()) st.solver = std::make_unique<DeviceSolver<T>>(st.host->solver());
}

template <class T>
DeviceSolver<T>& transposed_solver(DeviceState<T>& st) {
  if (!st.transposed) {
    const CsrMatrix<T>& A = st.host->matrix();
    auto At = std::make_shared<CsrMatrix<T>>(jaxamg::transpose(A));
    At->block_dim = A.block_dim;
    st.host_transposed = st.host->solver().make_transposed(At);
    st.transposed = std::make_unique<DeviceSolver<T>>(*st.host_transposed);
  }
  return *st.transposed;
}

struct Attrs {
  std::string_view config;
  uint64_t structure_hi, structure_lo;
  bool transpose, use_x0, reuse_setup;
  int64_t block_dim, history_len;
};

template <class T>
void write_stats(T* d_stats, const SolveResult& r, int64_t history_len, cudaStream_t s) {
  std::vector<T> st(3 + history_len, std::numeric_limits<T>::quiet_NaN());
  st[0] = static_cast<T>(r.iterations);
  st[1] = static_cast<T>(r.residual);
  st[2] = static_cast<T>(static_cast<int>(r.status));
  for (int64_t h = 0; h < history_len && h < static_cast<int64_t>(r.history.size()); ++h) {
    st[3 + h] = static_cast<T>(r.history[h]);
  }
  from_host(d_stats, st.data(), st.size(), s, "cudaMemcpyAsync (stats)");
}

template <class T>
void solve_typed(cudaStream_t stream, int device, const Attrs& at, ffi::Buffer<ffi::S32> indptr,
                 ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                 ffi::AnyBuffer x0, ffi::AnyBuffer x, ffi::AnyBuffer stats) {
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

  SolverCache& cache = SolverCache::instance();
  for (int64_t lane = 0; lane < lanes; ++lane) {
    const int32_t* ptr = indptr.typed_data() + broadcast_lane(lane, out_shape, ptr_shape) * n_ptr;
    const int32_t* idx = indices.typed_data() + broadcast_lane(lane, out_shape, idx_shape) * nnz;
    const T* vals = data.typed_data<T>() + broadcast_lane(lane, out_shape, data_shape) * nnz;
    const T* rhs = b.typed_data<T>() + broadcast_lane(lane, out_shape, b_shape) * n;
    const T* guess = x0.typed_data<T>() + broadcast_lane(lane, out_shape, x0_shape) * n;
    T* sol = x.typed_data<T>() + lane * n;
    T* st = stats.typed_data<T>() + lane * stats_len;

    CacheKey key;
    key.config = std::string(at.config);
    key.is_double = std::is_same<T, double>::value;
    key.block_dim = at.block_dim;
    key.n_rows = n;
    key.nnz = nnz;
    key.device = device;
    if (shared_structure && (at.structure_hi | at.structure_lo) != 0) {
      key.structure_hi = at.structure_hi;
      key.structure_lo = at.structure_lo;
    } else {
      // The structure was traced in Python (or differs per lane): hash it on
      // the device (the key then differs from a Python fingerprint of the
      // same structure, which costs at most one extra setup).
      DeviceArray<unsigned long long>& hash = hash_scratch();
      cuda::structure_hash(static_cast<Index>(n), ptr, nnz, idx, hash.data(), stream);
      unsigned long long hh[2];
      check(cudaMemcpyAsync(hh, hash.data(), sizeof hh, cudaMemcpyDeviceToHost, stream),
            "cudaMemcpyAsync (structure hash)");
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (structure hash)");
      key.structure_hi = hh[0];
      key.structure_lo = hh[1] | 1;  // never (0, 0), the "unknown" fingerprint
    }
    auto entry = cache.acquire(key);
    std::lock_guard<std::mutex> guard(entry->mutex);
    auto state = std::static_pointer_cast<DeviceState<T>>(entry->device_state);
    if (!state) {
      state = std::make_shared<DeviceState<T>>();
      entry->device_state = state;
    }
    DeviceArray<int>& flags = state->flags;

    // One pass over values, b and x0: NaN/Inf anywhere, values changed.
    check(cudaMemsetAsync(flags.data(), 0, 6 * sizeof(int), stream), "cudaMemsetAsync (flags)");
    const T* previous = state->host ? state->values.data() : nullptr;
    cuda::inspect<T>(nnz, vals, previous, flags.data(), stream);
    cuda::inspect<T>(n, rhs, nullptr, flags.data() + 2, stream);
    if (at.use_x0) cuda::inspect<T>(n, guess, nullptr, flags.data() + 4, stream);
    int h[6];
    check(cudaMemcpyAsync(h, flags.data(), sizeof h, cudaMemcpyDeviceToHost, stream),
          "cudaMemcpyAsync (flags)");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (input check)");
    if (h[0] || h[2] || h[4]) {
      // Inside a compiled program a bad value cannot raise: FAILED with a
      // NaN solution, as on the CPU.
      cuda::fill<T>(n, std::numeric_limits<T>::quiet_NaN(), sol, stream);
      SolveResult failed;
      failed.status = Status::kFailed;
      failed.residual = std::numeric_limits<double>::quiet_NaN();
      write_stats(st, failed, at.history_len, stream);
      continue;
    }

    if (!state->host) {
      const auto hp = to_host(ptr, n_ptr, stream, "cudaMemcpyAsync (indptr)");
      const auto hi = to_host(idx, nnz, stream, "cudaMemcpyAsync (indices)");
      const auto hv = to_host(vals, nnz, stream, "cudaMemcpyAsync (values)");
      auto fresh = std::make_unique<LinearSolver<T>>(std::string(at.config));
      fresh->setup(static_cast<Index>(n), hp.data(), hi.data(), hv.data(), static_cast<Index>(nnz),
                   static_cast<Index>(at.block_dim));
      try {
        state->host = std::move(fresh);
        state->values.resize(nnz);
        check(cudaMemcpyAsync(state->values.data(), vals, nnz * sizeof(T),
                              cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (values copy)");
        upload(*state);
      } catch (...) {
        // Out of device memory, say: release everything, set up anew next time
        // (never fall back silently to a host solve for a supported config).
        entry->device_state.reset();
        throw;
      }
      ++entry->setups;
      cache.count_setup();
    } else if (h[1]) {
      const auto hv = to_host(vals, nnz, stream, "cudaMemcpyAsync (values)");
      try {
        if (at.reuse_setup) {
          state->host->replace_values(hv.data(), static_cast<Index>(nnz));
        } else {
          state->host->resetup(hv.data(), static_cast<Index>(nnz));
        }
        check(cudaMemcpyAsync(state->values.data(), vals, nnz * sizeof(T),
                              cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (values copy)");
        upload(*state);
      } catch (...) {
        entry->device_state.reset();  // a half-updated solver must not serve later calls
        throw;
      }
      ++entry->resetups;
    } else {
      ++entry->reuses;
    }
    if (at.transpose) entry->transposed_used = true;

    SolveResult r;
    bool on_device = false;
    double bytes = 0;
    if (state->solver) {
      if (at.use_x0) {
        check(cudaMemcpyAsync(sol, guess, n * sizeof(T), cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (x0)");
      }
      DeviceSolver<T>& ds = at.transpose ? transposed_solver(*state) : *state->solver;
      r = ds.solve(rhs, sol, at.use_x0, stream);
      bytes = ds.last_solve_bytes();
      on_device = true;
    } else {
      std::vector<T> hx = at.use_x0 ? to_host(guess, n, stream, "cudaMemcpyAsync (x0)")
                                    : std::vector<T>(n);
      const auto hb = to_host(rhs, n, stream, "cudaMemcpyAsync (b)");
      r = state->host->solve(hb.data(), hx.data(), static_cast<Index>(n), at.use_x0,
                             at.transpose);
      const std::string log = state->host->take_log();
      if (!log.empty()) ffi_cache::append_stats_text(log);
      from_host(sol, hx.data(), n, stream, "cudaMemcpyAsync (x)");
    }
    write_stats(st, r, at.history_len, stream);
    CudaSolveInfo info{on_device, state->host_reason, r.iterations, bytes, {}};
    for (const LevelInfo& l : state->host->hierarchy()) info.levels.emplace_back(l.rows, l.nnz);
    std::lock_guard<std::mutex> g(last_mutex);
    last_info = std::move(info);
  }
}

ffi::Error SolveImpl(cudaStream_t stream, int32_t device, std::string_view config,
                     int64_t structure_hi, int64_t structure_lo, bool transpose, bool use_x0,
                     bool reuse_setup, int64_t block_dim, int64_t history_len,
                     ffi::Buffer<ffi::S32> indptr, ffi::Buffer<ffi::S32> indices,
                     ffi::AnyBuffer data, ffi::AnyBuffer b, ffi::AnyBuffer x0,
                     ffi::Result<ffi::AnyBuffer> x, ffi::Result<ffi::AnyBuffer> stats) {
  try {
    check(cudaSetDevice(device), "cudaSetDevice");
    const Attrs at{config,      static_cast<uint64_t>(structure_hi),
                   static_cast<uint64_t>(structure_lo), transpose, use_x0, reuse_setup,
                   block_dim,   history_len};
    const auto type = data.element_type();
    if (b.element_type() != type || x0.element_type() != type || x->element_type() != type) {
      return ffi::Error::InvalidArgument(
          "jaxamg_solve: A values, b and x0 must share one dtype (float32 or float64)");
    }
    if (type == ffi::F64) {
      solve_typed<double>(stream, device, at, indptr, indices, data, b, x0, *x, *stats);
    } else if (type == ffi::F32) {
      solve_typed<float>(stream, device, at, indptr, indices, data, b, x0, *x, *stats);
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
    return ffi::Error::Internal("jaxamg_solve (CUDA): unknown C++ exception");
  }
}

}  // namespace

CudaSolveInfo last_cuda_solve() {
  std::lock_guard<std::mutex> g(last_mutex);
  return last_info;
}

}  // namespace jaxamg::ffi_handlers

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgSolveCuda, jaxamg::ffi_handlers::SolveImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Ctx<ffi::DeviceOrdinal>()
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
