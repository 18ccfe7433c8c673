// The solve phase of a CPU-built solver tree on a CUDA device: the
// outer method (CG, PCG, PCGF, BICGSTAB, PBICGSTAB, GMRES, FGMRES, or AMG
// itself) with an AMG preconditioner (DeviceAmg; in a float64 solve also a
// float32 hierarchy, DeviceMixedAmg), a smoother preconditioner (a one-level
// DeviceAmg: JACOBI_L1, BLOCK_JACOBI, CHEBYSHEV, MULTICOLOR_GS/DILU/ILU) or
// none. The Krylov methods are the
// engine's own (device/outer_krylov.h: the methods of solvers/krylov on the
// CUDA backend). The loop's decisions are Solver::solve's, made by the one
// SolveTracker (solvers/solve_tracker.h): monitoring, convergence test,
// residual history, AmgX statuses (SUCCESS, NOT_CONVERGED, FAILED on NaN/Inf,
// DIVERGED on a breakdown), true-residual check before SUCCESS; the statistics
// print through Solver::write_solve_stats. The
// recurrence scalars stay on the device; the host reads three numbers once
// per iteration (stop flag and residual norm) for the convergence test --
// or, by default, runs the iterations after the first as one CUDA graph
// (IterationGraph) that applies the same test on the device and returns to
// the host only when the loop stops (not for (F)GMRES, whose steps read
// their step index on the host). JAXAMG_CUDA_GRAPHS=0 in the environment
// selects the per-iteration host loop (the results are the same). CG
// without a preconditioner on at most kSmallCgMaxRows rows runs instead as
// one fused kernel (SmallCg), unless JAXAMG_SMALL_CG=0 or the device cannot
// launch it.
//
// The tree must stay alive and unchanged while this object exists (a
// resetup builds a new DeviceSolver).
//
// On a distributed matrix (CsrMatrix::dist) the solve is this process's part
// of a collective one: the Krylov method and the distributed AMG's cycles
// (DeviceAmg from the distributed hierarchy) run on the device, products
// exchange ghost values through host buffers and inner products are summed
// over processes, so the host waits at every exchange and reduction (no
// CUDA graph, no one-kernel CG). Every process must call solve() together.
//
// A second constructor takes the AMG hierarchy of a device aggregation
// setup (setup/) instead: the tree then only supplies the outer method's
// parameters (it needs no setup, and its matrix is never read).
#pragma once
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <memory>
#include <string>

#include "api/linear_solver.h"
#include "backend/cuda/kernels.h"
#include "device/outer_krylov.h"
#include "device/device_amg.h"
#include "device/device_mixed_amg.h"
#include "device/iteration_graph.h"
#include "device/setup/device_hierarchy.h"
#include "device/small_cg.h"

namespace jaxamg::cuda {

template <class T>
class DeviceSolver {
 public:
  // Empty if `top` runs on the device; otherwise why not (the caller then
  // solves on the host).
  static std::string unsupported(const Solver<T>& top);

  // The part of unsupported() that is about the outer method alone (its
  // name, printed statistics), readable from a tree without setup.
  static std::string unsupported_method(const Solver<T>& top);

  explicit DeviceSolver(const Solver<T>& top);
  // `top` (not set up) gives the outer method; the AMG of scope `amg_scope`
  // of its config (top itself, or its preconditioner) runs on the hierarchy
  // of `setup`, whose level 0 is the operator. Throws NotSupported as
  // DeviceAmg's constructor from a setup does.
  DeviceSolver(const Solver<T>& top, const DeviceHierarchy<T>& setup,
               const std::string& amg_scope);
  // The same with x_amg_precision FLOAT (float64 solves only): the AMG runs
  // on `setup`, the float32 hierarchy of float32(A), inside the float64
  // method on A (copied to this solver).
  DeviceSolver(const Solver<T>& top, const DeviceHierarchy<float>& setup,
               const std::string& amg_scope, const DeviceCsrView<T>& A);
  ~DeviceSolver();
  DeviceSolver(const DeviceSolver&) = delete;
  DeviceSolver& operator=(const DeviceSolver&) = delete;

  // Solves with device vectors b and x (x holds the initial guess if
  // use_x0) on `stream`; returns after the stream has finished the solve.
  // The statistics the tree's config asks for (print_solve_stats,
  // obtain_timings) go to its context's log, as Solver::solve writes them.
  SolveResult solve(const T* b, T* x, bool use_x0, cudaStream_t stream);

  // The setup time the statistics report (the host tree's by default; a
  // device setup sets its own).
  void set_setup_seconds(double s) { setup_seconds_ = s; }

  // New values (nnz, the pattern of the operator, device memory) for the
  // operator only, every AMG level and smoother kept (JAX-AMG's reuse_setup,
  // LinearSolver::replace_values). Only for the constructor from a device
  // setup, whose operator is the hierarchy's level 0.
  void replace_values(const T* val, cudaStream_t stream);

  Index rows() const { return n_; }
  // Bytes the last solve moved through device memory by the traffic model.
  double last_solve_bytes() const { return last_bytes_; }
  // Blocks of the fused CG kernel that ran the last solve; 0 if it did not.
  int last_small_cg_blocks() const { return small_blocks_; }

 private:
  // The solve's operator for the Krylov method: A, the AMG preconditioner,
  // b - A x for the b of the solve.
  struct Operator;

  // The constructors' common steps: `why` empty or the reason the method
  // cannot run here (thrown as NotSupported), then the method of top_.
  void choose_method(const std::string& why);
  // Creates handle_, runs build() and allocates the work vectors; on an
  // exception frees what was built and the handle, then rethrows.
  template <class Build>
  void build_on_new_handle(Build build);
  // The Krylov method (unless AMG is the outer method) and the work vectors
  // (every constructor).
  void allocate_work();
  // r = b - A x (b itself from a zero guess, which x then takes) and the
  // Krylov method started from it.
  void method_init(const T* b, T* x, bool x_is_zero);
  // One iteration of the Krylov method; its stop flag into scal_[kStop].
  void method_iteration(const T* b, T* x);
  // The correction the method holds back to the end of a pass ((F)GMRES).
  void method_finalize(const T* b, T* x);
  void precondition(const T* r, T* z);
  // One AMG step when AMG is the outer method.
  void amg_cycle(const T* b, T* x, bool x_is_zero);
  bool has_amg() const { return amg_ || mixed_; }
  void residual(const T* x, const T* b, T* r);
  void spmv(T alpha, const T* x, T beta, T* y);
  void reduce_to(Reduce op, const T* x, const T* y, int slot);
  // Enqueues the norm of r_ into kNorm and reads kStop and kNorm.
  void read_back(NormType type, double out[2]);
  bool all_finite(const T* x);
  double traffic_total();
  // The graph of one iteration on x and b with this monitoring setup,
  // captured on first use; false if it cannot be captured (the host loop
  // then runs the iterations).
  bool ensure_loop(const T* b, T* x, bool monitor, bool store, NormType norm_type, int max_iters);
  // Solver::solve's loop on the device (solve() without the statistics).
  SolveResult solve_loop(const T* b, T* x, bool use_x0);
  // The whole solve as SmallCg's one kernel when it applies; false if the
  // solve is left to solve_loop.
  bool solve_small(const T* b, T* x, bool use_x0, SolveResult* res);

  const Solver<T>& top_;
  bool amg_outer_ = false;  // AMG itself is the outer method
  device::KrylovShape shape_;
  std::unique_ptr<device::OuterKrylov<T>> krylov_;  // nullptr when amg_outer_
  Index n_ = 0;
  cusparseHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<DeviceAmg<T>> amg_;
  std::unique_ptr<DeviceMixedAmg> mixed_;  // float64 solves only
  DeviceCsr<T> own_A_;  // the operator when no AMG level 0 shares it
  const DeviceCsr<T>* A_ = nullptr;
  // Distributed: the sums over processes, and the entries of a vector
  // that A multiplies (the owned rows and the ghost tail).
  const Reducer* reducer_ = nullptr;
  Index capacity_ = 0;
  DeviceArray<T> r_;
  DeviceArray<double> scal_, work_;
  DeviceArray<int> flags_;
  double* pinned_ = nullptr;  // host mirror of kStop..kNorm
  // The iteration graph, the vectors it runs on and what it was captured for.
  IterationGraph loop_;
  DeviceArray<T> x_loop_, b_loop_;
  struct LoopKey {
    const T* b = nullptr;
    const T* x = nullptr;
    bool monitor = false, store = false;
    NormType norm = NormType::kL2;
    int max_iters = 0;
    bool operator==(const LoopKey& o) const {
      return b == o.b && x == o.x && monitor == o.monitor && store == o.store && norm == o.norm &&
             max_iters == o.max_iters;
    }
  } loop_key_;
  bool loop_failed_ = false;  // capture failed once: host loop from then on
  double loop_bytes_ = 0;     // traffic of one captured iteration
  Traffic traffic_;
  double last_bytes_ = 0;
  std::unique_ptr<SmallCg<T>> small_;  // made on the first small CG solve
  int small_blocks_ = 0;
  double setup_seconds_ = 0;
  double last_initial_ = -1;  // the last solve's initial monitored norm
};

}  // namespace jaxamg::cuda
