// The solve phase of a CPU-built solver tree on a CUDA device: the
// outer method (CG, PCG, PCGF, BICGSTAB, PBICGSTAB, or AMG itself) with an
// AMG preconditioner (DeviceAmg; in a float64 solve also a float32 hierarchy,
// DeviceMixedAmg) or none. The loop is Solver::solve's:
// the same monitoring, convergence test (Solver::converged_with), residual
// history, AmgX statuses (SUCCESS, NOT_CONVERGED, FAILED on NaN/Inf,
// DIVERGED on a breakdown) and true-residual check before SUCCESS. The
// recurrence scalars stay on the device; the host reads three numbers once
// per iteration (stop flag and residual norm) for the convergence test.
//
// The tree must stay alive and unchanged while this object exists (a
// resetup builds a new DeviceSolver).
#pragma once
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <memory>
#include <string>

#include "api/linear_solver.h"
#include "backend/cuda/device_amg.h"
#include "backend/cuda/device_mixed_amg.h"
#include "backend/cuda/kernels.h"

namespace jaxamg::cuda {

template <class T>
class DeviceSolver {
 public:
  // Empty if `top` runs on the device; otherwise why not (the caller then
  // solves on the host).
  static std::string unsupported(const Solver<T>& top);

  explicit DeviceSolver(const Solver<T>& top);
  ~DeviceSolver();
  DeviceSolver(const DeviceSolver&) = delete;
  DeviceSolver& operator=(const DeviceSolver&) = delete;

  // Solves with device vectors b and x (x holds the initial guess if
  // use_x0) on `stream`; returns after the stream has finished the solve.
  SolveResult solve(const T* b, T* x, bool use_x0, cudaStream_t stream);

  Index rows() const { return n_; }
  // Bytes the last solve moved through device memory by the traffic model.
  double last_solve_bytes() const { return last_bytes_; }

 private:
  enum class Method { kCG, kPCG, kPCGF, kBiCGStab, kPBiCGStab, kAmg };

  void method_init(const T* b, T* x, bool x_is_zero);
  void method_iteration(T* x);
  void precondition(const T* r, T* z);
  // One AMG step when AMG is the outer method.
  void amg_cycle(const T* b, T* x, bool x_is_zero);
  bool has_amg() const { return amg_ || mixed_; }
  void residual(const T* x, const T* b, T* r);
  void spmv(T alpha, const T* x, T beta, T* y);
  void reduce_to(Reduce op, const T* x, const T* y, int slot);
  // Enqueues the norm of r_ into kNorm and reads kStop, kHalf, kNorm.
  void read_back(NormType type, double out[3]);
  bool all_finite(const T* x);

  const Solver<T>& top_;
  Method method_;
  Index n_ = 0;
  cusparseHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<DeviceAmg<T>> amg_;
  std::unique_ptr<DeviceMixedAmg> mixed_;  // float64 solves only
  DeviceCsr<T> own_A_;  // the operator when no AMG level 0 shares it
  const DeviceCsr<T>* A_ = nullptr;
  DeviceArray<T> r_, z_, p_, q_, shadow_, v_, t_, phat_, shat_;
  DeviceArray<double> scal_, work_;
  DeviceArray<int> flags_;
  double* pinned_ = nullptr;  // host mirror of kStop..kNorm
  bool first_ = true;
  Traffic traffic_;
  double last_bytes_ = 0;
};

}  // namespace jaxamg::cuda
