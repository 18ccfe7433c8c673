// The recursion of AmgX's cycles, shared by the serial AMG (amg_cycle.cc) and
// the distributed one (dist/dist_amg_cycle.cc), which pass their own fixed
// cycle, product and inner product (a global sum when distributed).
#pragma once
#include <cstddef>

#include "amg/amg_level.h"
#include "backend/cpu/blas.h"

namespace jaxamg {

// Solves a coarse level's system from x = 0 with a cycle of kind `type`:
// V once, W twice, F an F- then a V-cycle (`fixed(kind, x_is_zero)` runs one
// fixed cycle on the level), CG and CGF the K-cycle (`kcycle()`).
template <class Fixed, class KCycle>
void dispatch_cycle(CycleType type, Fixed fixed, KCycle kcycle) {
  switch (type) {
    case CycleType::kV:
      fixed(CycleType::kV, true);
      break;
    case CycleType::kW:
      fixed(CycleType::kW, true);
      fixed(CycleType::kW, false);
      break;
    case CycleType::kF:
      fixed(CycleType::kF, true);
      fixed(CycleType::kV, false);
      break;
    case CycleType::kCG:
    case CycleType::kCGF:
      kcycle();
      break;
  }
}

// The K-cycle on one level: cycle_iters steps of preconditioned CG on
// A x = b from x = 0, the preconditioner one fixed cycle of the same kind
// (`precondition(r, z)`, z from zero). CGF uses the flexible beta
// <z_new, r_new - r_old> / <r, z> with r_new - r_old = -alpha A p, so no copy
// of the old residual is needed. r, z, p, y: work vectors of length n;
// `product(p, y)`: y = A p; `dot(u, v)`: the inner product.
template <class T, class Precondition, class Product, class Dot>
void kcycle_steps(std::size_t n, int cycle_iters, bool flexible, const T* b, T* x, T* r, T* z,
                  T* p, T* y, Precondition precondition, Product product, Dot dot) {
  cpu::fill<T>(n, T(0), x);
  cpu::copy(n, b, r);
  precondition(r, z);
  cpu::copy(n, z, p);
  double rz = dot(r, z);
  for (int k = 1;; ++k) {
    product(p, y);
    const double yp = dot(y, p);
    // A zero residual or search direction: x is already the answer (and
    // dividing would put NaN into the hierarchy).
    if (rz == 0 || yp == 0) break;
    const double alpha = rz / yp;
    cpu::axpy(n, static_cast<T>(alpha), p, x);
    if (k >= cycle_iters) break;
    cpu::axpy(n, static_cast<T>(-alpha), y, r);
    precondition(r, z);
    double beta;
    if (flexible) {
      beta = -alpha * dot(z, y) / rz;
      rz = dot(r, z);
    } else {
      const double rz_old = rz;
      rz = dot(r, z);
      beta = rz / rz_old;
    }
    cpu::axpby(n, T(1), z, static_cast<T>(beta), p);
  }
}

}  // namespace jaxamg
