// A configured solver whose AMG hierarchy is built on the device from a
// device CSR matrix (setup/DeviceAggregationSetup for AGGREGATION,
// setup/DeviceClassicalSetup for CLASSICAL), with no host copy of the
// matrix and no CPU setup: the outer method (PCG, PCGF, PBICGSTAB with an
// AMG preconditioner, or AMG itself) runs as DeviceSolver, reading its
// parameters from a solver tree built from the config by the engine's
// factory and never set up.
//
//   DeviceSetupSolver<double> s(config_text);
//   if (s.unsupported().empty()) {
//     s.setup(A);              // device CSR view, canonical pattern
//     s.solve(b, x, false, stream);
//     s.resetup(A_new);        // same pattern, new values
//   }
//
// A transposed solve (the adjoint) runs on the hierarchy of A^T built on the
// device from this one on first use (DeviceHierarchy::make_transposed,
// as the host's make_transposed), kept until the next (re)setup or new
// values.
//
// Setup work (setup, resetup, the transposed hierarchy) runs on the default
// stream and returns synchronised: the caller's arrays must be ready (its
// stream synchronised) when it starts. Solves run on the caller's stream.
//
// resetup follows the host's structure reuse (AmgSolver::build_levels):
// with structure_reuse_levels -1 it recomputes only the coarse values
// (numeric Galerkin products) and the smoother data; with 0, the default, it
// builds the hierarchy anew, as the host does. Partial reuse (a positive
// count), and any reuse of a classical hierarchy (the host recomputes P's
// weights on its kept pattern), is left to the host setup (unsupported()).
#pragma once
#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "device/device_solver.h"
#include "device/setup/device_hierarchy.h"

namespace jaxamg::cuda {

template <class T>
class DeviceSetupSolver {
 public:
  // Parses the config and builds the (not set up) solver tree; throws
  // ConfigError for an invalid config, as LinearSolver's setup would.
  explicit DeviceSetupSolver(const std::string& config_text);

  // Empty if this config runs with a hierarchy built on the device;
  // otherwise why not (the caller then sets up on the host).
  const std::string& unsupported() const { return why_; }

  // Full setup from A (square, canonical pattern: see
  // setup/canonical_pattern.h). A's arrays are read during the call only.
  void setup(const DeviceCsrView<T>& A);
  // New values of the pattern given to setup (see the file comment).
  void resetup(const DeviceCsrView<T>& A);
  // New values of the operator only, the hierarchy and smoothers kept
  // (LinearSolver::replace_values, JAX-AMG's reuse_setup).
  void replace_values(const T* val, cudaStream_t stream);

  // Solves A x = b with device vectors on `stream` (x holds the initial
  // guess if use_x0); returns when the stream has finished the solve.
  SolveResult solve(const T* b, T* x, bool use_x0, cudaStream_t stream);

  // Solves A^T x = b; A is the matrix of the last setup (current values,
  // device memory), read when the transposed hierarchy is built.
  SolveResult solve_transposed(const DeviceCsrView<T>& A, const T* b, T* x, bool use_x0,
                               cudaStream_t stream);

  std::vector<LevelInfo> hierarchy() const;
  // The statistics text the config asks for (print_grid_stats at each setup,
  // print_solve_stats and obtain_timings at each solve), emptying it.
  std::string take_log();
  // The grid table again, for a solve on a cached setup (as
  // Solver::print_setup_stats).
  void print_setup_stats() const;
  double last_solve_bytes() const { return last_bytes_; }
  // The hierarchy of the last setup (DeviceAggregationSetup or
  // DeviceClassicalSetup, after the AMG scope's algorithm); with
  // x_amg_precision FLOAT (float64 solves) the float32 one instead.
  const DeviceHierarchy<T>& device_hierarchy() const;
  const DeviceHierarchy<float>* float_hierarchy() const { return setup_lo_.get(); }

 private:
  std::string check_config();
  // The device cycle over the current hierarchy (smoother data, coarse LU);
  // A is the operator of the outer method.
  void build_cycle(const DeviceCsrView<T>& A);
  // A with float32 values in `val` (x_amg_precision FLOAT); throws
  // InvalidInput naming A when a value overflows float32.
  DeviceCsrView<float> to_float(const DeviceCsrView<T>& A, DeviceArray<float>& val) const;
  void drop_solvers();
  // After a setup or resetup that began at `start`: the setup time the
  // statistics report, and the grid table when print_grid_stats asks.
  void finish_setup(std::chrono::steady_clock::time_point start);

  std::unique_ptr<SolverContext> ctx_;
  std::unique_ptr<Solver<T>> top_;  // parameters only: never set up
  std::string amg_scope_;
  std::string why_;
  std::unique_ptr<DeviceHierarchy<T>> setup_;
  std::unique_ptr<DeviceSolver<T>> solver_;
  std::unique_ptr<DeviceHierarchy<T>> t_setup_;  // A^T's, built on first use
  // x_amg_precision FLOAT: the float32 hierarchies of A (values in val_lo_)
  // and of A^T.
  bool mixed_ = false;
  std::unique_ptr<DeviceHierarchy<float>> setup_lo_, t_setup_lo_;
  DeviceArray<float> val_lo_;
  std::unique_ptr<DeviceSolver<T>> t_solver_;
  double last_bytes_ = 0;
};

}  // namespace jaxamg::cuda
