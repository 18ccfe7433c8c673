// An AMG hierarchy built by the CPU setup (AmgSolver) or by the device setup
// (setup/DeviceHierarchy), copied into device memory once per setup, and its
// cycles run there by the one cycle of the engine (device/amg_cycle.h): the
// level operators A_l, P_l and R_l, the smoothers' diagonal data and the
// coarse solver's inverse.
//
// On the device: V, W, F and the CG/CGF K-cycles, error scaling 2 and 3
// (without reuse_scale, whose counter lives on the host and would be frozen
// into a captured iteration), the JACOBI_L1, BLOCK_JACOBI (any block_dim),
// CHEBYSHEV and CHEBYSHEV_POLY smoothers with a diagonal preconditioner
// (JACOBI_L1, scalar BLOCK_JACOBI) or none, MULTICOLOR_GS (block_dim up to
// 8), MULTICOLOR_DILU and MULTICOLOR_ILU with the host setup's colouring
// and factors, no smoother, and DENSE_LU_SOLVER or smoother sweeps on the
// coarsest level. unsupported() names anything else (GS, KACZMARZ, ...),
// for which the caller solves on the host.
#pragma once
#include <cusparse.h>

#include <memory>
#include <string>
#include <vector>

#include "amg/amg_solver.h"
#include "amg/hierarchy_view.h"
#include "backend/cuda/device_array.h"
#include "backend/cuda/device_csr.h"
#include "device/amg_cycle.h"
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

// Why cycles with the parameters p cannot run on the device ("" if they can).
std::string cycle_unsupported(const CycleParams& p);

template <class T>
class DeviceAmg {
 public:
  // Empty if `amg` runs on the device; otherwise why not. (As a
  // preconditioner it must not monitor its residual: DeviceSolver checks.)
  static std::string unsupported(const AmgSolver<T>& amg);
  // The same for the hierarchy a view describes (amg/hierarchy_view.h),
  // serial or distributed.
  static std::string unsupported(const HierarchyView<T>& h);
  // The same for a hierarchy built on the device (setup/DeviceHierarchy)
  // with the AMG scope `scope` of ctx.config: cycle, smoother (JACOBI_L1,
  // NOSOLVER, or CHEBYSHEV with configured bounds, i.e.
  // chebyshev_lambda_estimate_mode 3, on a JACOBI_L1 preconditioner) and
  // coarse solver (DENSE_LU_SOLVER or NOSOLVER).
  static std::string unsupported(SolverContext& ctx, const std::string& scope);

  // The hierarchy of amg.view(): the serial levels, or on a distributed
  // matrix the distributed multigrid's, whose products exchange ghosts
  // through host buffers (backend/cuda/device_halo.h), whose inner products
  // are summed over processes and whose consolidated coarsest level is
  // solved on the host.
  DeviceAmg(cusparseHandle_t handle, const AmgSolver<T>& amg);
  // A set-up host smoother as a Krylov method's preconditioner: a one-level
  // hierarchy whose coarsest solve is the smoother's max_iters sweeps, so
  // that precondition() is the host's preconditioner solve (from a zero
  // guess, without monitoring). unsupported_smoother() says which run.
  static std::string unsupported_smoother(const Solver<T>& smoother);
  DeviceAmg(cusparseHandle_t handle, const Solver<T>& smoother);
  // A hierarchy built on the device (setup/), with the cycle,
  // smoother and coarse solver of the AMG scope `scope` of ctx.config:
  // JACOBI_L1 or CHEBYSHEV on it (l1 norms computed on the device) or no
  // smoother, and
  // DENSE_LU_SOLVER (factored on the host from the downloaded coarsest
  // matrix) or coarsest-level sweeps. Throws NotSupported with the reason
  // unsupported(ctx, scope) gives. Defined in setup/device_amg_from_setup.cc.
  DeviceAmg(cusparseHandle_t handle, const DeviceHierarchy<T>& setup, SolverContext& ctx,
            const std::string& scope);
  ~DeviceAmg();
  // The cycle keeps references into this object.
  DeviceAmg(const DeviceAmg&) = delete;
  DeviceAmg& operator=(const DeviceAmg&) = delete;

  // The AMG solver's solve from a zero guess with monitoring off, as a
  // preconditioner calls it: max_iters cycles (x = 0 for max_iters 0).
  void precondition(const T* b, T* x, cudaStream_t s);
  // One cycle on level 0 (AmgSolver::solve_iteration), on `s`: the stream of
  // the handle given at construction.
  void cycle(const T* b, T* x, bool x_is_zero, cudaStream_t s);

  const DeviceCsr<T>& fine_matrix() const { return data_.levels.front().A; }
  // New values of the fine matrix (same pattern, device memory) on
  // `stream`; coarse levels and smoother data stay (reuse_setup).
  void replace_fine_values(const T* val, cudaStream_t s) {
    data_.levels.front().A.replace_values(val, s);
  }
  int num_levels() const { return static_cast<int>(data_.levels.size()); }
  // The AMG scope's max_iters (cycles per preconditioner application).
  int max_iters() const { return max_iters_; }
  Traffic& traffic() { return traffic_; }

 private:
  DeviceAmg(cusparseHandle_t handle, const HierarchyView<T>& h, int max_iters);
  // The coarse inverse of data_ from the factors of a dense LU.
  void set_coarse_inverse(const DenseLUSolver<T>& lu);
  // The cycle over data_, once it is filled (the last step of each constructor).
  void make_cycle();

  cusparseHandle_t handle_;
  int max_iters_ = 1;
  device::DeviceAmgData<T> data_;
  Traffic traffic_;
  std::unique_ptr<device::AmgCycle<T>> cycle_;
};

}  // namespace jaxamg::cuda
