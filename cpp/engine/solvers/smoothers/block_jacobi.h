// BLOCK_JACOBI: damped block Jacobi, x <- x + w D^-1 (b - A x), where D is the
// block diagonal of A. For a scalar matrix (block_dim 1) the blocks are the
// entries a_ii; for block_dim k > 1 the k x k diagonal blocks are inverted
// once at setup (a singular block throws InvalidInput naming its node).
#pragma once
#include <memory>

#include "backend/cpu/vector_backend.h"
#include "solvers/smoothers/common.h"
#include "solvers/smoothers/diagonal_sweep_method.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class BlockJacobiSolver : public Solver<T>, public DiagonalScaling<T> {
 public:
  BlockJacobiSolver(SolverContext& ctx, const std::string& scope);
  T relaxation_factor() const { return w_; }
  // For block_dim > 1: the diagonal of w D^-1 (a point approximation of the
  // block inverse, for CHEBYSHEV's scaling).
  const Vector<T>& scaled_inverse_diagonal() const override { return dinv_; }
  Index block_dim() const { return k_; }
  // w D_I^-1, row-major k x k, of node I (block_dim > 1 only).
  const T* scaled_block_inverse(Index node) const { return binv_.data() + node * k_ * k_; }
  // Every node's w D_I^-1 (block_dim > 1 only), for the device copies.
  const Vector<T>& scaled_block_inverses() const { return binv_; }

 protected:
  bool supports_distribution() const override { return true; }
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;

 private:
  using Backend = cpu::VectorBackend<T>;

  T w_;
  Index k_ = 1;
  Vector<T> dinv_;  // w / a_ii: the damping is folded in at setup
  Vector<T> binv_;  // block_dim > 1: w D_I^-1 per node, k*k each
  // The sweep of diagonal_sweep_method.h on the CPU backend: by row for
  // block_dim 1, by node otherwise.
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<DiagonalSweepMethod<Backend>> sweep_;
  std::unique_ptr<BlockJacobiSweepMethod<Backend>> block_sweep_;
};

}  // namespace jaxamg
