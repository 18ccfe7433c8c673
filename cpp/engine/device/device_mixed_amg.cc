#include "device/device_mixed_amg.h"

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"
#include "device/setup/device_hierarchy.h"

namespace jaxamg::cuda {

std::string DeviceMixedAmg::unsupported(const MixedPrecisionAmg& amg) {
  return DeviceAmg<float>::unsupported(amg.float_amg());
}

DeviceMixedAmg::DeviceMixedAmg(cusparseHandle_t handle, const MixedPrecisionAmg& amg,
                               const DeviceCsr<double>& A)
    : handle_(handle),
      A_(A),
      amg_(handle, amg.float_amg()),
      max_iters_(amg.max_iters()),
      n_(static_cast<std::size_t>(amg.matrix().nrows)) {
  b_lo_.resize(n_);
  x_lo_.resize(n_);
  // Allocated here, not at the first refinement step: a step may be
  // captured into a CUDA graph, where allocation is not allowed.
  r_hi_.resize(n_);
}

DeviceMixedAmg::DeviceMixedAmg(cusparseHandle_t handle, const DeviceHierarchy<float>& setup,
                               SolverContext& ctx, const std::string& scope,
                               const DeviceCsr<double>& A)
    : handle_(handle),
      A_(A),
      amg_(handle, setup, ctx, scope),
      max_iters_(amg_.max_iters()),
      n_(static_cast<std::size_t>(A.rows())) {
  b_lo_.resize(n_);
  x_lo_.resize(n_);
  r_hi_.resize(n_);
}

void DeviceMixedAmg::cycle(const double* b, double* x, bool x_is_zero, cudaStream_t s) {
  const double lo = static_cast<double>(n_) * sizeof(float);
  const double hi = static_cast<double>(n_) * sizeof(double);
  if (x_is_zero) {
    convert<float, double>(n_, b, b_lo_.data(), s);
    amg_.cycle(b_lo_.data(), x_lo_.data(), true, s);
    convert<double, float>(n_, x_lo_.data(), x, s);
    traffic_.bytes += 2 * (lo + hi);
    return;
  }
  if (A_.uses_cusparse()) {
    check(cudaMemcpyAsync(r_hi_.data(), b, n_ * sizeof(double), cudaMemcpyDeviceToDevice, s),
          "cudaMemcpyAsync (mixed residual)");
    A_.spmv(handle_, -1.0, x, 1.0, r_hi_.data());
    traffic_.bytes += 3 * hi;
  } else {
    csr_residual(A_.ref(), x, b, r_hi_.data(), s);
    traffic_.bytes += hi;
  }
  convert<float, double>(n_, r_hi_.data(), b_lo_.data(), s);
  amg_.cycle(b_lo_.data(), x_lo_.data(), true, s);
  add_converted<double, float>(n_, x_lo_.data(), x, s);
  traffic_.bytes += A_.spmv_bytes() + (lo + hi) + (lo + 2 * hi);
}

void DeviceMixedAmg::precondition(const double* b, double* x, cudaStream_t s) {
  if (max_iters_ <= 0) {
    fill<double>(n_, 0.0, x, s);
    return;
  }
  for (int it = 0; it < max_iters_; ++it) cycle(b, x, it == 0, s);
}

}  // namespace jaxamg::cuda
