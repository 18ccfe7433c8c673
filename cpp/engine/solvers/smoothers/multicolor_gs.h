// MULTICOLOR_GS: Gauss-Seidel in colour order. Rows of one colour share no
// coupling, so each colour is one parallel loop; a sweep visits the colours in
// order (and with symmetric_GS=1 then in reverse order, a symmetric GS sweep
// that keeps the smoother SPD for PCG). Each row update is
//   x_i <- x_i + w (b_i - sum_j a_ij x_j) / a_ii,  w = relaxation_factor.
// The colouring is built at setup and a values-only resetup keeps it. The
// sweeps read A in place through the colouring's row lists: a regrouped copy
// of A per level (values, columns and its index maps) would weigh more than
// the whole hierarchy of coarse operators; only w / a_ii is kept per row.
//
// For block_dim k > 1 it is block multicolour Gauss-Seidel: the nodes (k
// consecutive rows) are coloured, and each node update is
//   x_I <- x_I + w D_I^-1 (b_I - sum_J A_IJ x_J)
// with the k x k diagonal blocks D_I inverted at setup.
//
// The sweep is multicolor_methods.h's, on the CPU backend.
//
// On a matrix distributed over processes the colouring is valid across
// processes (coloring.h), so a colour's rows are updated on every process
// at once: before each colour the ghost values of x are exchanged, and the
// sweep is the serial multicolour Gauss-Seidel of the whole matrix with that
// colouring (the same iterates on any number of processes, for that
// colouring). That is one halo exchange per colour and sweep direction.
#pragma once
#include <memory>

#include "backend/cpu/vector_backend.h"
#include "solvers/smoothers/coloring.h"
#include "solvers/smoothers/multicolor_methods.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class MulticolorGSSolver : public Solver<T> {
 public:
  MulticolorGSSolver(SolverContext& ctx, const std::string& scope);
  // The colouring of the last setup (a copy: the solver keeps only the rows
  // grouped by colour, and forms the colour of each row here).
  smoothers::Coloring coloring() const;

  // What the device copies of a sweep read: the rows grouped by colour, the
  // colours' offsets, and the update's scaling (w / a_ii per row, or
  // w D_I^-1 per node of block_dim rows).
  const std::vector<Index>& color_rows() const { return coloring_.rows; }
  const std::vector<Index>& color_ptr() const { return coloring_.color_ptr; }
  const Vector<T>& scale() const { return scale_; }
  Index block_dim() const { return k_; }
  bool symmetric() const { return symmetric_; }

 protected:
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;
  bool supports_distribution() const override { return true; }

 private:
  using Backend = cpu::VectorBackend<T>;

  T w_;
  bool symmetric_;
  smoothers::Coloring coloring_;  // color left empty: rows and color_ptr are what a sweep reads
  Index k_ = 1;
  Vector<T> scale_;  // w / a_ii per row (block_dim 1), or w D_I^-1 per node, k*k each
  // The sweep of multicolor_methods.h on the CPU backend, made at setup.
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<MulticolorGSMethod<Backend>> sweep_;
};

}  // namespace jaxamg
