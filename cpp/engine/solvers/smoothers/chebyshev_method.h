// CHEBYSHEV's recurrence with a diagonal preconditioner M^-1 = S (the
// scaled inverse diagonal of JACOBI_L1 or BLOCK_JACOBI, or ones without a
// preconditioner), written once over a backend (the CPU backend, the CPU
// lanes backend, the CUDA backend). The host smoother (chebyshev.cc) and the
// batched node of several right-hand sides (batched/batched_smoothers.cc)
// run this same code, so a lane of a batch is a one-vector smoothing step
// for step. chebyshev.h describes the recurrence and its bounds.
//
// Each step is, with the coefficients of the step (shared by every lane:
// they depend only on the step number and the bounds),
//   p_k = S (b - A x_k) + beta_k p_{k-1},   x_{k+1} = x_k + alpha_k p_k.
// The residual is formed from x rather than carried by the recurrence
// r_{k+1} = r_k - alpha_k A p_k: the same memory traffic (x is read instead
// of p, and r is neither read nor written) with one vector instead of three.
// The backend provides the two row kernels: chebyshev_start (p = S b,
// x = alpha p: the first step from a zero guess, no product) and
// chebyshev_step (the residual row, the new direction and the new iterate
// in one pass over A, the iterate formed beside the old one because
// neighbouring rows still read it). The steps alternate between x and a
// scratch vector (alternate_steps), so a step reads and writes each vector
// once.
#pragma once
#include "solvers/smoothers/sweep_apply.h"

namespace jaxamg {

// alpha_k and beta_k of step k of the recurrence on [lmin, lmax], given
// alpha_{k-1} (also the coefficients of the CUDA cycle, device/).
inline void chebyshev_step_coefficients(double lmin, double lmax, int k, double alpha_prev,
                                        double* alpha, double* beta) {
  const double theta = 0.5 * (lmax + lmin);
  const double delta = 0.5 * (lmax - lmin);
  if (k == 0) {
    *alpha = 1 / theta;
    *beta = 0;
    return;
  }
  const double da = delta * alpha_prev;
  *beta = k == 1 ? 0.5 * da * da : 0.25 * da * da;
  *alpha = 1 / (theta - *beta / alpha_prev);
}

template <class Backend>
class ChebyshevMethod {
 public:
  using T = typename Backend::value_type;
  using Vec = typename Backend::vector_type;
  using Matrix = typename Backend::matrix_type;

  // `order` steps per iteration on [lmin, lmax]; A and s (S's entries)
  // belong to the caller and must outlive the method.
  ChebyshevMethod(Backend& be, const Matrix& A, const T* s, double lmin, double lmax, int order)
      : be_(be),
        A_(A),
        s_(s),
        lmin_(lmin),
        lmax_(lmax),
        order_(order),
        p_(be.make_vector()),
        q_(be.make_vector()) {}

  // Restarts the recurrence (Solver::solve_init). Further iterations of one
  // apply or solve continue it, as AmgX's CHEBYSHEV does: the polynomial
  // degree grows by `order` per iteration.
  void init() {
    step_ = 0;
    alpha_prev_ = 0;
  }

  // One iteration (Solver::solve_iteration): `order` steps.
  void iteration(const T* b, T* x, bool x_is_zero) { steps(b, x, x_is_zero, order_); }

  // `iterations` iterations from a restarted recurrence, as Solver::apply
  // runs them (x = 0 when none runs from a zero guess).
  void apply(const T* b, T* x, bool x_is_zero, int iterations) {
    if (iterations > 0) init();
    steps(b, x, x_is_zero, iterations * order_);
  }

 private:
  void steps(const T* b, T* x, bool x_is_zero, int count) {
    if (x_is_zero && step_ > 0 && count > 0) {
      // A continued recurrence keeps its direction: the step reads x = 0.
      be_.fill_zero(x);
      x_is_zero = false;
    }
    alternate_steps(be_, x, q_.data(), x_is_zero, count, [&](int k, const T* cur, T* out) {
      double alpha_d, beta_d;
      chebyshev_step_coefficients(lmin_, lmax_, step_, alpha_prev_, &alpha_d, &beta_d);
      const T alpha = static_cast<T>(alpha_d), beta = static_cast<T>(beta_d);
      if (k == 0 && x_is_zero) {
        be_.chebyshev_start(s_, b, alpha, p_.data(), out);
      } else {
        be_.chebyshev_step(A_, s_, b, alpha, beta, /*first=*/step_ == 0, p_.data(), cur, out);
      }
      alpha_prev_ = alpha_d;
      ++step_;
    });
  }

  Backend& be_;
  const Matrix& A_;
  const T* s_;
  double lmin_, lmax_;
  int order_;
  Vec p_;
  Vec q_;                  // the iterate's other copy
  int step_ = 0;           // recurrence step since init()
  double alpha_prev_ = 0;  // alpha_{step_ - 1}
};

}  // namespace jaxamg
