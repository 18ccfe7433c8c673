// CHEBYSHEV and CHEBYSHEV_POLY: Chebyshev polynomial smoothing of the
// preconditioned operator B = M^-1 A.
//
// One iteration ("sweep") applies `chebyshev_polynomial_order` steps of the
// three-term Chebyshev recurrence for the interval [lmin, lmax]
// (theta = (lmax + lmin) / 2, delta = (lmax - lmin) / 2):
//   alpha_0 = 1/theta, p_0 = z_0;
//   beta_1 = (delta alpha_0)^2 / 2, beta_k = (delta alpha_{k-1} / 2)^2 (k >= 2),
//   alpha_k = 1 / (theta - beta_k / alpha_{k-1}), p_k = z_k + beta_k p_{k-1};
//   x_{k+1} = x_k + alpha_k p_k,   z_k = M^-1 (b - A x_k),
// so that after one sweep from x_0 the error is T_s((theta - B)/delta) /
// T_s(theta/delta) e_0 with s the order. As in AmgX's CHEBYSHEV, further
// sweeps of one apply/solve continue the recurrence (the polynomial degree
// grows by s per sweep) rather than restart it.
//
// M is the `preconditioner` of the scope when one is set there:
//  * BLOCK_JACOBI or JACOBI_L1: M^-1 = w D^-1 (one sweep from zero: D the
//    diagonal or the l1 row norm, w its relaxation_factor). Each step is
//    then one pass forming the residual from x and the new direction, and
//    one updating x, with the direction as the only work vector.
//  * any other solver: one apply() from a zero guess per step.
// Without a preconditioner set, M = I. (AmgX's registered default would be
// a nested AMG, which is never what a smoother wants.)
//
// Eigenvalue bounds, chebyshev_lambda_estimate_mode:
//  0: 10 Lanczos steps on B (symmetrised as S^1/2 A S^1/2 for a diagonal
//     M^-1 = S > 0): lmax = 1.1 * largest Ritz value capped by the row-sum
//     bound of mode 2, lmin = 0.95 * smallest Ritz value. (AmgX multiplies
//     by 1.05 the result of a long power iteration; ten Lanczos steps can be
//     a few percent low on clustered spectra, hence the larger margin.)
//  1: the same lmax, lmin = lmax / 8.
//  2: lmax = max_i sum_j |B_ij| (a Gershgorin bound, cheap and safe),
//     lmin = lmax / 8. AmgX instead hard-codes lmax = 0.9 when a
//     preconditioner is present; with JACOBI_L1 at its default w = 0.9 the
//     bound is exactly 0.9 too. For a non-diagonal preconditioner the bound
//     is not available and 0.9 is used, as in AmgX.
//  3: cheby_max_lambda / cheby_min_lambda with a preconditioner; without one,
//     as mode 2 (as in AmgX).
// For a non-diagonal preconditioner or a diagonal with a non-positive entry,
// modes 0 and 1 use 15 power iterations (lmax = 1.1 * estimate, lmin =
// lmax / 8). A non-positive lmin estimate is replaced by lmax / 8.
//
// CHEBYSHEV_POLY is the same smoother with the bounds of mode 2 whatever
// chebyshev_lambda_estimate_mode says, and the order clamped to [1, 10] as
// AmgX does. AmgX's own CHEBYSHEV_POLY differs: it ignores the preconditioner,
// uses a product of damped Richardson steps on [0, lmax] of unscaled A, and
// is GPU-only.
#pragma once
#include <memory>

#include "backend/cpu/vector_backend.h"
#include "solvers/smoothers/chebyshev_method.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class ChebyshevSolver : public Solver<T> {
 public:
  // `poly`: CHEBYSHEV_POLY semantics (see above).
  ChebyshevSolver(SolverContext& ctx, const std::string& scope, bool poly);
  double lambda_max() const { return lmax_; }
  double lambda_min() const { return lmin_; }
  int order() const { return order_; }
  // The diagonal M^-1 of the recurrence, or nullptr when M is applied as a
  // solver (non-diagonal preconditioner).
  const T* diagonal_scale() const { return diagonal_ ? scale() : nullptr; }
  // alpha_k and beta_k of recurrence step k, given alpha_{k-1}.
  void step_coefficients(int k, double alpha_prev, double* alpha, double* beta) const;
  // The bounds when the config fixes them (mode 3 with a preconditioner):
  // known before setup. False otherwise.
  bool configured_bounds(double* lmin, double* lmax) const;
  // The preconditioner M (nullptr: M = I); set up with the smoother.
  const Solver<T>* preconditioner() const { return prec_.get(); }

 protected:
  bool supports_distribution() const override { return true; }
  void solver_setup(bool reuse_structure) override;
  void solve_init(const T* b, T* x, bool x_is_zero) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;
  // AmgX counts CHEBYSHEV among the Krylov methods (SUCCESS after max_iters
  // without monitoring) and CHEBYSHEV_POLY among the smoothers.
  bool is_krylov() const override { return !poly_; }

 private:
  void estimate_bounds();
  bool lanczos(double* ritz_min, double* ritz_max) const;
  double power_iteration() const;
  double row_sum_bound() const;
  void apply_operator(const double* v, double* out, std::vector<T>& tv,
                      std::vector<T>& tout) const;
  void step_generic(int k, const T* b, T* x, bool x_is_zero);
  // Recurrence coefficients of step k (alpha_k, beta_k).
  void coefficients(int k, double* alpha, double* beta) const;

  bool poly_;
  int order_;
  int mode_;
  double user_max_ = 0, user_min_ = 0;
  std::unique_ptr<Solver<T>> prec_;
  bool diagonal_ = true;  // M^-1 is the diagonal scale() (identity if no preconditioner)
  // The diagonal M^-1: the preconditioner's own vector when it has one (not
  // copied), else scale_ (ones).
  const T* scale() const { return prec_diag_ ? prec_diag_->data() : scale_.data(); }
  const Vector<T>* prec_diag_ = nullptr;
  Vector<T> scale_;
  double lmax_ = 0, lmin_ = 0;
  // A diagonal M: the recurrence of chebyshev_method.h on the CPU backend,
  // made at setup once the bounds are known.
  using Backend = cpu::VectorBackend<T>;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<ChebyshevMethod<Backend>> method_;
  // A non-diagonal M: the generic recurrence's vectors and state.
  Vector<T> res_, p_, z_;
  int step_ = 0;           // recurrence step since solve_init
  double alpha_prev_ = 0;  // alpha_{step_-1}
};

}  // namespace jaxamg
