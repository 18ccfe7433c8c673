// `iterations` sweeps of a smoother's method written over a backend, as
// Solver::apply runs them: sweep(b, x, x_is_zero) from the zero guess first
// when x_is_zero, and x = 0 when no sweep runs from a zero guess. Shared by
// the methods of diagonal_sweep_method.h, chebyshev_method.h and
// multicolor_methods.h.
#pragma once

namespace jaxamg {

template <class Backend, class T, class Sweep>
void apply_sweeps(Backend& be, const T* b, T* x, bool x_is_zero, int iterations,
                  const Sweep& sweep) {
  if (iterations <= 0) {
    if (x_is_zero) be.fill_zero(x);
    return;
  }
  for (int it = 0; it < iterations; ++it) sweep(b, x, x_is_zero && it == 0);
}

}  // namespace jaxamg
