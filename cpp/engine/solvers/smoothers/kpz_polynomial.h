// KPZ_POLYNOMIAL and POLYNOMIAL: polynomial smoothers x <- x + q(B) S r,
// r = b - A x, after Kraus, Vassilevski and Zikatanov ("Polynomial of best
// uniform approximation to 1/x and smoothing in two-level methods", 2012):
// q of degree p - 1 approximates 1/lambda on [lambda_max / mu, lambda_max].
// With mu0 = 1 / lambda_max, mu1 = mu / lambda_max,
//   delta = (sqrt(mu) - 1) / (sqrt(mu) + 1),  beta = (sqrt(mu0) + sqrt(mu1))^2,
//   chi = 4 mu0 mu1 / beta,
// one iteration is (as AmgX's KPZ_POLYNOMIAL):
//   s0 = S r;  v0 = (mu0 + mu1) / 2 s0;  v = beta / 2 s0 - mu0 mu1 B s0;
//   p - 1 times:  d = chi (s0 - B v) + delta^2 (v - v0);  v0 = v;  v = v + d;
//   x = x + v.
//
// KPZ_POLYNOMIAL: B = A, S = I, lambda_max = max_j sum_i |a_ij| (the largest
// column sum, as AmgX), mu = kpz_mu (> 1), p = kpz_order (>= 1). Serial only.
// POLYNOMIAL: the Jacobi-scaled form, B = D^-1 A, S = D^-1 (D the diagonal,
// pointwise also for block rows), lambda_max = max_i sum_j |a_ij| / |a_ii| (a
// Gershgorin bound of D^-1 A), mu = 4 and p = kpz_order (0 means 6), as
// AmgX's POLYNOMIAL, which does not read kpz_mu. AmgX's device code adds the
// mu0 mu1 B s0 term instead of subtracting it and counts the diagonal twice
// in its bound; both are taken here as in the recurrence above. POLYNOMIAL
// runs on matrices distributed over processes.
#pragma once
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class KpzPolynomialSolver : public Solver<T> {
 public:
  // `jacobi_scaled`: POLYNOMIAL; otherwise KPZ_POLYNOMIAL.
  KpzPolynomialSolver(SolverContext& ctx, const std::string& scope, bool jacobi_scaled);

 protected:
  bool supports_distribution() const override { return jacobi_scaled_; }
  void solver_setup(bool reuse_structure) override;
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;

 private:
  // y = S B x (= D^-1 A x or A x).
  void scaled_product(const T* x, T* y) const;

  bool jacobi_scaled_;
  int degree_;
  double mu_;
  double mu0_ = 0, mu1_ = 0, delta_ = 0, beta_ = 0, chi_ = 0;
  Vector<T> dinv_;  // POLYNOMIAL: 1 / a_ii
  Vector<T> s0_, v_, v0_, t_;
};

}  // namespace jaxamg
