// KACZMARZ: row-projection relaxation. Each step projects x onto the
// hyperplane of one equation a_i . x = b_i, weighted by w = relaxation_factor:
//   x <- x + w (b_i - a_i . x) / ||a_i||^2  a_i^T,   i = 0, 1, ..., n-1.
// One sweep visits every row once, in order, in place. It is Gauss-Seidel on
// A A^T y = b with x = A^T y, so it reduces the error for any nonsingular A
// (nonsymmetric or indefinite included), at the price of being slower than GS
// where GS converges. The host sweep is sequential, so kaczmarz_coloring_needed
// (AmgX's switch for a coloured parallel sweep) changes nothing here; it is
// read and must be 0 or 1. Each step writes to the columns of its row, so a
// matrix distributed over several processes is refused (use GS or
// MULTICOLOR_GS there).
#pragma once
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class KaczmarzSolver : public Solver<T> {
 public:
  KaczmarzSolver(SolverContext& ctx, const std::string& scope);

 protected:
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;

 private:
  T w_;
  Vector<T> w_over_row_norm2_;  // w / ||a_i||^2
};

}  // namespace jaxamg
