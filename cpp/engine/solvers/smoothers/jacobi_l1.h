// JACOBI_L1: l1-Jacobi, x <- x + w D_l1^-1 (b - A x) with
//   d_i = sign(a_ii) * sum_j |a_ij|   (diagonal included),
// which for a positive diagonal is hypre's a_ii + sum_{j != i} |a_ij|. The
// sign follows the diagonal (AmgX flips it for a negative diagonal so that a
// negated SPD matrix still smooths). D_l1 - A is diagonally dominant, so for
// an SPD matrix the sweep converges without damping; w = relaxation_factor
// (AmgX default 0.9; 0 reads as 1). No diagonal is required, but an all-zero
// row is rejected.
#pragma once
#include <memory>

#include "backend/cpu/vector_backend.h"
#include "solvers/smoothers/common.h"
#include "solvers/smoothers/diagonal_sweep_method.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class JacobiL1Solver : public Solver<T>, public DiagonalScaling<T> {
 public:
  JacobiL1Solver(SolverContext& ctx, const std::string& scope);
  T relaxation_factor() const { return w_; }
  const Vector<T>& scaled_inverse_diagonal() const override { return dinv_; }

 protected:
  bool supports_distribution() const override { return true; }
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;

 private:
  using Backend = cpu::VectorBackend<T>;

  T w_;
  Vector<T> dinv_;  // w / d_i
  // The sweep of diagonal_sweep_method.h on the CPU backend, made at setup.
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<DiagonalSweepMethod<Backend>> sweep_;
};

}  // namespace jaxamg
