#include "device_lanes.h"

#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "../solver_cache.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/device_array.h"
#include "backend/cuda/kernels.h"
#include "device/device_solver.h"

namespace ffi = xla::ffi;

namespace jaxamg::mpi_handlers {

namespace {

// The device copies of an entry's trees (A's, and A^T's once an adjoint
// solve asked for it) and of the values they were set up with, replaced
// whenever the host trees change.
template <class T>
struct DeviceTrees {
  std::unique_ptr<cuda::DeviceSolver<T>> forward, transposed;
  cuda::DeviceArray<T> values;
  // A cached call's check: values non-finite, values changed, b non-finite,
  // x0 non-finite (each with inspect's second word).
  cuda::DeviceArray<int> flags{6};
};

template <class T>
std::unique_ptr<dist::DistLinearSolver<T>>& solver_of(mpi_cache::Entry& e) {
  if constexpr (std::is_same<T, double>::value) {
    return e.f64;
  } else {
    return e.f32;
  }
}

int64_t last_dim(const ffi::AnyBuffer& a) {
  return a.dimensions().size() == 0 ? 0 : a.dimensions().back();
}

template <class T>
bool cached_typed(cudaStream_t stream, const dist::Communicator& comm,
                  const ffi_handlers::SolveAttrs& at, const Partition& part, int64_t n, int64_t nnz,
                  ffi::AnyBuffer data, ffi::AnyBuffer b, ffi::AnyBuffer x0, ffi::AnyBuffer x,
                  ffi::AnyBuffer stats) {
  const mpi_cache::Key key =
      solve_key(comm, at, part, n, nnz, std::is_same<T, double>::value, true, nullptr, nullptr);
  auto entry = mpi_cache::Cache::instance().acquire(key);
  std::lock_guard<std::mutex> guard(entry->mutex);
  dist::DistLinearSolver<T>* solver = solver_of<T>(*entry).get();
  std::shared_ptr<DeviceTrees<T>> trees =
      solver ? std::static_pointer_cast<DeviceTrees<T>>(entry->device) : nullptr;
  cuda::DeviceSolver<T>* d = nullptr;
  if (trees) d = (at.transpose ? trees->transposed : trees->forward).get();
  bool same = d && static_cast<int64_t>(trees->values.size()) == nnz;
  if (same) {
    cuda::DeviceArray<int>& flags = trees->flags;
    cuda::check(cudaMemsetAsync(flags.data(), 0, 6 * sizeof(int), stream), "cudaMemsetAsync");
    cuda::inspect<T>(nnz, data.typed_data<T>(), trees->values.data(), flags.data(), stream);
    cuda::inspect<T>(n, b.typed_data<T>(), nullptr, flags.data() + 2, stream);
    if (at.use_x0) cuda::inspect<T>(n, x0.typed_data<T>(), nullptr, flags.data() + 4, stream);
    int h[6] = {0, 0, 0, 0, 0, 0};
    cuda::check(cudaMemcpyAsync(h, flags.data(), sizeof h, cudaMemcpyDeviceToHost, stream),
                "cudaMemcpyAsync (flags)");
    cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (cached check)");
    same = (h[0] | h[1] | h[2] | h[4]) == 0;
  }
  // Every process reuses its setup, or none does.
  if (comm.min_int(same ? 1 : 0) == 0) return false;
  solver->print_setup_stats();
  T* xs = x.typed_data<T>();
  if (at.use_x0) {
    cuda::check(
        cudaMemcpyAsync(xs, x0.typed_data<T>(), n * sizeof(T), cudaMemcpyDeviceToDevice, stream),
        "cudaMemcpyAsync (initial guess)");
  }
  const SolveResult r = d->solve(b.typed_data<T>(), xs, at.use_x0, stream);
  const std::string log = solver->take_log();
  if (!log.empty()) ffi_cache::append_stats_text(log);
  std::vector<T> row(static_cast<std::size_t>(last_dim(stats)));
  ffi_handlers::fill_stats(row.data(), r, at.history_len, ffi_handlers::kSolveOnDevice);
  cuda::check(cudaMemcpyAsync(stats.untyped_data(), row.data(), row.size() * sizeof(T),
                              cudaMemcpyHostToDevice, stream),
              "cudaMemcpyAsync (stats)");
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (stats)");
  return true;
}

}  // namespace

DeviceLanes::DeviceLanes(ffi::AnyBuffer data, ffi::AnyBuffer b, ffi::AnyBuffer x0, ffi::AnyBuffer x,
                         cudaStream_t stream)
    : data_(data.untyped_data()),
      b_(b.untyped_data()),
      x0_(x0.untyped_data()),
      x_(x.untyped_data()),
      nnz_(last_dim(data)),
      n_(last_dim(b)),
      stream_(stream) {}

bool DeviceLanes::solve(dist::DistLinearSolver<float>& s, mpi_cache::Entry& e, bool fresh,
                        int64_t lane, bool use_x0, bool transpose, SolveResult* r) {
  return run(s, e, fresh, lane, use_x0, transpose, r);
}

bool DeviceLanes::solve(dist::DistLinearSolver<double>& s, mpi_cache::Entry& e, bool fresh,
                        int64_t lane, bool use_x0, bool transpose, SolveResult* r) {
  return run(s, e, fresh, lane, use_x0, transpose, r);
}

template <class T>
bool DeviceLanes::run(dist::DistLinearSolver<T>& s, mpi_cache::Entry& e, bool fresh, int64_t lane,
                      bool use_x0, bool transpose, SolveResult* r) {
  Solver<T>& tree = s.tree(transpose);  // collective on the first adjoint solve
  reason_ = cuda::DeviceSolver<T>::unsupported(tree);
  if (!reason_.empty()) return false;
  if (fresh || !e.device) {
    auto made = std::make_shared<DeviceTrees<T>>();
    // The values of this setup, for the next call's check on the device.
    made->values.resize(static_cast<std::size_t>(nnz_));
    cuda::check(cudaMemcpyAsync(made->values.data(), static_cast<const T*>(data_) + lane * nnz_,
                                nnz_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_),
                "cudaMemcpyAsync (setup values)");
    e.device = made;
  }
  auto trees = std::static_pointer_cast<DeviceTrees<T>>(e.device);
  auto& d = transpose ? trees->transposed : trees->forward;
  if (!d) d = std::make_unique<cuda::DeviceSolver<T>>(tree);
  const std::size_t offset = static_cast<std::size_t>(lane * n_);
  const T* b = static_cast<const T*>(b_) + offset;
  T* x = static_cast<T*>(x_) + offset;
  if (use_x0) {
    cuda::check(cudaMemcpyAsync(x, static_cast<const T*>(x0_) + offset, n_ * sizeof(T),
                                cudaMemcpyDeviceToDevice, stream_),
                "cudaMemcpyAsync (initial guess)");
  }
  *r = d->solve(b, x, use_x0, stream_);
  used_ = true;
  return true;
}

bool solve_cached_on_device(cudaStream_t stream, const dist::Communicator& comm,
                            const ffi_handlers::SolveAttrs& at, const Partition& part,
                            ffi::AnyBuffer indptr, ffi::AnyBuffer indices, ffi::AnyBuffer data,
                            ffi::AnyBuffer b, ffi::AnyBuffer x0, ffi::AnyBuffer x,
                            ffi::AnyBuffer stats) {
  // One lane, the structure fingerprinted by the caller, consistent sizes
  // and dtypes: anything else (and its errors) is the staged path's.
  const auto type = data.element_type();
  const int64_t n = last_dim(indptr) - 1, nnz = last_dim(indices);
  const bool eligible = (at.structure_hi | at.structure_lo) != 0 && x.dimensions().size() == 1 &&
                        indptr.dimensions().size() == 1 && indices.dimensions().size() == 1 &&
                        n >= 0 && last_dim(b) == n && last_dim(data) == nnz && last_dim(x0) == n &&
                        last_dim(stats) == ffi_handlers::kStatsHead + at.history_len &&
                        (type == ffi::F64 || type == ffi::F32) && b.element_type() == type &&
                        x0.element_type() == type && x.element_type() == type;
  if (comm.min_int(eligible ? 1 : 0) == 0) return false;
  // The same dtype everywhere, or the processes would look up different keys.
  const int64_t code = type == ffi::F64 ? 0 : 1;
  if (comm.min_int(code) != comm.max_int(code)) return false;
  if (code == 0) return cached_typed<double>(stream, comm, at, part, n, nnz, data, b, x0, x, stats);
  return cached_typed<float>(stream, comm, at, part, n, nnz, data, b, x0, x, stats);
}

}  // namespace jaxamg::mpi_handlers
