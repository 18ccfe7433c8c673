// BLOCK_JACOBI: damped Jacobi, x <- x + w D^-1 (b - A x). Scalar matrices
// only for now (block_dim 1), where the diagonal "blocks" are the entries a_ii.
#pragma once
#include "solvers/smoothers/common.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class BlockJacobiSolver : public Solver<T>, public DiagonalScaling<T> {
 public:
  BlockJacobiSolver(SolverContext& ctx, const std::string& scope);
  T relaxation_factor() const { return w_; }
  const Vector<T>& scaled_inverse_diagonal() const override { return dinv_; }

 protected:
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;

 private:
  T w_;
  Vector<T> dinv_;  // w / a_ii: the damping is folded in at setup
  Vector<T> next_;  // the new iterate, copied back to x after the sweep
};

}  // namespace jaxamg
