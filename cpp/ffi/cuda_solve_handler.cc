// The XLA FFI handler `jaxamg_solve` for the CUDA platform: the same operands,
// attributes and results as the CPU handler (solve_handler.cc), with device
// buffers and XLA's stream.
//
// An AGGREGATION AMG (the solver, or the preconditioner of PCG, PCGF,
// PBICGSTAB, GMRES, FGMRES) on a scalar matrix with a canonical pattern is set up on the
// device (DeviceSetupSolver): no host copy of the matrix, no CPU setup;
// changed values run a device resetup. Everything else, and every setup
// when JAXAMG_GPU_SETUP=host, is set up on the host: on a cache miss the
// matrix is copied to the host once, set up by the engine, and its
// hierarchy uploaded (DeviceSolver); changed values are copied to the host
// for a resetup (or replace_values) and the hierarchy is uploaded again.
// A cached call copies nothing: one kernel compares the values with a
// device copy of those of the setup (and checks them, b and x0 for
// NaN/Inf), and the solve runs on the device. Configurations the device
// solve does not cover (DeviceSolver::unsupported) are solved on the host
// with copies of b, x0 and x. When Python could not fingerprint the
// structure at trace time (indices traced under jax.jit) a kernel hashes it
// on the device.
//
// A transposed (adjoint) solve of a device-set-up entry runs on the
// hierarchy of A^T, built on the device from the forward one on first use
// (the host path's make_transposed, on the host's tree).
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/setup/canonical_pattern.h"
#include "cuda_solve_handler.h"
#include "device/device_setup_solver.h"
#include "device/device_solver.h"
#include "handler_common.h"
#include "solver_cache.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace jaxamg::ffi_handlers {

namespace {

using cuda::check;
using cuda::DeviceArray;
using cuda::DeviceSetupSolver;
using cuda::DeviceSolver;
using ffi_cache::CacheKey;
using ffi_cache::Entry;
using ffi_cache::SolverCache;

std::mutex last_mutex;
CudaSolveInfo last_info;

// What a cache entry keeps on the device for value type T.
template <class T>
struct DeviceState {
  std::unique_ptr<DeviceSetupSolver<T>> device;  // hierarchy built on the device, or nullptr
  bool device_allowed = true;                    // JAXAMG_GPU_SETUP at the last setup
  std::string setup_reason;                      // why the setup ran on the host
  std::unique_ptr<LinearSolver<T>> host;        // the engine's solver (setup on the host)
  DeviceArray<T> values;                        // the values of that setup, caller's layout
  std::unique_ptr<DeviceSolver<T>> solver;      // nullptr: solved on the host
  std::unique_ptr<Solver<T>> host_transposed;   // the tree for A^T (built on first use)
  std::unique_ptr<DeviceSolver<T>> transposed;  // its device copy
  std::string host_reason;                      // why the solve runs on the host
  DeviceArray<int> flags{6};                    // the input check's results
  bool ready() const { return device || host; }
};

// JAXAMG_GPU_SETUP: "device" (or unset) builds AGGREGATION hierarchies on
// the GPU where covered; "host" always sets up on the host (comparisons, and
// a fallback).
bool device_setup_allowed() {
  const char* v = std::getenv("JAXAMG_GPU_SETUP");
  const std::string_view s = v ? v : "";
  if (s.empty() || s == "device") return true;
  if (s == "host") return false;
  throw InvalidInput("JAXAMG_GPU_SETUP = '" + std::string(s) +
                     "' is not a setup place; set it to 'device' (the default: AGGREGATION AMG "
                     "hierarchies are built on the GPU) or 'host' (always the CPU setup)");
}

// Empty if the hierarchy of this call is built on the device (then `dev`
// holds the solver to set up); otherwise why not.
template <class T>
std::string device_setup_reason(const SolveAttrs& at, bool allowed, Index n, const int32_t* ptr,
                                int64_t nnz, const int32_t* idx, cudaStream_t stream,
                                std::unique_ptr<DeviceSetupSolver<T>>& dev) {
  if (!allowed) return "JAXAMG_GPU_SETUP=host";
  if (at.block_dim != 1) return "block_dim " + std::to_string(at.block_dim);
  auto s = std::make_unique<DeviceSetupSolver<T>>(std::string(at.config));
  if (!s->unsupported().empty()) return s->unsupported();
  if (!cuda::device_pattern_is_canonical(n, n, ptr, static_cast<Index>(nnz), idx, stream)) {
    return "a pattern with unsorted or repeated column indices (or invalid offsets)";
  }
  dev = std::move(s);
  return "";
}

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

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

template <class T>
void write_stats(T* d_stats, const SolveResult& r, int64_t history_len, int place,
                 cudaStream_t s) {
  std::vector<T> st(kStatsHead + history_len);
  fill_stats(st.data(), r, history_len, place);
  from_host(d_stats, st.data(), st.size(), s, "cudaMemcpyAsync (stats)");
}

template <class T>
void solve_typed(cudaStream_t stream, int device, const SolveAttrs& at,
                 ffi::Buffer<ffi::S32> indptr, ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer data,
                 ffi::AnyBuffer b, ffi::AnyBuffer x0, ffi::AnyBuffer x, ffi::AnyBuffer stats) {
  const CallLayout L(indptr, indices, data, b, x0, x, at.history_len);
  L.check_sizes(b.dimensions().back(), data.dimensions().back(), stats.dimensions().back(),
                "A");
  const int64_t n = L.n, n_ptr = L.n_ptr, nnz = L.nnz;

  SolverCache& cache = SolverCache::instance();
  for (int64_t lane = 0; lane < L.lanes; ++lane) {
    const auto lane_start = std::chrono::steady_clock::now();
    const Lane<T> in = lane_of<T>(L, lane, indptr.typed_data(), indices.typed_data(),
                                  data.typed_data<T>(), b.typed_data<T>(), x0.typed_data<T>(),
                                  x.typed_data<T>(), stats.typed_data<T>());
    const int32_t* ptr = in.ptr;
    const int32_t* idx = in.idx;
    const T* vals = in.vals;
    const T* rhs = in.rhs;
    const T* guess = in.guess;
    T* sol = in.sol;
    T* st = in.stats;

    CacheKey key;
    key.config = std::string(at.config);
    key.is_double = std::is_same<T, double>::value;
    key.block_dim = at.block_dim;
    key.n_rows = n;
    key.nnz = nnz;
    key.device = device;
    if (L.shared_structure && (at.structure_hi | at.structure_lo) != 0) {
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
    const T* previous = state->ready() ? state->values.data() : nullptr;
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
      // The check and the NaN solution ran on the device.
      write_stats(st, failed_result(), at.history_len, kSolveOnDevice, stream);
      continue;
    }

    const bool allowed = device_setup_allowed();
    // A changed JAXAMG_GPU_SETUP sets up anew where the entry was built.
    const Refresh need = !state->ready() || state->device_allowed != allowed ? Refresh::kSetup
                         : h[1]                                               ? Refresh::kNewValues
                                                                              : Refresh::kReuse;
    const auto refresh_start = std::chrono::steady_clock::now();
    if (need != Refresh::kReuse) {
      try {
        const cuda::DeviceCsrView<T> view{static_cast<Index>(n), static_cast<Index>(nnz), ptr,
                                          idx, vals};
        if (need == Refresh::kSetup) {
          state->device.reset();
          state->host.reset();
          state->solver.reset();
          state->transposed.reset();
          state->host_transposed.reset();
          state->host_reason.clear();
          state->device_allowed = allowed;
          std::unique_ptr<DeviceSetupSolver<T>> dev;
          state->setup_reason = device_setup_reason<T>(at, allowed, static_cast<Index>(n), ptr,
                                                       nnz, idx, stream, dev);
          if (dev) {
            dev->setup(view);
            state->device = std::move(dev);
          }
        } else if (state->device) {
          if (at.reuse_setup) {
            state->device->replace_values(vals, stream);
          } else {
            state->device->resetup(view);
          }
        }
        if (!state->device) {
          // The setup runs on the host: bring the values (and on a first
          // setup the structure) over once.
          const auto hv = to_host(vals, nnz, stream, "cudaMemcpyAsync (values)");
          refresh(need, state->host, hv.data(), nnz, at.reuse_setup, [&] {
            const auto hp = to_host(ptr, n_ptr, stream, "cudaMemcpyAsync (indptr)");
            const auto hi = to_host(idx, nnz, stream, "cudaMemcpyAsync (indices)");
            auto fresh = std::make_unique<LinearSolver<T>>(std::string(at.config));
            fresh->setup(static_cast<Index>(n), hp.data(), hi.data(), hv.data(),
                         static_cast<Index>(nnz), static_cast<Index>(at.block_dim));
            return fresh;
          });
          upload(*state);
        }
        state->values.resize(nnz);
        check(cudaMemcpyAsync(state->values.data(), vals, nnz * sizeof(T),
                              cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (values copy)");
      } catch (...) {
        // A failed setup, or out of device memory: release everything and
        // set up anew next time (never fall back silently to a host solve
        // for a supported config, never serve a half-updated solver).
        entry->device_state.reset();
        throw;
      }
    }
    double refresh_ms = 0;
    if (need != Refresh::kReuse) {
      // Only for the report: a refresh ends with the stream's work done.
      check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after the setup)");
      refresh_ms = milliseconds_since(refresh_start);
    }
    if (need == Refresh::kSetup) {
      ++entry->setups;
      cache.count_setup();
    } else if (need == Refresh::kNewValues) {
      ++entry->resetups;
    } else {
      ++entry->reuses;
      // The statistics file has the grid table every call, as after a setup.
      if (state->device) {
        state->device->print_setup_stats();
      } else {
        state->host->print_setup_stats();
      }
    }
    if (at.transpose) entry->transposed_used = true;

    const auto solve_start = std::chrono::steady_clock::now();
    SolveResult r;
    bool on_device = false;
    double bytes = 0;
    if (state->device) {
      if (at.use_x0) {
        check(cudaMemcpyAsync(sol, guess, n * sizeof(T), cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (x0)");
      }
      const cuda::DeviceCsrView<T> view{static_cast<Index>(n), static_cast<Index>(nnz), ptr, idx,
                                        vals};
      r = at.transpose ? state->device->solve_transposed(view, rhs, sol, at.use_x0, stream)
                       : state->device->solve(rhs, sol, at.use_x0, stream);
      bytes = state->device->last_solve_bytes();
      on_device = true;
      const std::string log = state->device->take_log();
      if (!log.empty()) ffi_cache::append_stats_text(log);
    } else if (state->solver) {
      if (at.use_x0) {
        check(cudaMemcpyAsync(sol, guess, n * sizeof(T), cudaMemcpyDeviceToDevice, stream),
              "cudaMemcpyAsync (x0)");
      }
      DeviceSolver<T>& ds = at.transpose ? transposed_solver(*state) : *state->solver;
      r = ds.solve(rhs, sol, at.use_x0, stream);
      bytes = ds.last_solve_bytes();
      on_device = true;
      // The device solve writes its statistics into the host tree's log.
      const std::string log = state->host->take_log();
      if (!log.empty()) ffi_cache::append_stats_text(log);
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
    const double solve_ms = milliseconds_since(solve_start);  // the solves return synchronised
    const int place =
        (on_device ? kSolveOnDevice : kOnHost) | (state->device ? kSetupOnDevice : kOnHost);
    write_stats(st, r, at.history_len, place, stream);
    CudaSolveInfo info;
    info.refresh = need == Refresh::kSetup       ? "setup"
                   : need == Refresh::kNewValues ? "resetup"
                                                 : "reuse";
    info.refresh_ms = refresh_ms;
    info.solve_ms = solve_ms;
    info.lane_ms = milliseconds_since(lane_start);  // without the last_info bookkeeping
    info.on_device = on_device;
    info.host_reason = state->host_reason;
    info.setup_on_device = state->device != nullptr;
    info.setup_reason = state->setup_reason;
    info.iterations = r.iterations;
    info.bytes = bytes;
    const std::vector<LevelInfo> levels =
        state->device ? state->device->hierarchy() : state->host->hierarchy();
    for (const LevelInfo& l : levels) info.levels.emplace_back(l.rows, l.nnz);
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
  return guarded("jaxamg_solve (CUDA)", [&] {
    check(cudaSetDevice(device), "cudaSetDevice");
    const SolveAttrs at = make_attrs(config, structure_hi, structure_lo, transpose, use_x0,
                                     reuse_setup, block_dim, history_len);
    with_value_type("jaxamg_solve", data.element_type(), b.element_type(), x0.element_type(),
                    x->element_type(), [&](auto tag) {
                      using T = decltype(tag);
                      solve_typed<T>(stream, device, at, indptr, indices, data, b, x0, *x,
                                     *stats);
                    });
  });
}

}  // namespace

CudaSolveInfo last_cuda_solve() {
  std::lock_guard<std::mutex> g(last_mutex);
  return last_info;
}

}  // namespace jaxamg::ffi_handlers

namespace jaxamg_bind = jaxamg::ffi_handlers;

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgSolveCuda, jaxamg::ffi_handlers::SolveImpl,
                              jaxamg_bind::bind_system_args(jaxamg_bind::bind_solve_attrs(
                                  ffi::Ffi::Bind()
                                      .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                      .Ctx<ffi::DeviceOrdinal>()))
                                  .Ret<ffi::AnyBuffer>()    // x
                                  .Ret<ffi::AnyBuffer>());  // stats
