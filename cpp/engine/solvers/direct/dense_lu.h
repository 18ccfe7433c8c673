// DENSE_LU_SOLVER: LU factorisation with partial pivoting of the whole
// (level) matrix stored dense, P A = L U, then two triangular solves per
// solve. As in AmgX it forces max_iters = 1 and always reports convergence;
// it is the default coarse solver of AMG.
//
// The factorisation is blocked (right-looking, panels of kPanel columns):
// each panel is factored in a column-major copy, the block row of U is a
// unit-triangular solve, and the trailing matrix is updated by a packed,
// register-blocked product (dense_kernels.h), which does nearly all the
// flops. A pivot below n * eps * max|a_ij| is treated as zero and raises
// SetupError naming the pivot -- unless the config declares a singular
// system (x_singular_system = 1, set by jaxamg.solve for a declared null
// space): then the pivot is pinned to max|a_ij|, which solves the system on
// the complement of the zero directions (a right-hand side in the range gets
// an exact solution whose pinned components are zero), and AMG's coarsest
// level of a singular problem keeps its exact coarse solve.
//
// On a matrix distributed over processes it gathers the whole system on
// rank 0 (Distribution::gather_system, the code with which the distributed
// AMG consolidates its coarsest level): the matrix once at setup, where
// rank 0 factors it, and the right-hand side at each solve, whose solution
// rank 0 scatters back. Memory and time are those of the serial solver on
// rank 0; the other processes wait.
#pragma once
#include <memory>
#include <vector>

#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class DenseLUSolver : public Solver<T> {
 public:
  DenseLUSolver(SolverContext& ctx, const std::string& scope);
  // The factors (row-major n x n, L unit below the diagonal, U on and
  // above) and the row swaps, in the order solve_iteration applies them.
  Index size() const { return n_; }
  const std::vector<T>& factors() const { return lu_; }
  const std::vector<Index>& pivots() const { return piv_; }
  // Pivots pinned by the last factorisation (x_singular_system).
  Index pinned_pivots() const { return pinned_; }
  // Forward and back substitution of x = A^-1 b on the factors (size()
  // entries, x may be b): the whole solve on one process, and what the
  // batched solves of several right-hand sides run lane by lane.
  void substitute(const T* b, T* x) const;

 protected:
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;
  bool supports_distribution() const override { return true; }

 private:
  void factor();

  Index n_ = 0;
  std::vector<T> lu_;      // row-major n x n: L below the diagonal (unit), U on and above
  std::vector<Index> piv_; // row i was swapped with piv_[i] at step i
  bool pin_zero_pivots_ = false;
  Index pinned_ = 0;
  // Distributed: the system gathered on rank 0 (which alone factors it) and
  // the whole b and x there.
  std::unique_ptr<GatheredSystem<T>> gathered_;
  std::vector<T> gb_, gx_;
};

}  // namespace jaxamg
