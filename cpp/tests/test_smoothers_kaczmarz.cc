// KACZMARZ: one sweep against the dense projection loop, the error norm that
// no projection can increase, and solves that Gauss-Seidel cannot do (rows
// permuted so that most diagonals are zero).
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "core/error.h"
#include "test_smoothers_util.h"

namespace jaxamg {
namespace {

using testing::build_solver;
using testing::solver_json;

template <class T>
class Kaczmarz : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Kaczmarz, ValueTypes);

double tol_for(float) { return 3e-5; }
double tol_for(double) { return 1e-12; }

// One sweep of projections onto the rows' hyperplanes, rows 0..n-1 in order.
std::vector<double> kaczmarz_reference(const std::vector<double>& M, int n, double w,
                                       std::vector<double> x, const std::vector<double>& b) {
  for (int i = 0; i < n; ++i) {
    double r = b[i], norm2 = 0;
    for (int j = 0; j < n; ++j) {
      r -= M[i * n + j] * x[j];
      norm2 += M[i * n + j] * M[i * n + j];
    }
    for (int j = 0; j < n; ++j) x[j] += w * r / norm2 * M[i * n + j];
  }
  return x;
}

// The rows of A in reverse order: a nonsingular matrix whose diagonal is
// mostly zero.
template <class T>
std::shared_ptr<CsrMatrix<T>> reversed_rows(const CsrMatrix<T>& A) {
  std::vector<Index> rp{0}, ci;
  std::vector<T> v;
  for (Index i = A.nrows - 1; i >= 0; --i) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      ci.push_back(A.col[k]);
      v.push_back(A.val[k]);
    }
    rp.push_back(static_cast<Index>(ci.size()));
  }
  return std::make_shared<CsrMatrix<T>>(make_csr<T>(A.nrows, A.ncols, rp.data(), ci.data(),
                                                    v.data(), static_cast<Index>(ci.size())));
}

double error_norm(const std::vector<double>& x, const std::vector<double>& exact) {
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += (x[i] - exact[i]) * (x[i] - exact[i]);
  return std::sqrt(s);
}

TYPED_TEST(Kaczmarz, OneSweepMatchesTheProjectionLoop) {
  using T = TypeParam;
  const int n = 50;
  auto A = testing::random_dominant<T>(n, 5, 41);
  const auto M = testing::to_dense(*A);
  auto s = build_solver<T>(solver_json("KACZMARZ", "\"relaxation_factor\": 1.3"), A);
  const auto b = testing::random_vector<T>(n, 1);
  auto x = testing::random_vector<T>(n, 2);
  const auto ref = kaczmarz_reference(M, n, 1.3, testing::to_double(x), testing::to_double(b));
  s->apply(b.data(), x.data(), false, 1);
  EXPECT_LT(testing::max_rel_diff(x, ref), tol_for(T()));

  // A zero guess starts from zero whatever x held; two sweeps are two loops.
  std::vector<T> x0(n, T(-5));
  s->apply(b.data(), x0.data(), true, 2);
  auto ref0 = kaczmarz_reference(M, n, 1.3, std::vector<double>(n, 0.0), testing::to_double(b));
  ref0 = kaczmarz_reference(M, n, 1.3, ref0, testing::to_double(b));
  EXPECT_LT(testing::max_rel_diff(x0, ref0), tol_for(T()));
}

TEST(KaczmarzSolve, ErrorNeverGrowsAndRowPermutedSystemIsSolved) {
  const int n = 80;
  auto dominant = testing::random_dominant<double>(n, 4, 7, 0.5);
  auto A = reversed_rows(*dominant);
  const auto M = testing::to_dense(*A);
  int zero_diagonals = 0;
  for (int i = 0; i < n; ++i) zero_diagonals += M[i * n + i] == 0.0;
  ASSERT_GT(zero_diagonals, n / 2);  // GS and Jacobi cannot even start here
  EXPECT_THROW(build_solver<double>(solver_json("GS"), A), InvalidInput);

  const auto exact = testing::to_double(testing::random_vector<double>(n, 3));
  std::vector<double> b(n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) b[i] += M[i * n + j] * exact[j];

  // Each projection with 0 < w < 2 shrinks or keeps ||x - x*||: so does a sweep.
  auto sweep = build_solver<double>(solver_json("KACZMARZ", "\"relaxation_factor\": 1.0"), A);
  std::vector<double> x(n, 0.0);
  double before = error_norm(x, exact);
  for (int it = 0; it < 30; ++it) {
    sweep->apply(b.data(), x.data(), it == 0, 1);
    const double after = error_norm(x, exact);
    EXPECT_LE(after, before * (1 + 1e-14)) << "sweep " << it;
    before = after;
  }

  // Standalone, it converges to the dense solution.
  auto solver = build_solver<double>(
      solver_json("KACZMARZ", "\"max_iters\": 2000, \"tolerance\": 1e-10, "
                              "\"convergence\": \"RELATIVE_INI\""),
      A);
  std::vector<double> xs(n);
  EXPECT_EQ(testing::solve_monitored(*solver.solver, b, xs), Status::kSuccess);
  EXPECT_LT(error_norm(xs, exact) / error_norm(std::vector<double>(n, 0.0), exact), 1e-8);
}

TEST(KaczmarzSolve, BadInputsAreNamed) {
  std::vector<Index> rp{0, 1, 1, 2};
  std::vector<Index> ci{0, 2};
  std::vector<double> v{2, 3};
  auto empty_row = std::make_shared<CsrMatrix<double>>(
      make_csr<double>(3, 3, rp.data(), ci.data(), v.data(), 2));
  try {
    build_solver<double>(solver_json("KACZMARZ"), empty_row);
    ADD_FAILURE() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("row 1"), std::string::npos) << e.what();
  }
  auto A = testing::random_dominant<double>(10, 2, 1);
  try {
    build_solver<double>(solver_json("KACZMARZ", "\"kaczmarz_coloring_needed\": 2"), A);
    ADD_FAILURE() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("kaczmarz_coloring_needed = 2"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace jaxamg
