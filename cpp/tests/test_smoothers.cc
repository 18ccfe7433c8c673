// Jacobi-type smoothers, sequential GS and NOSOLVER: one sweep against dense
// reference loops, standalone convergence at the rate theory predicts, and
// the errors for unusable diagonals.
#include <gtest/gtest.h>

#include "core/error.h"
#include "test_smoothers_util.h"

namespace jaxamg {
namespace {

using testing::build_solver;
using testing::solver_json;

template <class T>
class SmootherJacobi : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SmootherJacobi, ValueTypes);

double tol_for(float) { return 3e-5; }
double tol_for(double) { return 1e-12; }

// One damped Jacobi-type sweep with diagonal d: y = x + w (b - M x) / d.
std::vector<double> jacobi_reference(const std::vector<double>& M, int n,
                                     const std::vector<double>& d, double w,
                                     const std::vector<double>& x, const std::vector<double>& b) {
  std::vector<double> r = testing::dense_residual(M, n, x, b), y(n);
  for (int i = 0; i < n; ++i) y[i] = x[i] + w * r[i] / d[i];
  return y;
}

// One forward Gauss-Seidel sweep over the rows in `order`, weighted by w.
std::vector<double> gs_reference(const std::vector<double>& M, int n, double w,
                                 std::vector<double> x, const std::vector<double>& b,
                                 const std::vector<int>& order) {
  for (int i : order) {
    double r = b[i];
    for (int j = 0; j < n; ++j) r -= M[i * n + j] * x[j];
    x[i] += w * r / M[i * n + i];
  }
  return x;
}

TYPED_TEST(SmootherJacobi, BlockJacobiOneSweepMatchesDenseFormula) {
  using T = TypeParam;
  const int n = 60;
  auto A = testing::random_dominant<T>(n, 5, 11);
  const auto M = testing::to_dense(*A);
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i) d[i] = M[i * n + i];
  auto s = build_solver<T>(solver_json("BLOCK_JACOBI", "\"relaxation_factor\": 0.7"), A);
  const auto b = testing::random_vector<T>(n, 1);
  auto x = testing::random_vector<T>(n, 2);
  const auto ref = jacobi_reference(M, n, d, 0.7, testing::to_double(x), testing::to_double(b));
  s->apply(b.data(), x.data(), false, 1);
  EXPECT_LT(testing::max_rel_diff(x, ref), tol_for(T()));

  // Zero initial guess: x = w D^-1 b, whatever x held.
  std::vector<T> x0(n, T(123));
  s->apply(b.data(), x0.data(), true, 1);
  const auto ref0 =
      jacobi_reference(M, n, d, 0.7, std::vector<double>(n, 0.0), testing::to_double(b));
  EXPECT_LT(testing::max_rel_diff(x0, ref0), tol_for(T()));

  // Two sweeps are two applications of the formula.
  auto x2 = testing::random_vector<T>(n, 3);
  auto ref2 = jacobi_reference(M, n, d, 0.7, testing::to_double(x2), testing::to_double(b));
  ref2 = jacobi_reference(M, n, d, 0.7, ref2, testing::to_double(b));
  s->apply(b.data(), x2.data(), false, 2);
  EXPECT_LT(testing::max_rel_diff(x2, ref2), tol_for(T()));
}

TYPED_TEST(SmootherJacobi, JacobiL1OneSweepUsesSignedRowAbsSum) {
  using T = TypeParam;
  const int n = 50;
  auto A = testing::random_dominant<T>(n, 6, 21);
  // Negate two rows: their l1 "diagonal" must take the diagonal's sign.
  for (int i : {3, 17})
    for (Index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) A->val[k] = -A->val[k];
  const auto M = testing::to_dense(*A);
  std::vector<double> d(n);
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += std::abs(M[i * n + j]);
    d[i] = M[i * n + i] < 0 ? -s : s;  // hypre: a_ii + sum_{j != i} |a_ij| for a_ii > 0
  }
  auto s = build_solver<T>(solver_json("JACOBI_L1", "\"relaxation_factor\": 0.8"), A);
  const auto b = testing::random_vector<T>(n, 4);
  auto x = testing::random_vector<T>(n, 5);
  const auto ref = jacobi_reference(M, n, d, 0.8, testing::to_double(x), testing::to_double(b));
  s->apply(b.data(), x.data(), false, 1);
  EXPECT_LT(testing::max_rel_diff(x, ref), tol_for(T()));
  std::vector<T> x0(n, T(-7));
  s->apply(b.data(), x0.data(), true, 1);
  const auto ref0 =
      jacobi_reference(M, n, d, 0.8, std::vector<double>(n, 0.0), testing::to_double(b));
  EXPECT_LT(testing::max_rel_diff(x0, ref0), tol_for(T()));
}

TYPED_TEST(SmootherJacobi, JacobiL1RelaxationFactorZeroMeansOne) {
  using T = TypeParam;
  const int n = 30;
  auto A = testing::random_dominant<T>(n, 4, 8);
  auto s0 = build_solver<T>(solver_json("JACOBI_L1", "\"relaxation_factor\": 0"), A);
  auto s1 = build_solver<T>(solver_json("JACOBI_L1", "\"relaxation_factor\": 1.0"), A);
  const auto b = testing::random_vector<T>(n, 1);
  auto x0 = testing::random_vector<T>(n, 2), x1 = x0;
  s0->apply(b.data(), x0.data(), false, 2);
  s1->apply(b.data(), x1.data(), false, 2);
  EXPECT_EQ(x0, x1);
}

TYPED_TEST(SmootherJacobi, GaussSeidelOneSweepMatchesSequentialLoop) {
  using T = TypeParam;
  const int n = 60;
  auto A = testing::random_dominant<T>(n, 5, 31);
  const auto M = testing::to_dense(*A);
  std::vector<int> order(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  auto s = build_solver<T>(solver_json("GS", "\"relaxation_factor\": 1.2"), A);
  const auto b = testing::random_vector<T>(n, 6);
  auto x = testing::random_vector<T>(n, 7);
  const auto ref = gs_reference(M, n, 1.2, testing::to_double(x), testing::to_double(b), order);
  s->apply(b.data(), x.data(), false, 1);
  EXPECT_LT(testing::max_rel_diff(x, ref), tol_for(T()));
  std::vector<T> x0(n, T(99));
  s->apply(b.data(), x0.data(), true, 1);
  const auto ref0 =
      gs_reference(M, n, 1.2, std::vector<double>(n, 0.0), testing::to_double(b), order);
  EXPECT_LT(testing::max_rel_diff(x0, ref0), tol_for(T()));
}

TYPED_TEST(SmootherJacobi, NoSolverIsIdentityOrZero) {
  using T = TypeParam;
  const int n = 20;
  auto A = testing::random_dominant<T>(n, 3, 5);
  auto s = build_solver<T>(solver_json("NOSOLVER"), A);
  const auto b = testing::random_vector<T>(n, 1);
  auto x = testing::random_vector<T>(n, 2);
  const auto x_in = x;
  s->apply(b.data(), x.data(), false, 3);
  EXPECT_EQ(x, x_in);
  s->apply(b.data(), x.data(), true, 1);
  EXPECT_EQ(x, std::vector<T>(n, T(0)));
}

// Standalone solves of 2D Poisson (m x m interior points, h = 1/(m+1)): the
// observed asymptotic residual reduction per iteration against theory,
// with mu = cos(pi h) the largest Jacobi eigenvalue of D^-1 (L + U):
//   damped Jacobi: 1 - w (1 - mu);  Gauss-Seidel (any consistent ordering,
//   natural or red-black): mu^2.
TEST(SmootherConvergence, JacobiAndGaussSeidelRatesOnPoisson2d) {
  const int m = 12;
  auto A = std::make_shared<CsrMatrix<double>>(testing::poisson2d<double>(m));
  const int n = A->nrows;
  const auto b = testing::random_vector<double>(n, 3);
  const double mu = std::cos(M_PI / (m + 1));
  struct Case {
    const char* name;
    const char* extra;
    double rate;
  };
  const Case cases[] = {
      {"BLOCK_JACOBI", "\"relaxation_factor\": 0.8", 1 - 0.8 * (1 - mu)},
      {"JACOBI_L1", "\"relaxation_factor\": 1.0", -1},  // theory: converges (checked below)
      {"GS", "\"relaxation_factor\": 1.0", mu * mu},
      {"MULTICOLOR_GS", "\"relaxation_factor\": 1.0", mu * mu},
      {"MULTICOLOR_GS", "\"relaxation_factor\": 1.0, \"symmetric_GS\": 1", -1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " " + c.extra);
    auto s = build_solver<double>(
        solver_json(c.name, std::string(c.extra) +
                                ", \"max_iters\": 3000, \"tolerance\": 1e-8, \"convergence\": "
                                "\"RELATIVE_INI\""),
        A);
    std::vector<double> x(n);
    EXPECT_EQ(testing::solve_monitored(*s.solver, b, x), Status::kSuccess);
    EXPECT_LT(testing::relative_residual(*A, x, b), 1.01e-8);
    const auto& h = s->residual_history();
    ASSERT_GT(h.size(), 40u);
    const double observed = testing::asymptotic_rate(h, 20);
    if (c.rate > 0) EXPECT_NEAR(observed, c.rate, 0.01 * c.rate);
    EXPECT_LT(observed, 1.0);
  }
}

TEST(SmootherErrors, ZeroOrMissingDiagonalNamesTheRow) {
  // Row 2 stores a zero diagonal; in the second matrix row 1 stores none.
  std::vector<Index> rp{0, 2, 4, 6};
  std::vector<Index> ci{0, 1, 0, 1, 1, 2};
  std::vector<double> v{4, -1, -1, 4, -1, 0};
  auto zero = std::make_shared<CsrMatrix<double>>(
      make_csr<double>(3, 3, rp.data(), ci.data(), v.data(), 6));
  std::vector<Index> rp2{0, 2, 3, 5};
  std::vector<Index> ci2{0, 1, 0, 1, 2};
  std::vector<double> v2{4, -1, -1, -1, 4};
  auto missing = std::make_shared<CsrMatrix<double>>(
      make_csr<double>(3, 3, rp2.data(), ci2.data(), v2.data(), 5));
  for (const char* name : {"BLOCK_JACOBI", "GS", "MULTICOLOR_GS", "MULTICOLOR_DILU",
                           "MULTICOLOR_ILU"}) {
    SCOPED_TRACE(name);
    try {
      build_solver<double>(solver_json(name), zero);
      ADD_FAILURE() << "expected InvalidInput";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("row 2 has a zero diagonal"), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
    try {
      build_solver<double>(solver_json(name), missing);
      ADD_FAILURE() << "expected InvalidInput";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("row 1 has no stored diagonal"), std::string::npos)
          << e.what();
    }
  }
  // JACOBI_L1 needs no diagonal, only a nonzero row.
  EXPECT_NO_THROW(build_solver<double>(solver_json("JACOBI_L1"), missing));
  std::vector<Index> rp3{0, 1, 1, 2};
  std::vector<Index> ci3{0, 2};
  std::vector<double> v3{2, 3};
  auto empty_row = std::make_shared<CsrMatrix<double>>(
      make_csr<double>(3, 3, rp3.data(), ci3.data(), v3.data(), 2));
  try {
    build_solver<double>(solver_json("JACOBI_L1"), empty_row);
    ADD_FAILURE() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("row 1"), std::string::npos) << e.what();
  }
}

TEST(SmootherErrors, RelaxationFactorOutOfRangeNamesScope) {
  auto A = testing::random_dominant<double>(10, 2, 1);
  try {
    build_solver<double>(solver_json("BLOCK_JACOBI", "\"relaxation_factor\": 2.5"), A);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("relaxation_factor = 2.5"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("'main'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace jaxamg
