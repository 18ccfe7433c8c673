// An AMG hierarchy built by the CPU setup (AmgSolver), copied to the device
// once per setup, and its cycles run there: the level operators A_l, P_l and
// R_l as cuSPARSE CSR matrices, the smoothers' diagonal data and the coarse
// solver's inverse. Mirrors amg_cycle.cc (V, W and F cycles) and the
// smoothers' apply() step for step, so that a solve takes the iterations the
// CPU takes.
//
// On the device: JACOBI_L1, BLOCK_JACOBI (block_dim 1), CHEBYSHEV and
// CHEBYSHEV_POLY with a diagonal preconditioner (JACOBI_L1, scalar
// BLOCK_JACOBI) or none, no smoother, and DENSE_LU_SOLVER or smoother sweeps
// on the coarsest level. unsupported() names anything else (K-cycles,
// error_scaling 2/3, Gauss-Seidel and ILU smoothers, ...), for which the
// caller solves on the host.
#pragma once
#include <cusparse.h>

#include <memory>
#include <string>
#include <vector>

#include "amg/amg_solver.h"
#include "backend/cuda/device_array.h"
#include "backend/cuda/device_csr.h"
#include "solvers/smoothers/chebyshev.h"

namespace jaxamg {
template <class T>
class DenseLUSolver;
}

namespace jaxamg::cuda {

template <class T>
class DeviceHierarchy;

// Bytes moved by the device work of a solve, counted as it is issued (the
// traffic model of the benchmark: each operand read once, each result written once).
struct Traffic {
  double bytes = 0;
};

template <class T>
class DeviceAmg {
 public:
  // Empty if `amg` runs on the device; otherwise why not. (As a
  // preconditioner it must not monitor its residual: DeviceSolver checks.)
  static std::string unsupported(const AmgSolver<T>& amg);
  // The same for a hierarchy built on the device (setup/DeviceHierarchy)
  // with the AMG scope `scope` of ctx.config: cycle, smoother (JACOBI_L1,
  // NOSOLVER, or CHEBYSHEV with configured bounds, i.e.
  // chebyshev_lambda_estimate_mode 3, on a JACOBI_L1 preconditioner) and
  // coarse solver (DENSE_LU_SOLVER or NOSOLVER).
  static std::string unsupported(SolverContext& ctx, const std::string& scope);

  DeviceAmg(cusparseHandle_t handle, const AmgSolver<T>& amg);
  // A hierarchy built on the device (setup/), with the cycle,
  // smoother and coarse solver of the AMG scope `scope` of ctx.config:
  // JACOBI_L1 or CHEBYSHEV on it (l1 norms computed on the device) or no
  // smoother, and
  // DENSE_LU_SOLVER (factored on the host from the downloaded coarsest
  // matrix) or coarsest-level sweeps. Throws NotSupported with the reason
  // unsupported(ctx, scope) gives. Defined in setup/device_amg_from_setup.cc.
  DeviceAmg(cusparseHandle_t handle, const DeviceHierarchy<T>& setup, SolverContext& ctx,
            const std::string& scope);

  // The AMG solver's solve from a zero guess with monitoring off, as a
  // preconditioner calls it: max_iters cycles (x = 0 for max_iters 0).
  void precondition(const T* b, T* x, cudaStream_t s);
  // One cycle on level 0 (AmgSolver::solve_iteration).
  void cycle(const T* b, T* x, bool x_is_zero, cudaStream_t s);

  const DeviceCsr<T>& fine_matrix() const { return levels_.front().A; }
  // New values of the fine matrix (same pattern, device memory) on
  // `stream`; coarse levels and smoother data stay (reuse_setup).
  void replace_fine_values(const T* val, cudaStream_t s) { levels_.front().A.replace_values(val, s); }
  int num_levels() const { return static_cast<int>(levels_.size()); }
  // The AMG scope's max_iters (cycles per preconditioner application).
  int max_iters() const { return max_iters_; }
  Traffic& traffic() { return traffic_; }

 private:
  enum class SmootherKind { kNone, kDiagonal, kChebyshev };
  struct Level {
    DeviceCsr<T> A, P, R;
    SmootherKind smoother = SmootherKind::kNone;
    DeviceArray<T> diag;  // w / d_i (Jacobi) or the Chebyshev scaling
    double lmin = 0, lmax = 0;  // Chebyshev: the interval of the recurrence
    int order = 0;
    DeviceArray<T> b, x, r, p;  // b, x on levels > 0; r everywhere; p for Chebyshev
    T* other = nullptr;  // during smooth(): the buffer the next fused sweep writes (x or r)
    std::size_t rows() const { return static_cast<std::size_t>(A.rows()); }
  };

  void fixed(int l, CycleType type, const T* b, T* x, bool x_is_zero, cudaStream_t s);
  void dispatch(int m, CycleType type, cudaStream_t s);
  int sweeps(int l, int n) const;
  void smooth(Level& L, const T* b, T* x, bool x_is_zero, int n, cudaStream_t s);
  void residual(Level& L, const T* x, const T* b, T* r, cudaStream_t s);
  // One smoother step as a single fused kernel from `cur` into the other
  // buffer (x or L.r), moving `cur` there; false when L.A runs cuSPARSE.
  bool fused_sweep(Level& L, const T* b, T*& cur, int step, double a, double bcoef,
                   cudaStream_t s);
  void spmv(const DeviceCsr<T>& M, T alpha, const T* x, T beta, T* y);
  // coarse_n_ and coarse_inverse_ from the factors of a dense LU.
  void set_coarse_inverse(const DenseLUSolver<T>& lu);

  cusparseHandle_t handle_;
  CycleParams params_;
  int max_iters_ = 1;
  std::vector<Level> levels_;
  Index coarse_n_ = 0;            // > 0: the coarsest level is solved with coarse_inverse_
  DeviceArray<T> coarse_inverse_;
  Traffic traffic_;
};

}  // namespace jaxamg::cuda
