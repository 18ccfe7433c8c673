// The outer Krylov methods' steps on the device (DeviceSolver::method_init
// and method_iteration): one solve_iteration of cg.cc / bicgstab.cc as
// kernels with the scalars kept on the device, so that the iteration graph
// (device_solver.cc) can replay them without a host round trip.
#include "gpu_legacy/device_solver.h"

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"

namespace jaxamg::cuda {

template <class T>
void DeviceSolver<T>::method_init(const T* b, T* x, bool x_is_zero) {
  first_ = true;
  if (method_ == Method::kAmg) return;
  if (x_is_zero) {
    fill<T>(n_, T(0), x, stream_);
    check(cudaMemcpyAsync(r_.data(), b, n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpyAsync (initial residual)");
  } else {
    residual(x, b, r_.data());
  }
  if (method_ == Method::kBiCGStab || method_ == Method::kPBiCGStab) {
    check(cudaMemcpyAsync(shadow_.data(), r_.data(), n_ * sizeof(T), cudaMemcpyDeviceToDevice,
                          stream_),
          "cudaMemcpyAsync (shadow residual)");
  }
}

// One solve_iteration of cg.cc / bicgstab.cc, scalars on the device; for AMG
// one cycle. A stop (unusable divisor) leaves kStop set, with the vectors as
// the CPU method leaves them when it returns early.
template <class T>
void DeviceSolver<T>::method_iteration(T* x) {
  const std::size_t n = static_cast<std::size_t>(n_);
  const double vec = static_cast<double>(n) * sizeof(T);
  check(cudaMemsetAsync(scal_.data(), 0, 2 * sizeof(double), stream_), "cudaMemsetAsync (stop)");
  T* r = r_.data();
  switch (method_) {
    case Method::kAmg:  // solve() runs the cycles itself
      break;
    case Method::kCG:
    case Method::kPCG:
    case Method::kPCGF: {
      const bool precond = has_amg();
      T* z = precond ? z_.data() : r;
      if (precond) precondition(r, z);
      reduce_to(Reduce::kDot, r, z, kRzNew);
      const bool flexible = method_ == Method::kPCGF;
      if (flexible && !first_) reduce_to(Reduce::kDot, z, q_.data(), kZq);
      cg_direction(scal_.data(), first_, flexible, stream_);
      cg_new_direction<T>(n, scal_.data(), first_, z, p_.data(), stream_);
      traffic_.bytes += (first_ ? 2 : 3) * vec;
      first_ = false;
      spmv(T(1), p_.data(), T(0), q_.data());
      reduce_to(Reduce::kDot, p_.data(), q_.data(), kPq);
      cg_step(scal_.data(), stream_);
      cg_update<T>(n, scal_.data(), p_.data(), q_.data(), x, r, stream_);
      traffic_.bytes += 6 * vec;
      break;
    }
    case Method::kBiCGStab:
    case Method::kPBiCGStab: {
      const bool precond = has_amg();
      T* phat = precond ? phat_.data() : p_.data();
      T* shat = precond ? shat_.data() : r;
      reduce_to(Reduce::kDot, shadow_.data(), r, kRzNew);
      bicg_rho(scal_.data(), first_, stream_);
      bicg_direction<T>(n, scal_.data(), first_, r, v_.data(), p_.data(), stream_);
      traffic_.bytes += (first_ ? 2 : 4) * vec;
      first_ = false;
      if (precond) precondition(p_.data(), phat);
      spmv(T(1), phat, T(0), v_.data());
      reduce_to(Reduce::kDot, shadow_.data(), v_.data(), kPq);
      bicg_alpha(scal_.data(), stream_);
      axpy_slot<T>(n, scal_.data(), kAlpha, -1.0, v_.data(), r, stream_);
      traffic_.bytes += 3 * vec;
      if (precond) precondition(r, shat);
      spmv(T(1), shat, T(0), t_.data());
      reduce_to(Reduce::kDot, t_.data(), t_.data(), kTt);
      reduce_to(Reduce::kDot, t_.data(), r, kTr);
      bicg_omega(scal_.data(), stream_);
      bicg_update<T>(n, scal_.data(), phat, shat, t_.data(), x, r, stream_);
      traffic_.bytes += 7 * vec;
      break;
    }
  }
}

template void DeviceSolver<float>::method_init(const float*, float*, bool);
template void DeviceSolver<double>::method_init(const double*, double*, bool);
template void DeviceSolver<float>::method_iteration(float*);
template void DeviceSolver<double>::method_iteration(double*);

}  // namespace jaxamg::cuda
