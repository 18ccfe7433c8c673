// The convergence and divergence tests of Solver::solve as a plain value: the
// configured criterion, tolerances and the precision's floor. Every solve loop
// tests through this one rule, by way of SolveTracker (solvers/solve_tracker.h):
// Solver::solve, the vmap lanes (batched/) and the device solve
// (device/device_solver.cc, which reads each residual norm back). The test is
// inline and marked __host__ __device__ under nvcc, so device code (the
// CUDA-graph loop, the one-kernel CG) evaluates the same rule too.
#pragma once
#include "core/types.h"  // JAXAMG_HOST_DEVICE

namespace jaxamg {

struct StoppingRule {
  ConvergenceType type = ConvergenceType::kRelativeIni;
  double tolerance = 1e-12;
  double alt_rel_tolerance = 1e-12;
  // Below eps times the reference norm a relative test passes whatever the
  // tolerance (1e-6 in float32, 1e-12 in float64): no precision gets further.
  double eps = 1e-12;
  // A monitored residual above this multiple of the initial one ends the
  // solve as DIVERGED (AmgX's rel_div_tolerance; <= 0 disables the test).
  double rel_div_tolerance = -1;

  // True if a residual norm `nrm` meets the rule, for a solve whose initial
  // and largest norms so far are `initial` and `largest`.
  JAXAMG_HOST_DEVICE bool converged(double nrm, double initial, double largest) const {
    switch (type) {
      case ConvergenceType::kAbsolute:
        return nrm < tolerance;
      case ConvergenceType::kRelativeIni:
        if (initial <= 1e-20) return true;
        return nrm / initial <= tolerance || nrm <= larger(initial * eps, 1e-20);
      case ConvergenceType::kRelativeMax:
        if (largest <= 1e-20) return true;
        return nrm / largest <= tolerance || nrm <= larger(largest * eps, 1e-20);
      case ConvergenceType::kCombinedRelIniAbs:
        return nrm < tolerance || (initial > 0 && nrm / initial <= alt_rel_tolerance);
    }
    return false;
  }

  // True if a residual norm `nrm` has grown past rel_div_tolerance times the
  // initial norm: the iteration is diverging and more of it cannot help.
  JAXAMG_HOST_DEVICE bool diverged(double nrm, double initial) const {
    return rel_div_tolerance > 0 && initial > 0 && nrm > rel_div_tolerance * initial;
  }

  // The status of a monitored solve that used all its iterations without
  // meeting the rule: DIVERGED when its last residual norm is above the
  // initial one (the iterations left x worse than x0), else NOT_CONVERGED.
  JAXAMG_HOST_DEVICE static Status exhausted(double last, double initial) {
    return last > initial ? Status::kDiverged : Status::kNotConverged;
  }

 private:
  // std::max(a, b), NaN handling included.
  JAXAMG_HOST_DEVICE static double larger(double a, double b) { return a < b ? b : a; }
};

}  // namespace jaxamg
