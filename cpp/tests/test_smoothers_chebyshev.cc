// CHEBYSHEV and CHEBYSHEV_POLY: one sweep against the explicit Chebyshev
// error polynomial, eigenvalue bounds against a dense power iteration,
// high-frequency damping, standalone convergence.
#include <gtest/gtest.h>

#include "core/error.h"
#include "solvers/smoothers/chebyshev.h"
#include "solvers/smoothers/multicolor_gs.h"
#include "test_smoothers_util.h"

namespace jaxamg {
namespace {

using testing::build_solver;
using testing::solver_json;

template <class T>
class SmootherChebyshev : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SmootherChebyshev, ValueTypes);

double tol_for(float) { return 2e-4; }
double tol_for(double) { return 1e-10; }

template <class T>
const ChebyshevSolver<T>& cheb(testing::Built<T>& b) {
  auto* s = dynamic_cast<const ChebyshevSolver<T>*>(b.solver.get());
  EXPECT_NE(s, nullptr);
  return *s;
}

std::vector<double> matvec(const std::vector<double>& M, int n, const std::vector<double>& v) {
  std::vector<double> y(n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) y[i] += M[i * n + j] * v[j];
  return y;
}

// e_s = T_s((theta - B)/delta) e_0 / T_s(theta/delta), by the Chebyshev
// three-term recurrence on vectors: T_{k+1}(Y) = 2 Y T_k(Y) - T_{k-1}(Y).
std::vector<double> chebyshev_error(const std::vector<double>& B, int n, double lmin,
                                    double lmax, int s, const std::vector<double>& e0) {
  const double theta = (lmax + lmin) / 2, delta = (lmax - lmin) / 2, sigma = theta / delta;
  auto Y = [&](const std::vector<double>& v) {
    auto bv = matvec(B, n, v);
    std::vector<double> y(n);
    for (int i = 0; i < n; ++i) y[i] = (theta * v[i] - bv[i]) / delta;
    return y;
  };
  std::vector<double> t_prev = e0, t = Y(e0);
  double c_prev = 1, c = sigma;
  for (int k = 1; k < s; ++k) {
    auto yt = Y(t);
    std::vector<double> t_next(n);
    for (int i = 0; i < n; ++i) t_next[i] = 2 * yt[i] - t_prev[i];
    t_prev.swap(t);
    t.swap(t_next);
    const double c_next = 2 * sigma * c - c_prev;
    c_prev = c;
    c = c_next;
  }
  for (double& v : t) v /= c;
  return t;
}

// Largest eigenvalue of D^-1 A (A SPD, D > 0) by power iteration on the
// similar symmetric D^-1/2 A D^-1/2, many steps: the reference value.
double dense_lambda_max(const std::vector<double>& M, int n, const std::vector<double>& d) {
  std::vector<double> S(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) S[i * n + j] = M[i * n + j] / std::sqrt(d[i] * d[j]);
  std::vector<double> v(n, 1.0);
  for (int i = 0; i < n; ++i) v[i] += 0.01 * (i % 7);
  double lambda = 0;
  for (int it = 0; it < 2000; ++it) {
    auto y = matvec(S, n, v);
    double nrm = 0, rq = 0;
    for (int i = 0; i < n; ++i) {
      nrm += y[i] * y[i];
      rq += y[i] * v[i];
    }
    nrm = std::sqrt(nrm);
    double vv = 0;
    for (int i = 0; i < n; ++i) vv += v[i] * v[i];
    lambda = rq / vv;
    for (int i = 0; i < n; ++i) v[i] = y[i] / nrm;
  }
  return lambda;
}

TYPED_TEST(SmootherChebyshev, OneSweepIsTheChebyshevErrorPolynomial) {
  using T = TypeParam;
  const int n = 60;
  auto A = testing::random_dominant<T>(n, 4, 91, 0.5, /*symmetric=*/true);
  const auto M = testing::to_dense(*A);
  const double lmin = 0.2, lmax = 1.9;
  const std::string prec =
      "\"preconditioner\": {\"solver\": \"BLOCK_JACOBI\", \"scope\": \"jac\", "
      "\"relaxation_factor\": 1.0}, \"chebyshev_lambda_estimate_mode\": 3, "
      "\"cheby_max_lambda\": 1.9, \"cheby_min_lambda\": 0.2";
  std::vector<double> B(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) B[i * n + j] = M[i * n + j] / M[i * n + i];
  const auto b = testing::random_vector<T>(n, 1);
  const auto xs = testing::dense_solve(*A, b);
  for (int order : {1, 3, 4}) {
    SCOPED_TRACE(order);
    auto s = build_solver<T>(
        solver_json("CHEBYSHEV", prec + ", \"chebyshev_polynomial_order\": " +
                                     std::to_string(order)),
        A);
    EXPECT_EQ(cheb(s).lambda_max(), lmax);
    EXPECT_EQ(cheb(s).lambda_min(), lmin);
    for (int sweeps : {1, 2}) {
      for (bool zero : {false, true}) {
        SCOPED_TRACE(std::to_string(sweeps) + (zero ? " sweeps, zero guess" : " sweeps"));
        auto x = zero ? std::vector<T>(n, T(4)) : testing::random_vector<T>(n, 2);
        std::vector<double> e0(n);
        for (int i = 0; i < n; ++i) e0[i] = xs[i] - (zero ? 0.0 : x[i]);
        // Sweeps continue the recurrence: s sweeps are the degree s * order polynomial.
        const auto e = chebyshev_error(B, n, lmin, lmax, sweeps * order, e0);
        std::vector<double> ref(n);
        for (int i = 0; i < n; ++i) ref[i] = xs[i] - e[i];
        s->apply(b.data(), x.data(), zero, sweeps);
        EXPECT_LT(testing::max_rel_diff(x, ref), tol_for(T()));
      }
    }
  }
}

TYPED_TEST(SmootherChebyshev, GenericPreconditionerSweepMatchesReference) {
  using T = TypeParam;
  // Symmetric multicolour GS as M: M^-1 = (D+U)^-1 D (D+L)^-1 in colour order.
  const int n = 50;
  auto A = testing::random_dominant<T>(n, 4, 93, 0.5, true);
  auto s = build_solver<T>(
      solver_json("CHEBYSHEV",
                  "\"preconditioner\": {\"solver\": \"MULTICOLOR_GS\", \"scope\": \"sgs\", "
                  "\"symmetric_GS\": 1, \"relaxation_factor\": 1.0}, "
                  "\"chebyshev_lambda_estimate_mode\": 3, \"cheby_max_lambda\": 1.05, "
                  "\"cheby_min_lambda\": 0.3, \"chebyshev_polynomial_order\": 3"),
      A);
  // The colouring of the preconditioner equals the greedy colouring that a
  // standalone MULTICOLOR_GS computes.
  auto gs = build_solver<T>(solver_json("MULTICOLOR_GS"), A);
  const auto* mc = dynamic_cast<const MulticolorGSSolver<T>*>(gs.solver.get());
  ASSERT_NE(mc, nullptr);
  const std::vector<int> color = mc->coloring().color;
  const auto M = testing::to_dense(*A);
  std::vector<double> DL(n * n, 0.0), DU(n * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (j == i || color[j] < color[i]) DL[i * n + j] = M[i * n + j];
      if (j == i || color[j] > color[i]) DU[i * n + j] = M[i * n + j];
    }
  // B = M^-1 A column by column: solve (D+L) y = a_j, then (D+U) z = D y.
  auto lower_solve = [&](const std::vector<double>& L, std::vector<double> r, bool forward) {
    // L is triangular in colour order: solve by colour sweeps.
    std::vector<double> y(n, 0.0);
    int nc = 0;
    for (int c : color) nc = std::max(nc, c + 1);
    for (int step = 0; step < nc; ++step) {
      const int c = forward ? step : nc - 1 - step;
      for (int i = 0; i < n; ++i) {
        if (color[i] != c) continue;
        double s = r[i];
        for (int j = 0; j < n; ++j)
          if (j != i) s -= L[i * n + j] * y[j];
        y[i] = s / L[i * n + i];
      }
    }
    return y;
  };
  std::vector<double> B(n * n);
  for (int j = 0; j < n; ++j) {
    std::vector<double> col(n);
    for (int i = 0; i < n; ++i) col[i] = M[i * n + j];
    auto y = lower_solve(DL, col, true);
    for (int i = 0; i < n; ++i) y[i] *= M[i * n + i];
    auto z = lower_solve(DU, y, false);
    for (int i = 0; i < n; ++i) B[i * n + j] = z[i];
  }
  const auto b = testing::random_vector<T>(n, 3);
  const auto xs = testing::dense_solve(*A, b);
  auto x = testing::random_vector<T>(n, 4);
  std::vector<double> e0(n);
  for (int i = 0; i < n; ++i) e0[i] = xs[i] - x[i];
  const auto e = chebyshev_error(B, n, 0.3, 1.05, 3, e0);
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i) ref[i] = xs[i] - e[i];
  s->apply(b.data(), x.data(), false, 1);
  EXPECT_LT(testing::max_rel_diff(x, ref), 10 * tol_for(T()));
}

TYPED_TEST(SmootherChebyshev, LanczosBoundBracketsLargestEigenvalueOfDinvA) {
  using T = TypeParam;
  std::vector<std::shared_ptr<const CsrMatrix<T>>> mats = {
      std::make_shared<CsrMatrix<T>>(testing::poisson2d<T>(14)),
      std::make_shared<CsrMatrix<T>>(testing::jump3d<T>(7, 100.0)),
      testing::random_dominant<T>(150, 5, 97, 0.2, true)};
  for (size_t m = 0; m < mats.size(); ++m) {
    SCOPED_TRACE(m);
    const auto& A = *mats[m];
    const int n = A.nrows;
    const auto M = testing::to_dense(A);
    std::vector<double> d(n);
    for (int i = 0; i < n; ++i) d[i] = M[i * n + i];
    const double truth = dense_lambda_max(M, n, d);
    for (int mode : {0, 1}) {
      SCOPED_TRACE(mode);
      auto s = build_solver<T>(
          solver_json("CHEBYSHEV",
                      "\"preconditioner\": {\"solver\": \"BLOCK_JACOBI\", \"scope\": \"j\", "
                      "\"relaxation_factor\": 1.0}, \"chebyshev_lambda_estimate_mode\": " +
                          std::to_string(mode)),
          mats[m]);
      const double est = cheb(s).lambda_max();
      EXPECT_GE(est, truth * (1 - 1e-6));
      EXPECT_LE(est, truth * 1.10);
      EXPECT_GT(cheb(s).lambda_min(), 0.0);
      EXPECT_LT(cheb(s).lambda_min(), est);
      if (mode == 1) EXPECT_NEAR(cheb(s).lambda_min(), est / 8, 1e-12 * est);
    }
  }
}

TYPED_TEST(SmootherChebyshev, RowSumBoundsAndPolyVariant) {
  using T = TypeParam;
  auto A = testing::random_dominant<T>(80, 5, 99, 0.3, true);
  const auto M = testing::to_dense(*A);
  const int n = A->nrows;
  double rowsum_a = 0, rowsum_dinva = 0;
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += std::abs(M[i * n + j]);
    rowsum_a = std::max(rowsum_a, s);
    rowsum_dinva = std::max(rowsum_dinva, s / std::abs(M[i * n + i]));
  }
  const double rel = std::is_same<T, float>::value ? 1e-6 : 1e-12;
  // Mode 2 without a preconditioner: max_i sum_j |a_ij|.
  auto s0 = build_solver<T>(solver_json("CHEBYSHEV", "\"chebyshev_lambda_estimate_mode\": 2"), A);
  EXPECT_NEAR(cheb(s0).lambda_max(), rowsum_a, rel * rowsum_a);
  EXPECT_NEAR(cheb(s0).lambda_min(), rowsum_a / 8, rel * rowsum_a);
  // Mode 3 without a preconditioner falls back to mode 2, as in AmgX.
  auto s3 = build_solver<T>(solver_json("CHEBYSHEV", "\"chebyshev_lambda_estimate_mode\": 3"), A);
  EXPECT_NEAR(cheb(s3).lambda_max(), rowsum_a, rel * rowsum_a);
  // With BLOCK_JACOBI (w = 0.7): 0.7 max_i sum_j |a_ij / a_ii|.
  auto s1 = build_solver<T>(
      solver_json("CHEBYSHEV", "\"chebyshev_lambda_estimate_mode\": 2, \"preconditioner\": "
                               "{\"solver\": \"BLOCK_JACOBI\", \"relaxation_factor\": 0.7}"),
      A);
  EXPECT_NEAR(cheb(s1).lambda_max(), 0.7 * rowsum_dinva, rel * rowsum_dinva);
  // With JACOBI_L1 at AmgX's default w = 0.9 the bound is exactly 0.9.
  auto s2 = build_solver<T>(
      solver_json("CHEBYSHEV_POLY", "\"chebyshev_polynomial_order\": 25, \"preconditioner\": "
                                    "{\"solver\": \"JACOBI_L1\"}"),
      A);
  EXPECT_NEAR(cheb(s2).lambda_max(), 0.9, rel);
  EXPECT_EQ(cheb(s2).order(), 10);  // clamped to [1, 10] as in AmgX
}

TEST(SmootherChebyshevDamping, HighFrequencyErrorIsReducedSmoothErrorIsKept) {
  // 1D Poisson, D^-1 A has eigenvalues 1 - cos(k pi h), eigenvectors
  // sin(k pi i h). With mode 1 (lmin = lmax / 8) and order 3, every mode with
  // eigenvalue in [lmin, lmax] shrinks by at least 1 / T_3(theta/delta).
  const int n = 63;
  auto A = std::make_shared<CsrMatrix<double>>(testing::poisson1d<double>(n));
  auto s = build_solver<double>(
      solver_json("CHEBYSHEV",
                  "\"preconditioner\": {\"solver\": \"BLOCK_JACOBI\", \"relaxation_factor\": "
                  "1.0}, \"chebyshev_lambda_estimate_mode\": 1, \"chebyshev_polynomial_order\": 3"),
      A);
  const double lmax = cheb(s).lambda_max(), lmin = cheb(s).lambda_min();
  const double sigma = (lmax + lmin) / (lmax - lmin);
  const double bound = 1 / (4 * sigma * sigma * sigma - 3 * sigma);
  const double h = 1.0 / (n + 1);
  const std::vector<double> b(n, 0.0);
  for (int k : {1, 2, n / 2, 3 * n / 4, n}) {
    SCOPED_TRACE(k);
    std::vector<double> x(n);
    for (int i = 0; i < n; ++i) x[i] = std::sin(k * M_PI * (i + 1) * h);
    const double lambda = 1 - std::cos(k * M_PI * h);
    const double before = cpu::norm(n, x.data(), NormType::kL2);
    s->apply(b.data(), x.data(), false, 1);
    const double factor = cpu::norm(n, x.data(), NormType::kL2) / before;
    if (lambda >= lmin) {
      EXPECT_LE(factor, bound * (1 + 1e-9));
    } else {
      EXPECT_GT(factor, 0.5);  // smooth modes are left for the coarse grid
    }
  }
  EXPECT_LT(bound, 0.25);
}

TEST(SmootherChebyshevConvergence, StandaloneSolvesPoisson) {
  auto A = std::make_shared<CsrMatrix<double>>(testing::poisson2d<double>(12));
  const int n = A->nrows;
  const auto b = testing::random_vector<double>(n, 5);
  for (const char* extra :
       {"\"preconditioner\": {\"solver\": \"BLOCK_JACOBI\", \"relaxation_factor\": 1.0}, "
        "\"chebyshev_lambda_estimate_mode\": 0",
        "\"preconditioner\": {\"solver\": \"JACOBI_L1\"}, \"chebyshev_lambda_estimate_mode\": 2",
        "\"chebyshev_lambda_estimate_mode\": 1"}) {
    SCOPED_TRACE(extra);
    auto s = build_solver<double>(
        solver_json("CHEBYSHEV", std::string(extra) +
                                     ", \"max_iters\": 500, \"tolerance\": 1e-8, "
                                     "\"convergence\": \"RELATIVE_INI\""),
        A);
    std::vector<double> x(n);
    EXPECT_EQ(testing::solve_monitored(*s.solver, b, x), Status::kSuccess);
    EXPECT_LT(testing::relative_residual(*A, x, b), 1.01e-8);
  }
}

TEST(SmootherChebyshevErrors, BadSettingsAreNamed) {
  auto A = std::make_shared<CsrMatrix<double>>(testing::poisson1d<double>(10));
  try {
    build_solver<double>(solver_json("CHEBYSHEV", "\"chebyshev_lambda_estimate_mode\": 7"), A);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("chebyshev_lambda_estimate_mode = 7"), std::string::npos);
  }
  try {
    build_solver<double>(
        solver_json("CHEBYSHEV", "\"chebyshev_lambda_estimate_mode\": 3, \"cheby_max_lambda\": "
                                 "0.1, \"cheby_min_lambda\": 0.5, \"preconditioner\": "
                                 "{\"solver\": \"JACOBI_L1\"}"),
        A);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cheby_max_lambda"), std::string::npos);
  }
  // A negative definite matrix has no positive spectrum to smooth.
  auto N = std::make_shared<CsrMatrix<double>>(*A);
  for (auto& v : N->val) v = -v;
  try {
    build_solver<double>(solver_json("CHEBYSHEV", "\"chebyshev_lambda_estimate_mode\": 1"), N);
    ADD_FAILURE() << "expected SetupError";
  } catch (const SetupError& e) {
    EXPECT_NE(std::string(e.what()).find("largest eigenvalue"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace jaxamg
