// MULTICOLOR_DILU: diagonal ILU in colour order. With L and U the parts of A
// coupling a row to earlier and later colours,
//   M = (E + L) E^-1 (E + U),   e_i = a_ii - sum_{j earlier} a_ij a_ji / e_j,
// so that diag(M) = diag(A). Only E is stored (one extra vector); the
// triangular solves read A's own entries. A sweep is
//   x <- x + w M^-1 (b - A x),  w = relaxation_factor,
// with the residual computed inside the forward solve (one pass over A) and
// the update inside the backward solve. Each colour is one parallel loop.
#pragma once
#include "solvers/smoothers/coloring.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class MulticolorDILUSolver : public Solver<T> {
 public:
  MulticolorDILUSolver(SolverContext& ctx, const std::string& scope);
  const smoothers::Coloring& coloring() const { return coloring_; }

 protected:
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;

 private:
  T w_;
  smoothers::Coloring coloring_;
  smoothers::ColorSplit split_;
  std::vector<Index> transposed_;  // split position of a_ji for each a_ij, or -1
  Vector<T> val_;                  // A's values in split order
  Vector<T> einv_;                 // 1 / e_i, by colour position
  Vector<T> z_;                    // forward-solve result, then the correction
};

}  // namespace jaxamg
