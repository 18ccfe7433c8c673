// GS: sequential forward Gauss-Seidel weighted by w = relaxation_factor,
//   x_i <- x_i + w (b_i - sum_j a_ij x_j) / a_ii,  i = 0, 1, ..., n-1,
// in place, as AmgX's host GS. It is inherently sequential; for a parallel
// sweep use MULTICOLOR_GS. Like AmgX's GS it reads only relaxation_factor
// (symmetric_GS is a MULTICOLOR_GS parameter). On a distributed matrix it
// is hybrid Gauss-Seidel: sequential within the process's rows, Jacobi
// across process boundaries (ghost values are those before the sweep).
#pragma once
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class GaussSeidelSolver : public Solver<T> {
 public:
  GaussSeidelSolver(SolverContext& ctx, const std::string& scope);

 protected:
  bool supports_distribution() const override { return true; }
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;

 private:
  T w_;
  Vector<T> wdinv_;  // w / a_ii
};

}  // namespace jaxamg
