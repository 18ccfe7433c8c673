// What every backend shares with the algorithms written once over backends
// (solvers/krylov/*_method.h): how a method's scalars are kept.
//
// A method's scalars (recurrence coefficients, inner products, flags) live in
// `slots`: each lane has an array of doubles, one per named slot of the
// method. The backend owns them where its vectors live -- in host memory for
// the CPU backends, in device memory for CUDA -- and the method never reads
// them directly: it hands the backend
//   - reductions that write a slot (dot),
//   - small functors that compute slots from slots (`update`), run once per
//     lane (on the device: in a one-thread-per-lane kernel, so a CUDA solve
//     never waits for the host between kernels),
//   - vector updates whose coefficients are read from slots (`Coef`) and
//     which touch only the lanes whose mask slot is nonzero (a lane whose
//     recurrence stopped keeps its vectors while the others go on).
// Slot 0 of every method is kGo: 1 while the lane's current iteration goes
// on, 0 once it stopped.
#pragma once

#include "core/types.h"  // JAXAMG_HOST_DEVICE

namespace jaxamg::backend {

// The slot every method reserves for "this lane's iteration goes on".
constexpr int kGo = 0;
// A mask that selects every lane.
constexpr int kAllLanes = -1;

// A coefficient of a vector update: factor * s[slot], or factor alone when
// slot < 0. Reading `-alpha` as {kAlpha, -1} gives the same bits as negating
// alpha, so methods keep their arithmetic exactly.
struct Coef {
  int slot;
  double factor;
  JAXAMG_HOST_DEVICE double value(const double* s) const { return slot < 0 ? factor : factor * s[slot]; }
};
constexpr Coef slot(int s, double factor = 1.0) { return Coef{s, factor}; }
constexpr Coef constant(double v) { return Coef{-1, v}; }

// True if lane slots `s` are selected by `mask` (kAllLanes or a slot index).
JAXAMG_HOST_DEVICE inline bool selected(const double* s, int mask) { return mask < 0 || s[mask] != 0.0; }

// A denominator of a Krylov recurrence (rho, <p, Ap>, omega, ...) that cannot
// be divided by: exactly zero or not finite. Tiny but nonzero values give
// large, finite steps, which the convergence test and the loop's NaN/Inf
// check then judge; a relative cut-off would need norms the methods do not
// otherwise compute.
JAXAMG_HOST_DEVICE inline bool unusable_divisor(double d) {
  return d == 0.0 || d != d || d - d != 0.0;  // zero, NaN or infinite
}

}  // namespace jaxamg::backend
