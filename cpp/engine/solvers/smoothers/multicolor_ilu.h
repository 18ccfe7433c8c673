// MULTICOLOR_ILU: ILU(0) of A in colour order (rows sorted by colour). With
// that ordering the rows of one colour are uncoupled in L and in U, so both
// triangular solves are one parallel loop per colour. The factors keep A's
// pattern, stored in the colour-split layout: each row holds its L part
// (earlier colours, unit diagonal implied), its U diagonal and its U part.
// A sweep is x <- x + w (LU)^-1 (b - A x), w = relaxation_factor (AmgX's
// default 0.9; 0 reads as 1, as in AmgX), with the residual formed inside the
// forward solve. The sweep is multicolor_methods.h's, on the CPU backend.
//
// ILU(0) in colour order is not the natural-order ILU(0): eliminating a row
// whose neighbours come later drops fill between them (for a tridiagonal
// matrix red-black ordering drops the fill (i-1, i+1)), so even a
// tridiagonal matrix is not solved exactly unless its elimination creates
// no fill. Only ilu_sparsity_level 0 is implemented.
//
// On a matrix distributed over processes the factorisation is block
// diagonal, one block per process, as for MULTICOLOR_DILU: each process
// colours and factors its owned block (ghost couplings dropped), and a
// sweep forms b - A x with the halo-exchanged ghost values of x, then
// solves with its own factors. One halo exchange per sweep.
#pragma once
#include <memory>

#include "backend/cpu/vector_backend.h"
#include "solvers/smoothers/coloring.h"
#include "solvers/smoothers/multicolor_methods.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class MulticolorILUSolver : public Solver<T> {
 public:
  MulticolorILUSolver(SolverContext& ctx, const std::string& scope);
  const smoothers::Coloring& coloring() const { return coloring_; }

  // The factors the sweep reads (host memory; the colour offsets are
  // coloring().color_ptr), for the device copies.
  backend::IluFactors<T> factors() const;
  T relaxation_factor() const { return w_; }
  const smoothers::ColorSplit& split() const { return split_; }
  const Vector<T>& split_values() const { return val_; }
  const Vector<T>& factor_values() const { return lu_; }
  const Vector<T>& inverse_diagonal() const { return udinv_; }

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
  Vector<T> val_;    // A's values in split layout (for the residual)
  Vector<T> lu_;     // the factors in split layout: L part (unit diagonal
                     // implied), U's diagonal, U part
  Vector<T> udinv_;  // 1 / u_ii, by colour position
  // The sweep of multicolor_methods.h on the CPU backend, made at setup.
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<MulticolorILUMethod<Backend>> sweep_;
};

}  // namespace jaxamg
