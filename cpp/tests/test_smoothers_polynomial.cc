// KPZ_POLYNOMIAL and POLYNOMIAL: one iteration against a dense loop of the
// recurrence, the error factor 1 - lambda q(lambda) on the interval the
// polynomial targets (diagonal matrices expose it eigenvalue by eigenvalue),
// and AMG-preconditioned CG solves with them as smoothers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "test_smoothers_util.h"

namespace jaxamg {
namespace {

using testing::build_solver;
using testing::solver_json;

template <class T>
class KpzPolynomial : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(KpzPolynomial, ValueTypes);

double tol_for(float) { return 1e-4; }
double tol_for(double) { return 1e-11; }

// x + q(B) S (b - M x) by the three-term recurrence, dense, in double;
// `scaled`: B = D^-1 M, S = D^-1.
std::vector<double> kpz_reference(const std::vector<double>& M, int n, bool scaled, double mu,
                                  double lmax, int p, std::vector<double> x,
                                  const std::vector<double>& b) {
  auto product = [&](const std::vector<double>& u) {
    std::vector<double> y(n, 0.0);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j) y[i] += M[i * n + j] * u[j];
      if (scaled) y[i] /= M[i * n + i];
    }
    return y;
  };
  std::vector<double> s0 = testing::dense_residual(M, n, x, b);
  if (scaled)
    for (int i = 0; i < n; ++i) s0[i] /= M[i * n + i];
  const double m0 = 1 / lmax, m1 = mu / lmax;
  const double delta = (std::sqrt(mu) - 1) / (std::sqrt(mu) + 1);
  const double beta = std::pow(std::sqrt(m0) + std::sqrt(m1), 2), chi = 4 * m0 * m1 / beta;
  std::vector<double> t = product(s0), v0(n), v(n);
  for (int i = 0; i < n; ++i) {
    v0[i] = (m0 + m1) / 2 * s0[i];
    v[i] = beta / 2 * s0[i] - m0 * m1 * t[i];
  }
  for (int k = 1; k < p; ++k) {
    t = product(v);
    for (int i = 0; i < n; ++i) {
      const double d = chi * (s0[i] - t[i]) + delta * delta * (v[i] - v0[i]);
      v0[i] = v[i];
      v[i] += d;
    }
  }
  for (int i = 0; i < n; ++i) x[i] += v[i];
  return x;
}

TYPED_TEST(KpzPolynomial, OneIterationMatchesTheDenseRecurrence) {
  using T = TypeParam;
  const int n = 40;
  auto A = testing::random_dominant<T>(n, 4, 17);
  const auto M = testing::to_dense(*A);
  double col_max = 0, gershgorin = 0;
  for (int j = 0; j < n; ++j) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += std::abs(M[i * n + j]);
    col_max = std::max(col_max, s);
  }
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += std::abs(M[i * n + j]);
    gershgorin = std::max(gershgorin, s / std::abs(M[i * n + i]));
  }
  const auto b = testing::random_vector<T>(n, 5);
  for (bool scaled : {false, true}) {
    SCOPED_TRACE(scaled ? "POLYNOMIAL" : "KPZ_POLYNOMIAL");
    const double mu = scaled ? 4.0 : 6.0;
    const double lmax = scaled ? gershgorin : col_max;
    auto s = build_solver<T>(solver_json(scaled ? "POLYNOMIAL" : "KPZ_POLYNOMIAL",
                                         "\"kpz_order\": 4, \"kpz_mu\": 6"),
                             A);
    auto x = testing::random_vector<T>(n, 6);
    const auto ref =
        kpz_reference(M, n, scaled, mu, lmax, 4, testing::to_double(x), testing::to_double(b));
    s->apply(b.data(), x.data(), false, 1);
    EXPECT_LT(testing::max_rel_diff(x, ref), tol_for(T()));
    std::vector<T> x0(n, T(8));
    s->apply(b.data(), x0.data(), true, 1);
    const auto ref0 = kpz_reference(M, n, scaled, mu, lmax, 4, std::vector<double>(n, 0.0),
                                    testing::to_double(b));
    EXPECT_LT(testing::max_rel_diff(x0, ref0), tol_for(T()));
  }
}

// On A = diag(lambda) one iteration from zero with b = 1 gives x = q(lambda):
// the factor 1 - lambda q(lambda) that the smoother leaves on each
// eigenvector must be below 1 on [lambda_max / mu, lambda_max] and shrink
// as the degree grows.
TEST(KpzPolynomialFactor, ShrinksEveryTargetedEigenvalueMoreWithEachDegree) {
  const int n = 200;
  const double lmax = 3.0;
  for (int mu : {4, 8}) {
    std::vector<Index> rp(n + 1), ci(n);
    std::vector<double> v(n);
    for (int i = 0; i < n; ++i) {
      rp[i + 1] = i + 1;
      ci[i] = i;
      v[i] = lmax / mu + (lmax - lmax / mu) * i / (n - 1);  // ends at lmax exactly
    }
    auto A = std::make_shared<CsrMatrix<double>>(
        make_csr<double>(n, n, rp.data(), ci.data(), v.data(), n));
    const std::vector<double> b(n, 1.0);
    double previous = 2;
    for (int p = 2; p <= 6; ++p) {
      SCOPED_TRACE("mu " + std::to_string(mu) + ", degree " + std::to_string(p));
      auto s = build_solver<double>(
          solver_json("KPZ_POLYNOMIAL", "\"kpz_order\": " + std::to_string(p) +
                                            ", \"kpz_mu\": " + std::to_string(mu)),
          A);
      std::vector<double> x(n);
      s->apply(b.data(), x.data(), true, 1);
      double worst = 0;
      for (int i = 0; i < n; ++i) worst = std::max(worst, std::abs(1 - v[i] * x[i]));
      EXPECT_LT(worst, 1.0);
      EXPECT_LT(worst, 0.7 * previous);
      previous = worst;
    }
    EXPECT_LT(previous, mu == 4 ? 0.01 : 0.1);  // degree 6
  }
}

TEST(KpzPolynomialSolve, AsAmgSmoothersInPcgOnPoisson3d) {
  auto A = std::make_shared<CsrMatrix<double>>(testing::poisson3d<double>(14));
  const int n = A->nrows;
  const auto b = testing::random_vector<double>(n, 9);
  for (const char* smoother : {"KPZ_POLYNOMIAL", "POLYNOMIAL"}) {
    SCOPED_TRACE(smoother);
    const std::string json =
        std::string("{\"config_version\": 2, \"solver\": {\"solver\": \"PCG\", \"scope\": "
                    "\"main\", \"max_iters\": 60, \"tolerance\": 1e-10, \"convergence\": "
                    "\"RELATIVE_INI\", \"monitor_residual\": 1, \"preconditioner\": {\"solver\": "
                    "\"AMG\", \"scope\": \"amg\", \"max_iters\": 1, \"smoother\": {\"scope\": "
                    "\"s\", \"solver\": \"") +
        smoother + "\", \"kpz_order\": 3}}}}";
    auto s = build_solver<double>(json, A);
    std::vector<double> x(n, 0.0);
    EXPECT_EQ(s->solve(b.data(), x.data(), true), Status::kSuccess);
    EXPECT_LT(testing::relative_residual(*A, x, b), 1.01e-10);
    EXPECT_LT(s->iterations(), 25);
  }
}

TEST(KpzPolynomialSolve, BadParametersAreNamed) {
  auto A = testing::random_dominant<double>(10, 2, 1);
  try {
    build_solver<double>(solver_json("KPZ_POLYNOMIAL", "\"kpz_mu\": 1"), A);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("kpz_mu = 1"), std::string::npos) << e.what();
  }
  try {
    build_solver<double>(solver_json("KPZ_POLYNOMIAL", "\"kpz_order\": 0"), A);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("kpz_order = 0"), std::string::npos) << e.what();
  }
  // POLYNOMIAL reads kpz_order 0 as 6 and ignores kpz_mu, as AmgX.
  EXPECT_NO_THROW(
      build_solver<double>(solver_json("POLYNOMIAL", "\"kpz_order\": 0, \"kpz_mu\": 1"), A));
}

}  // namespace
}  // namespace jaxamg
