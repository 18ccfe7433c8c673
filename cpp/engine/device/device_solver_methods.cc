// The outer Krylov method's steps inside DeviceSolver's loop: the engine's
// one method (device/outer_krylov.h) on the solve's operator, its stop flag
// written where the loop and the iteration graph read it (scal_[kStop]).
#include "device/device_solver.h"

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"

namespace jaxamg::cuda {

template <class T>
struct DeviceSolver<T>::Operator final : device::DeviceOperator<T> {
  DeviceSolver* solver;
  const T* b;
  Operator(DeviceSolver* s, const T* rhs) : solver(s), b(rhs) {}
  void matvec(const T* x, T* y) override { solver->spmv(T(1), x, T(0), y); }
  void precondition(const T* r, T* z) override { solver->precondition(r, z); }
  void residual(const T* x, T* r) override { solver->residual(x, b, r); }
};

template <class T>
void DeviceSolver<T>::method_init(const T* b, T* x, bool x_is_zero) {
  if (amg_outer_) return;
  if (x_is_zero) {
    fill<T>(n_, T(0), x, stream_);
    check(cudaMemcpyAsync(r_.data(), b, n_ * sizeof(T), cudaMemcpyDeviceToDevice, stream_),
          "cudaMemcpyAsync (initial residual)");
  } else {
    residual(x, b, r_.data());
  }
  krylov_->set_stream(stream_);
  krylov_->init(r_.data());
}

// A stop (an unusable divisor, or an exact solution) leaves scal_[kStop]
// set, with the vectors as the CPU method leaves them when it returns early.
template <class T>
void DeviceSolver<T>::method_iteration(const T* b, T* x) {
  Operator op(this, b);
  krylov_->set_stream(stream_);
  krylov_->iteration(op, x, r_.data(), scal_.data() + kStop);
}

template <class T>
void DeviceSolver<T>::method_finalize(const T* b, T* x) {
  Operator op(this, b);
  krylov_->set_stream(stream_);
  krylov_->finalize(op, x);
}

#define JAXAMG_INSTANTIATE(T)                                                \
  template void DeviceSolver<T>::method_init(const T*, T*, bool);             \
  template void DeviceSolver<T>::method_iteration(const T*, T*);              \
  template void DeviceSolver<T>::method_finalize(const T*, T*);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg::cuda
