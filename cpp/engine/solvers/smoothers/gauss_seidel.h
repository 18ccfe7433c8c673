// GS: sequential forward Gauss-Seidel weighted by w = relaxation_factor,
//   x_i <- x_i + w (b_i - sum_j a_ij x_j) / a_ii,  i = 0, 1, ..., n-1,
// in place, as AmgX's host GS. It is inherently sequential; for a parallel
// sweep use MULTICOLOR_GS. Like AmgX's GS it reads only relaxation_factor
// (symmetric_GS is a MULTICOLOR_GS parameter). On a distributed matrix it
// is hybrid Gauss-Seidel: sequential within the process's rows, Jacobi
// across process boundaries (ghost values are those before the sweep).
//
// For block_dim k > 1 it is block Gauss-Seidel: node by node,
//   x_I <- x_I + w D_I^-1 (b_I - sum_J A_IJ x_J),
// with the k x k diagonal blocks D_I inverted once at setup.
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
  void block_sweep(const T* b, T* x, bool x_is_zero);

  T w_;
  Index k_ = 1;
  Vector<T> wdinv_;  // block_dim 1: w / a_ii
  Vector<T> binv_;   // block_dim k > 1: w D_I^-1 per node, k*k each
};

}  // namespace jaxamg
