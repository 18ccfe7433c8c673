// MULTICOLOR_DILU: diagonal ILU in colour order. With L and U the parts of A
// coupling a row to earlier and later colours,
//   M = (E + L) E^-1 (E + U),   e_i = a_ii - sum_{j earlier} a_ij a_ji / e_j,
// so that diag(M) = diag(A). Only E is stored (one extra vector); the
// triangular solves read A's own entries. A sweep is
//   x <- x + w M^-1 (b - A x),  w = relaxation_factor,
// with the residual computed inside the forward solve (one pass over A) and
// the update inside the backward solve. Each colour is one parallel loop:
// the sweep is multicolor_methods.h's, on the CPU backend.
//
// On a matrix distributed over processes M is block diagonal, one block per
// process: each process colours and factors its owned block (the couplings
// to ghost columns dropped from E, L and U), and a sweep forms b - A x with
// the halo-exchanged ghost values of x (the ghost couplings enter as in a
// Jacobi step), then applies its block's M^-1 without further
// communication. One halo exchange per sweep, and the same sweep on one
// process as before; the preconditioner weakens with the number of
// processes (AmgX instead exchanges the earlier colours' contributions to
// E and the triangular solves' values per colour).
#pragma once
#include <memory>

#include "backend/cpu/vector_backend.h"
#include "solvers/smoothers/coloring.h"
#include "solvers/smoothers/multicolor_methods.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class MulticolorDILUSolver : public Solver<T> {
 public:
  MulticolorDILUSolver(SolverContext& ctx, const std::string& scope);
  const smoothers::Coloring& coloring() const { return coloring_; }

  // The factors the sweep reads (host memory; the colour offsets are
  // coloring().color_ptr), for the device copies.
  backend::DiluFactors<T> factors() const;
  T relaxation_factor() const { return w_; }
  const smoothers::ColorSplit& split() const { return split_; }
  const Vector<T>& split_values() const { return val_; }
  const Vector<T>& inverse_diagonal() const { return einv_; }

 protected:
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;
  bool supports_distribution() const override { return true; }

 private:
  using Backend = cpu::VectorBackend<T>;

  T w_;
  CsrMatrix<T> own_;  // distributed: the owned block that is coloured and factored
  Vector<T> res_;     // distributed: the residual, then the correction
  smoothers::Coloring coloring_;
  smoothers::ColorSplit split_;
  std::vector<Index> transposed_;  // split position of a_ji for each a_ij, or -1
  Vector<T> val_;                  // A's values in split order
  Vector<T> einv_;                 // 1 / e_i, by colour position
  // The sweep of multicolor_methods.h on the CPU backend, made at setup.
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<MulticolorDILUMethod<Backend>> sweep_;
};

}  // namespace jaxamg
