#include "solvers/smoothers/chebyshev.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "backend/cpu/blas.h"
#include "core/error.h"
#include "core/format.h"
#include "solvers/smoothers/common.h"

namespace jaxamg {

namespace {

constexpr int kLanczosSteps = 10;
constexpr int kPowerSteps = 15;

// Number of eigenvalues below x of the symmetric tridiagonal matrix with
// diagonal a and off-diagonal b (Sturm sequence).
int sturm_count(const std::vector<double>& a, const std::vector<double>& b, double x) {
  int count = 0;
  double d = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    d = a[i] - x - (i > 0 ? b[i - 1] * b[i - 1] / d : 0.0);
    if (d == 0) d = -1e-300;  // x hit an eigenvalue of a leading block: nudge
    if (d < 0) ++count;
  }
  return count;
}

// The k-th smallest eigenvalue (k = 0, 1, ...) by bisection.
double tridiagonal_eigenvalue(const std::vector<double>& a, const std::vector<double>& b, int k) {
  double lo = a[0], hi = a[0];
  for (size_t i = 0; i < a.size(); ++i) {
    const double r = (i > 0 ? std::abs(b[i - 1]) : 0.0) + (i < b.size() ? std::abs(b[i]) : 0.0);
    lo = std::min(lo, a[i] - r);
    hi = std::max(hi, a[i] + r);
  }
  for (int it = 0; it < 200 && hi - lo > 1e-15 * std::max(std::abs(lo), std::abs(hi)); ++it) {
    const double mid = 0.5 * (lo + hi);
    if (sturm_count(a, b, mid) > k) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return 0.5 * (lo + hi);
}

// Entries offset .. offset + n - 1 of one fixed random sequence, so that a
// distributed matrix (offset: the process's first global row) starts from
// the same vector as the serial one.
std::vector<double> start_vector(Index n, int64_t offset = 0) {
  std::mt19937 gen(20240917u);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  for (int64_t i = 0; i < offset; ++i) dist(gen);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

// <x, y>, summed over the processes when `reduce` is set.
double dot(const std::vector<double>& x, const std::vector<double>& y, const Reducer* reduce) {
  double d = cpu::dot(x.size(), x.data(), y.data());
  if (reduce) reduce->sum(&d, 1);
  return d;
}

// body(i) for i in [0, n), in parallel above the smoothers' threshold.
template <class Body>
void for_rows(Index n, Body&& body) {
  if (n <= smoothers::kParallelRows) {
    for (Index i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) body(i);
}

}  // namespace

template <class T>
ChebyshevSolver<T>::ChebyshevSolver(SolverContext& ctx, const std::string& scope, bool poly)
    : Solver<T>(ctx, scope, poly ? "CHEBYSHEV_POLY" : "CHEBYSHEV"), poly_(poly) {
  order_ = this->param_int("chebyshev_polynomial_order");
  if (poly_) {
    order_ = std::min(10, std::max(order_, 1));
    mode_ = 2;
  } else {
    if (order_ < 1) {
      throw ConfigError("CHEBYSHEV: chebyshev_polynomial_order = " + std::to_string(order_) +
                        " in scope '" + scope + "'; the polynomial needs order >= 1 (e.g. 2-5)");
    }
    mode_ = this->param_int("chebyshev_lambda_estimate_mode");
    if (mode_ < 0 || mode_ > 3) {
      throw ConfigError("CHEBYSHEV: chebyshev_lambda_estimate_mode = " + std::to_string(mode_) +
                        " in scope '" + scope + "'; valid: 0 (Lanczos, both bounds), 1 (Lanczos "
                        "lmax, lmin = lmax/8), 2 (row-sum bound), 3 (cheby_max_lambda and "
                        "cheby_min_lambda)");
    }
  }
  if (this->ctx_.config.is_set("preconditioner", scope)) {
    prec_ = this->create_child("preconditioner");
  }
  if (mode_ == 3 && prec_) {
    user_max_ = this->param_double("cheby_max_lambda");
    user_min_ = this->param_double("cheby_min_lambda");
    if (!(user_min_ > 0 && user_max_ > user_min_)) {
      throw ConfigError("CHEBYSHEV: cheby_min_lambda = " + format_number(user_min_) +
                        " and cheby_max_lambda = " + format_number(user_max_) + " in scope '" +
                        scope + "' do not bound an interval 0 < min < max; give the spectrum "
                        "bounds of the preconditioned matrix, e.g. 0.07 and 0.92");
    }
  }
}

template <class T>
void ChebyshevSolver<T>::solver_setup(bool reuse_structure) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  // Dropped first: a setup that throws must not leave a recurrence of the
  // previous matrix behind.
  method_.reset();
  backend_.reset();
  diagonal_ = true;
  prec_diag_ = nullptr;
  Vector<T>().swap(scale_);
  if (prec_) {
    prec_->setup(this->A_, reuse_structure);
    if (auto* d = dynamic_cast<const DiagonalScaling<T>*>(prec_.get())) {
      prec_diag_ = &d->scaled_inverse_diagonal();
    } else {
      diagonal_ = false;
      z_.resize(n);
    }
  } else {
    scale_.assign(n, T(1));
  }
  estimate_bounds();
  // The diagonal recurrence keeps only its direction (the residual is
  // formed from x in the same pass); the generic one also needs r and z.
  if (diagonal_) {
    Vector<T>().swap(res_);
    Vector<T>().swap(p_);
    backend_ = std::make_unique<Backend>(static_cast<std::size_t>(n), 1, nullptr);
    method_ = std::make_unique<ChebyshevMethod<Backend>>(*backend_, A, scale(), lmin_, lmax_,
                                                         order_);
  } else {
    res_.resize(n);
    p_.resize(n);
  }
}

template <class T>
void ChebyshevSolver<T>::apply_operator(const double* v, double* out, std::vector<T>& tv,
                                        std::vector<T>& tout) const {
  // out = M^-1 A v, through the value type (setup only).
  const Index n = this->A_->nrows;
  for (Index i = 0; i < n; ++i) tv[i] = static_cast<T>(v[i]);
  this->matvec(tv.data(), tout.data());
  if (diagonal_) {
    const T* sc = scale();
    for (Index i = 0; i < n; ++i) out[i] = static_cast<double>(sc[i]) * tout[i];
  } else {
    prec_->apply(tout.data(), tv.data(), true, 1);
    for (Index i = 0; i < n; ++i) out[i] = tv[i];
  }
}

template <class T>
bool ChebyshevSolver<T>::lanczos(double* ritz_min, double* ritz_max) const {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  if (!diagonal_) return false;
  // B = S A with S > 0 is similar to the symmetric C = S^1/2 A S^1/2.
  const T* sc = scale();
  std::vector<double> sq(n);
  bool positive = true;
  for (Index i = 0; i < n && positive; ++i) {
    positive = sc[i] > T(0);
    sq[i] = std::sqrt(static_cast<double>(sc[i]));
  }
  const Distribution<T>* distr = A.dist.get();
  // Every process must take the same branch.
  if (distr) positive = distr->max(positive ? 0.0 : 1.0) == 0.0;
  if (!positive) return false;
  std::vector<double> v = start_vector(n, distr ? distr->row_start() : 0), v_prev(n, 0.0), w(n);
  std::vector<T> tv, tout;
  if (distr) {
    tv.resize(n);
    tout.resize(n);
  }
  const double nv = std::sqrt(dot(v, v, distr));
  for (double& x : v) x /= nv;
  std::vector<double> alpha, beta;
  const int64_t global_n = distr ? distr->global_rows() : n;
  const int m = static_cast<int>(std::min<int64_t>(kLanczosSteps, global_n));
  for (int j = 0; j < m; ++j) {
    const double b_prev = beta.empty() ? 0.0 : beta.back();
    if (distr) {
      // The product needs ghost values: go through the value type.
      for (Index i = 0; i < n; ++i) tv[i] = static_cast<T>(sq[i] * v[i]);
      distr->spmv(A, tv.data(), tout.data());
      for (Index i = 0; i < n; ++i) w[i] = sq[i] * static_cast<double>(tout[i]) - b_prev * v_prev[i];
    } else {
#pragma omp parallel for schedule(static) if (n > smoothers::kParallelRows)
      for (Index i = 0; i < n; ++i) {
        double s = 0;
        for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
          s += static_cast<double>(A.val[k]) * sq[A.col[k]] * v[A.col[k]];
        }
        w[i] = sq[i] * s - b_prev * v_prev[i];
      }
    }
    const double a = dot(w, v, distr);
    alpha.push_back(a);
    for (Index i = 0; i < n; ++i) w[i] -= a * v[i];
    const double b = std::sqrt(dot(w, w, distr));
    // An invariant subspace: the Ritz values are exact eigenvalues.
    if (j == m - 1 || b <= 1e-12 * std::abs(a)) break;
    beta.push_back(b);
    v_prev.swap(v);
    for (Index i = 0; i < n; ++i) v[i] = w[i] / b;
  }
  *ritz_min = tridiagonal_eigenvalue(alpha, beta, 0);
  *ritz_max = tridiagonal_eigenvalue(alpha, beta, static_cast<int>(alpha.size()) - 1);
  return true;
}

template <class T>
double ChebyshevSolver<T>::power_iteration() const {
  const Index n = this->A_->nrows;
  const Distribution<T>* distr = this->distribution();
  std::vector<double> v = start_vector(n, distr ? distr->row_start() : 0), y(n);
  std::vector<T> tv(n), tout(n);
  double lambda = 0;
  for (int it = 0; it < kPowerSteps; ++it) {
    const double nv = std::sqrt(dot(v, v, distr));
    if (nv == 0) break;
    for (double& x : v) x /= nv;
    apply_operator(v.data(), y.data(), tv, tout);
    lambda = std::sqrt(dot(y, y, distr));
    v.swap(y);
  }
  return lambda;
}

template <class T>
double ChebyshevSolver<T>::row_sum_bound() const {
  if (!diagonal_) return 0.9;  // AmgX's value; no bound without the matrix of M^-1
  const CsrMatrix<T>& A = *this->A_;
  double bound = 0;
  const Index n = A.nrows;
  const T* sc = scale();
#pragma omp parallel for reduction(max : bound) schedule(static) if (n > smoothers::kParallelRows)
  for (Index i = 0; i < n; ++i) {
    double s = 0;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) s += std::abs(static_cast<double>(A.val[k]));
    bound = std::max(bound, s * std::abs(static_cast<double>(sc[i])));
  }
  if (A.dist) bound = A.dist->max(bound);
  return bound;
}

template <class T>
void ChebyshevSolver<T>::estimate_bounds() {
  const char* what = "";
  if (mode_ == 0 || mode_ == 1) {
    double rmin = 0, rmax = 0;
    if (lanczos(&rmin, &rmax)) {
      // Ten steps can leave the top Ritz value several percent low when the
      // upper spectrum is clustered (e.g. jumping coefficients), and
      // Chebyshev amplifies every mode above lmax: inflate by 10% (AmgX's
      // 1.05 follows a far longer eigen-solve), but never beyond the
      // Gershgorin bound, which holds for the exact largest eigenvalue.
      lmax_ = std::min(row_sum_bound(), 1.1 * rmax);
      lmin_ = mode_ == 0 ? 0.95 * rmin : lmax_ / 8;
      what = "the Lanczos estimate";
    } else {
      lmax_ = 1.1 * power_iteration();
      lmin_ = lmax_ / 8;
      what = "the power-iteration estimate";
    }
  } else if (mode_ == 3 && prec_) {
    lmax_ = user_max_;
    lmin_ = user_min_;
    what = "cheby_max_lambda";
  } else {
    lmax_ = row_sum_bound();
    lmin_ = lmax_ / 8;
    what = "the row-sum bound";
  }
  if (!(lmax_ > 0) || !std::isfinite(lmax_)) {
    throw SetupError(this->name_ + " (scope '" + this->scope_ + "'): " + what +
                     " of the largest eigenvalue of the preconditioned matrix is " +
                     format_number(lmax_) + " on a " + std::to_string(this->A_->nrows) +
                     "-row matrix; Chebyshev needs a positive spectrum. Use a smoother for "
                     "indefinite matrices (e.g. MULTICOLOR_GS) or set the bounds with "
                     "chebyshev_lambda_estimate_mode=3");
  }
  if (!(lmin_ > 0) || lmin_ >= lmax_) lmin_ = lmax_ / 8;
}

template <class T>
void ChebyshevSolver<T>::solve_init(const T* /*b*/, T* /*x*/, bool /*x_is_zero*/) {
  if (method_) method_->init();
  step_ = 0;
  alpha_prev_ = 0;
}

template <class T>
void ChebyshevSolver<T>::coefficients(int k, double* alpha, double* beta) const {
  step_coefficients(k, alpha_prev_, alpha, beta);
}

template <class T>
void ChebyshevSolver<T>::step_coefficients(int k, double alpha_prev, double* alpha,
                                           double* beta) const {
  chebyshev_step_coefficients(lmin_, lmax_, k, alpha_prev, alpha, beta);
}

template <class T>
bool ChebyshevSolver<T>::configured_bounds(double* lmin, double* lmax) const {
  if (poly_ || mode_ != 3 || !prec_) return false;
  *lmin = user_min_;
  *lmax = user_max_;
  return true;
}

template <class T>
void ChebyshevSolver<T>::step_generic(int k, const T* b, T* x, bool x_is_zero) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  T* r = res_.data();
  T* p = p_.data();
  T* z = z_.data();
  double alpha_d, beta_d;
  coefficients(k, &alpha_d, &beta_d);
  const T alpha = static_cast<T>(alpha_d), beta = static_cast<T>(beta_d);
  if (k == 0) {
    if (x_is_zero) {
      cpu::copy<T>(n, b, r);
    } else {
      this->residual_of(x, b, r);
    }
  } else if (A.dist) {
    // r -= alpha_prev A p, with the product (halo exchange) in z first.
    this->matvec(p, z);
    const T alpha_prev = static_cast<T>(alpha_prev_);
    for_rows(n, [=](Index i) { r[i] -= alpha_prev * z[i]; });
  } else {
    const T alpha_prev = static_cast<T>(alpha_prev_);
#pragma omp parallel for schedule(static) if (n > smoothers::kParallelRows)
    for (Index i = 0; i < n; ++i) {
      T t = 0;
      for (Index kk = rp[i]; kk < rp[i + 1]; ++kk) t += v[kk] * p[ci[kk]];
      r[i] -= alpha_prev * t;
    }
  }
  prec_->apply(r, z, true, 1);
  const bool zero_x = k == 0 && x_is_zero;
#pragma omp parallel for schedule(static) if (n > smoothers::kParallelRows)
  for (Index i = 0; i < n; ++i) {
    const T pi = z[i] + beta * (k == 0 ? T(0) : p[i]);
    p[i] = pi;
    x[i] = zero_x ? alpha * pi : x[i] + alpha * pi;
  }
  alpha_prev_ = alpha_d;
}

template <class T>
IterationResult ChebyshevSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  if (method_) {
    method_->iteration(b, x, x_is_zero);
    return IterationResult::kContinue;
  }
  for (int s = 0; s < order_; ++s) {
    step_generic(step_, b, x, x_is_zero && s == 0);
    ++step_;
  }
  return IterationResult::kContinue;
}

template class ChebyshevSolver<float>;
template class ChebyshevSolver<double>;

}  // namespace jaxamg
