// How the methods of diagonal_sweep_method.h, chebyshev_method.h and
// multicolor_methods.h, written over a backend, run their sweeps.
#pragma once
#include <utility>

#include "backend/slots.h"

namespace jaxamg {

// `iterations` sweeps as Solver::apply runs them: sweep(b, x, x_is_zero)
// from the zero guess first when x_is_zero, and x = 0 when no sweep runs
// from a zero guess.
template <class Backend, class T, class Sweep>
void apply_sweeps(Backend& be, const T* b, T* x, bool x_is_zero, int iterations,
                  const Sweep& sweep) {
  if (iterations <= 0) {
    if (x_is_zero) be.fill_zero(x);
    return;
  }
  for (int it = 0; it < iterations; ++it) sweep(b, x, x_is_zero && it == 0);
}

// `steps` steps of a Jacobi-type smoother, each forming the new iterate
// beside the old one in a single pass over the matrix (neighbouring rows
// still read the old one): step(k, cur, out) writes step k's iterate into
// `out` from `cur`; step 0 does not read `cur` when x_is_zero. The iterate
// alternates between x and `scratch` (same size), so a sweep costs no copy:
// from a zero guess the first step's target is chosen by the parity of
// `steps` so that the last lands in x; from a nonzero guess an odd count
// ends with one copy. x = 0 when no step runs from a zero guess.
template <class Backend, class T, class Step>
void alternate_steps(Backend& be, T* x, T* scratch, bool x_is_zero, int steps, const Step& step) {
  if (steps <= 0) {
    if (x_is_zero) be.fill_zero(x);
    return;
  }
  T* cur = x;
  T* out = scratch;
  if (x_is_zero && steps % 2 == 1) std::swap(cur, out);
  for (int k = 0; k < steps; ++k) {
    step(k, static_cast<const T*>(cur), out);
    std::swap(cur, out);
  }
  if (cur != x) be.copy(cur, x, backend::kAllLanes);
}

}  // namespace jaxamg
