// MULTICOLOR_GS: Gauss-Seidel in colour order. Rows of one colour share no
// coupling, so each colour is one parallel loop; a sweep visits the colours in
// order (and with symmetric_GS=1 then in reverse order, a symmetric GS sweep
// that keeps the smoother SPD for PCG). Each row update is
//   x_i <- x_i + w (b_i - sum_j a_ij x_j) / a_ii,  w = relaxation_factor.
// The colouring is built at setup and a values-only resetup keeps it. The
// sweeps read A in place through the colouring's row lists: a regrouped copy
// of A per level (values, columns and its index maps) would weigh more than
// the whole hierarchy of coarse operators.
//
// For block_dim k > 1 it is block multicolour Gauss-Seidel: the nodes (k
// consecutive rows) are coloured, and each node update is
//   x_I <- x_I + w D_I^-1 (b_I - sum_J A_IJ x_J)
// with the k x k diagonal blocks D_I inverted at setup.
//
// On a matrix distributed over processes the colouring is valid across
// processes (coloring.h), so a colour's rows are updated on every process
// at once: before each colour the ghost values of x are exchanged, and the
// sweep is the serial multicolour Gauss-Seidel of the whole matrix with that
// colouring (the same iterates on any number of processes, for that
// colouring). That is one halo exchange per colour and sweep direction.
#pragma once
#include "solvers/smoothers/coloring.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class MulticolorGSSolver : public Solver<T> {
 public:
  MulticolorGSSolver(SolverContext& ctx, const std::string& scope);
  // The colouring of the last setup (a copy: the solver keeps only the rows
  // grouped by colour, and forms the colour of each row here).
  smoothers::Coloring coloring() const;

 protected:
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;
  bool supports_distribution() const override { return true; }

 private:
  // The block update of the node whose k rows start at row `first`.
  // Ghost column c >= n reads ghost[c - n] (nullptr on one process).
  void relax_node(Index first, const T* b, T* x, const T* ghost) const;
  // The sweep on a distributed matrix: a halo exchange before each colour.
  void distributed_sweep(const T* b, T* x, bool x_is_zero);

  T w_;
  bool symmetric_;
  smoothers::Coloring coloring_;  // color left empty: rows and color_ptr are what a sweep reads
  static constexpr Index kMaxStackBlock = 8;  // node residuals up to this size stay on the stack
  Index k_ = 1;
  Vector<T> binv_;  // block_dim k > 1: w D_I^-1 per node (by node index), k*k each
};

}  // namespace jaxamg
