#include "solvers/smoothers/kpz_polynomial.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"
#include "solvers/smoothers/common.h"

namespace jaxamg {

template <class T>
KpzPolynomialSolver<T>::KpzPolynomialSolver(SolverContext& ctx, const std::string& scope,
                                            bool jacobi_scaled)
    : Solver<T>(ctx, scope, jacobi_scaled ? "POLYNOMIAL" : "KPZ_POLYNOMIAL"),
      jacobi_scaled_(jacobi_scaled) {
  const int order = this->param_int("kpz_order");
  degree_ = (jacobi_scaled && order == 0) ? 6 : order;
  if (degree_ < 1) {
    throw ConfigError("kpz_order = " + std::to_string(order) + " (scope '" + scope + "', " +
                      this->name_ + ") must be at least 1");
  }
  mu_ = jacobi_scaled ? 4.0 : static_cast<double>(this->param_int("kpz_mu"));
  if (!(mu_ > 1)) {
    throw ConfigError("kpz_mu = " + std::to_string(this->param_int("kpz_mu")) + " (scope '" +
                      scope + "', KPZ_POLYNOMIAL) must be greater than 1: the smoother "
                      "approximates 1/x on [lambda_max / kpz_mu, lambda_max]");
  }
}

template <class T>
void KpzPolynomialSolver<T>::solver_setup(bool /*reuse_structure*/) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  double lambda_max = 0;
  if (jacobi_scaled_) {
    smoothers::inverse_diagonal(A, "POLYNOMIAL smoother", dinv_);
    std::vector<T> bound(static_cast<std::size_t>(n));
    for (Index i = 0; i < n; ++i) {
      double s = 0;
      for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) s += std::abs(double(A.val[k]));
      bound[i] = static_cast<T>(s * std::abs(double(dinv_[i])));
    }
    lambda_max = this->global_norm(bound.size(), bound.data(), NormType::kLMax);
  } else {
    dinv_.clear();
    std::vector<double> column_sum(static_cast<std::size_t>(A.ncols), 0.0);
    for (Index k = 0; k < A.row_ptr[n]; ++k) column_sum[A.col[k]] += std::abs(double(A.val[k]));
    for (double s : column_sum) lambda_max = std::max(lambda_max, s);
  }
  if (!(lambda_max > 0) || !std::isfinite(lambda_max)) {
    throw InvalidInput(this->name_ + " smoother: the matrix has no nonzero entry to bound "
                       "its spectrum (lambda_max = " + std::to_string(lambda_max) + ")");
  }
  mu0_ = 1.0 / lambda_max;
  mu1_ = mu_ / lambda_max;
  delta_ = (std::sqrt(mu_) - 1) / (std::sqrt(mu_) + 1);
  beta_ = (std::sqrt(mu0_) + std::sqrt(mu1_)) * (std::sqrt(mu0_) + std::sqrt(mu1_));
  chi_ = 4 * mu0_ * mu1_ / beta_;
  for (Vector<T>* w : {&s0_, &v_, &v0_, &t_}) w->assign(static_cast<std::size_t>(n), T(0));
}

template <class T>
void KpzPolynomialSolver<T>::scaled_product(const T* x, T* y) const {
  this->matvec(x, y);
  if (!jacobi_scaled_) return;
  const Index n = this->rows();
  for (Index i = 0; i < n; ++i) y[i] *= dinv_[i];
}

template <class T>
IterationResult KpzPolynomialSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  const Index n = this->rows();
  T* s0 = s0_.data();
  T* v = v_.data();
  T* v0 = v0_.data();
  T* t = t_.data();
  if (x_is_zero) {
    std::fill(x, x + n, T(0));
    std::copy(b, b + n, s0);
  } else {
    this->residual_of(x, b, s0);
  }
  if (jacobi_scaled_) {
    for (Index i = 0; i < n; ++i) s0[i] *= dinv_[i];
  }
  const T half_sum = static_cast<T>((mu0_ + mu1_) / 2), half_beta = static_cast<T>(beta_ / 2);
  const T product = static_cast<T>(mu0_ * mu1_), chi = static_cast<T>(chi_);
  const T delta2 = static_cast<T>(delta_ * delta_);
  scaled_product(s0, t);
  for (Index i = 0; i < n; ++i) {
    v0[i] = half_sum * s0[i];
    v[i] = half_beta * s0[i] - product * t[i];
  }
  for (int step = 1; step < degree_; ++step) {
    scaled_product(v, t);
    for (Index i = 0; i < n; ++i) {
      const T d = chi * (s0[i] - t[i]) + delta2 * (v[i] - v0[i]);
      v0[i] = v[i];
      v[i] += d;
    }
  }
  for (Index i = 0; i < n; ++i) x[i] += v[i];
  return IterationResult::kContinue;
}

template class KpzPolynomialSolver<float>;
template class KpzPolynomialSolver<double>;

}  // namespace jaxamg
