// Multicolour smoothers: colourings, one sweep of MULTICOLOR_GS, _DILU and
// _ILU against dense references built independently in colour order,
// standalone convergence, and values-only resetup.
#include <gtest/gtest.h>

#include <omp.h>

#include <numeric>

#include "core/error.h"
#include "solvers/smoothers/multicolor_dilu.h"
#include "solvers/smoothers/multicolor_gs.h"
#include "solvers/smoothers/multicolor_ilu.h"
#include "test_smoothers_util.h"

namespace jaxamg {
namespace {

using testing::build_solver;
using testing::solver_json;

template <class T>
class SmootherMulticolor : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SmootherMulticolor, ValueTypes);

double tol_for(float) { return 5e-5; }
double tol_for(double) { return 1e-11; }

template <class S, class T>
const S& as(testing::Built<T>& b) {
  const S* s = dynamic_cast<const S*>(b.solver.get());
  EXPECT_NE(s, nullptr);
  return *s;
}

// Rows sorted by (colour, index): the sequential order that a colour-parallel
// sweep reproduces.
std::vector<int> color_order(const std::vector<int>& color) {
  std::vector<int> order(color.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return color[a] < color[b]; });
  return order;
}

std::vector<double> gs_sweep(const std::vector<double>& M, int n, double w, std::vector<double> x,
                             const std::vector<double>& b, const std::vector<int>& order) {
  for (int i : order) {
    double r = b[i];
    for (int j = 0; j < n; ++j) r -= M[i * n + j] * x[j];
    x[i] += w * r / M[i * n + i];
  }
  return x;
}

// Dense solve of M d = r (partial pivoting), M row-major n x n.
std::vector<double> dense_solve_rows(std::vector<double> M, int n, std::vector<double> r) {
  for (int c = 0; c < n; ++c) {
    int p = c;
    for (int i = c + 1; i < n; ++i)
      if (std::abs(M[i * n + c]) > std::abs(M[p * n + c])) p = i;
    for (int k = 0; k < n; ++k) std::swap(M[c * n + k], M[p * n + k]);
    std::swap(r[c], r[p]);
    for (int i = c + 1; i < n; ++i) {
      const double f = M[i * n + c] / M[c * n + c];
      for (int k = c; k < n; ++k) M[i * n + k] -= f * M[c * n + k];
      r[i] -= f * r[c];
    }
  }
  for (int c = n - 1; c >= 0; --c) {
    for (int k = c + 1; k < n; ++k) r[c] -= M[c * n + k] * r[k];
    r[c] /= M[c * n + c];
  }
  return r;
}

TYPED_TEST(SmootherMulticolor, ColoringsAreValid) {
  using T = TypeParam;
  // A nonsymmetric pattern (a_ij stored without a_ji) and 2D/3D stencils.
  std::vector<std::shared_ptr<const CsrMatrix<T>>> mats = {
      testing::random_dominant<T>(300, 6, 41),
      std::make_shared<CsrMatrix<T>>(testing::poisson2d<T>(17)),
      std::make_shared<CsrMatrix<T>>(testing::poisson3d<T>(9))};
  for (size_t m = 0; m < mats.size(); ++m) {
    SCOPED_TRACE(m);
    auto s = build_solver<T>(solver_json("MULTICOLOR_GS"), mats[m]);
    const auto& c = as<MulticolorGSSolver<T>>(s).coloring();
    ASSERT_EQ(c.color.size(), static_cast<size_t>(mats[m]->nrows));
    EXPECT_TRUE(testing::coloring_is_valid(*mats[m], c.color));
    std::vector<int> seen(mats[m]->nrows, 0);
    for (int k = 0; k < c.num_colors; ++k)
      for (Index p = c.color_ptr[k]; p < c.color_ptr[k + 1]; ++p) {
        EXPECT_EQ(c.color[c.rows[p]], k);
        ++seen[c.rows[p]];
      }
    EXPECT_EQ(seen, std::vector<int>(mats[m]->nrows, 1));
    if (m > 0) EXPECT_EQ(c.num_colors, 2);  // red-black for 5- and 7-point stencils
  }
}

TYPED_TEST(SmootherMulticolor, GaussSeidelSweepMatchesColorOrderedLoop) {
  using T = TypeParam;
  const int n = 80;
  auto A = testing::random_dominant<T>(n, 5, 51);
  const auto M = testing::to_dense(*A);
  const auto b = testing::random_vector<T>(n, 1);
  for (int symmetric : {0, 1}) {
    SCOPED_TRACE(symmetric);
    auto s = build_solver<T>(solver_json("MULTICOLOR_GS", "\"relaxation_factor\": 0.9, "
                                                          "\"symmetric_GS\": " +
                                                              std::to_string(symmetric)),
                             A);
    const auto& c = as<MulticolorGSSolver<T>>(s).coloring();
    ASSERT_TRUE(testing::coloring_is_valid(*A, c.color));
    const auto order = color_order(c.color);
    auto backward = order;
    // Backward: colours in reverse; rows of one colour are independent, so
    // their order inside a colour does not matter.
    std::stable_sort(backward.begin(), backward.end(),
                     [&](int a, int b) { return c.color[a] > c.color[b]; });
    auto x = testing::random_vector<T>(n, 2);
    auto ref = gs_sweep(M, n, 0.9, testing::to_double(x), testing::to_double(b), order);
    if (symmetric) ref = gs_sweep(M, n, 0.9, ref, testing::to_double(b), backward);
    s->apply(b.data(), x.data(), false, 1);
    EXPECT_LT(testing::max_rel_diff(x, ref), tol_for(T()));
    std::vector<T> x0(n, T(5));
    auto ref0 = gs_sweep(M, n, 0.9, std::vector<double>(n, 0.0), testing::to_double(b), order);
    if (symmetric) ref0 = gs_sweep(M, n, 0.9, ref0, testing::to_double(b), backward);
    s->apply(b.data(), x0.data(), true, 1);
    EXPECT_LT(testing::max_rel_diff(x0, ref0), tol_for(T()));
  }
}

TYPED_TEST(SmootherMulticolor, DiluSweepMatchesDenseFactorization) {
  using T = TypeParam;
  const int n = 70;
  auto A = testing::random_dominant<T>(n, 5, 61);
  const auto M = testing::to_dense(*A);
  auto s = build_solver<T>(solver_json("MULTICOLOR_DILU", "\"relaxation_factor\": 0.8"), A);
  const auto& color = as<MulticolorDILUSolver<T>>(s).coloring().color;
  // e_i = a_ii - sum_{color j < color i} a_ij a_ji / e_j, in colour order.
  std::vector<double> e(n);
  for (int i : color_order(color)) {
    e[i] = M[i * n + i];
    for (int j = 0; j < n; ++j)
      if (j != i && color[j] < color[i] && M[i * n + j] != 0) e[i] -= M[i * n + j] * M[j * n + i] / e[j];
  }
  // Mfull = (E + L) E^-1 (E + U) with L/U the couplings to earlier/later colours.
  std::vector<double> EL(n * n, 0.0), EU(n * n, 0.0), P(n * n, 0.0);
  for (int i = 0; i < n; ++i) {
    EL[i * n + i] = EU[i * n + i] = e[i];
    for (int j = 0; j < n; ++j) {
      if (j == i) continue;
      if (color[j] < color[i]) EL[i * n + j] = M[i * n + j];
      if (color[j] > color[i]) EU[i * n + j] = M[i * n + j];
    }
  }
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      if (EL[i * n + k] != 0)
        for (int j = 0; j < n; ++j) P[i * n + j] += EL[i * n + k] / e[k] * EU[k * n + j];
  for (int i = 0; i < n; ++i) EXPECT_NEAR(P[i * n + i], M[i * n + i], 1e-10 * std::abs(M[i * n + i]));
  const auto b = testing::random_vector<T>(n, 3);
  auto x = testing::random_vector<T>(n, 4);
  const auto r = testing::dense_residual(M, n, testing::to_double(x), testing::to_double(b));
  const auto d = dense_solve_rows(P, n, r);
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i) ref[i] = x[i] + 0.8 * d[i];
  s->apply(b.data(), x.data(), false, 1);
  EXPECT_LT(testing::max_rel_diff(x, ref), 5 * tol_for(T()));
  std::vector<T> x0(n, T(3));
  const auto d0 = dense_solve_rows(P, n, testing::to_double(b));
  for (int i = 0; i < n; ++i) ref[i] = 0.8 * d0[i];
  s->apply(b.data(), x0.data(), true, 1);
  EXPECT_LT(testing::max_rel_diff(x0, ref), 5 * tol_for(T()));
}

// ILU(0) of A in colour order by dense elimination restricted to A's
// pattern; returns L (unit, strictly lower in that order) times U, i.e. the
// preconditioner M = L U in the original indexing.
std::vector<double> ilu0_product(const std::vector<double>& M, int n,
                                 const std::vector<int>& order) {
  std::vector<int> pos(n);
  for (int k = 0; k < n; ++k) pos[order[k]] = k;
  // F holds the permuted matrix, factored in place.
  std::vector<double> F(n * n);
  std::vector<char> nz(n * n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      F[pos[i] * n + pos[j]] = M[i * n + j];
      nz[pos[i] * n + pos[j]] = M[i * n + j] != 0;
    }
  for (int i = 1; i < n; ++i)
    for (int k = 0; k < i; ++k) {
      if (!nz[i * n + k]) continue;
      F[i * n + k] /= F[k * n + k];
      for (int j = k + 1; j < n; ++j)
        if (nz[i * n + j]) F[i * n + j] -= F[i * n + k] * F[k * n + j];
    }
  std::vector<double> P(n * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k <= std::min(i, j); ++k) {
        const double l = k == i ? 1.0 : (k < i && nz[i * n + k] ? F[i * n + k] : 0.0);
        const double u = nz[k * n + j] || k == j ? F[k * n + j] : 0.0;
        s += l * u;
      }
      P[order[i] * n + order[j]] = s;
    }
  return P;
}

TYPED_TEST(SmootherMulticolor, IluSweepMatchesDenseIncompleteFactorization) {
  using T = TypeParam;
  const int n = 70;
  auto A = testing::random_dominant<T>(n, 5, 71);
  const auto M = testing::to_dense(*A);
  auto s = build_solver<T>(solver_json("MULTICOLOR_ILU", "\"relaxation_factor\": 0.8"), A);
  const auto& color = as<MulticolorILUSolver<T>>(s).coloring().color;
  const auto P = ilu0_product(M, n, color_order(color));
  // ILU(0) reproduces A on its pattern.
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (M[i * n + j] != 0) EXPECT_NEAR(P[i * n + j], M[i * n + j], 1e-10 * (1 + std::abs(M[i * n + j])));
  const auto b = testing::random_vector<T>(n, 5);
  auto x = testing::random_vector<T>(n, 6);
  const auto r = testing::dense_residual(M, n, testing::to_double(x), testing::to_double(b));
  const auto d = dense_solve_rows(P, n, r);
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i) ref[i] = x[i] + 0.8 * d[i];
  s->apply(b.data(), x.data(), false, 1);
  EXPECT_LT(testing::max_rel_diff(x, ref), 5 * tol_for(T()));
  std::vector<T> x0(n, T(-2));
  const auto d0 = dense_solve_rows(P, n, testing::to_double(b));
  for (int i = 0; i < n; ++i) ref[i] = 0.8 * d0[i];
  s->apply(b.data(), x0.data(), true, 1);
  EXPECT_LT(testing::max_rel_diff(x0, ref), 5 * tol_for(T()));
}

TYPED_TEST(SmootherMulticolor, IluIsExactWhenColorOrderCreatesNoFill) {
  using T = TypeParam;
  // Arrowhead: rows 0..n-2 couple only to the hub n-1. Greedy colouring puts
  // the hub last, so eliminating the other rows creates no fill and ILU(0)
  // is the exact LU: one sweep solves the system. Tridiagonal blocks of 3
  // (hub in the middle) behave the same.
  const int n = 40;
  std::vector<Index> rp{0}, ci;
  std::vector<T> v;
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < n - 1; ++i) {
    ci.insert(ci.end(), {i, n - 1});
    v.insert(v.end(), {T(3 + u(gen)), T(u(gen))});
    rp.push_back(static_cast<Index>(ci.size()));
  }
  for (int j = 0; j < n; ++j) {
    ci.push_back(j);
    v.push_back(j == n - 1 ? T(n) : T(u(gen)));
  }
  rp.push_back(static_cast<Index>(ci.size()));
  auto A = std::make_shared<CsrMatrix<T>>(
      make_csr<T>(n, n, rp.data(), ci.data(), v.data(), static_cast<Index>(ci.size())));
  auto s = build_solver<T>(solver_json("MULTICOLOR_ILU", "\"relaxation_factor\": 1.0"), A);
  const auto b = testing::random_vector<T>(n, 7);
  std::vector<T> x(n);
  s->apply(b.data(), x.data(), true, 1);
  EXPECT_LT(testing::max_rel_diff(x, testing::dense_solve(*A, b)), 20 * tol_for(T()));
}

TEST(SmootherMulticolorConvergence, PoissonStandaloneSolves) {
  const int m = 12;
  auto A = std::make_shared<CsrMatrix<double>>(testing::poisson2d<double>(m));
  const int n = A->nrows;
  const auto b = testing::random_vector<double>(n, 9);
  for (const char* name : {"MULTICOLOR_ILU", "MULTICOLOR_DILU"}) {
    SCOPED_TRACE(name);
    auto s = build_solver<double>(
        solver_json(name, "\"relaxation_factor\": 1.0, \"max_iters\": 2000, \"tolerance\": "
                          "1e-8, \"convergence\": \"RELATIVE_INI\""),
        A);
    std::vector<double> x(n);
    EXPECT_EQ(testing::solve_monitored(*s.solver, b, x), Status::kSuccess);
    EXPECT_LT(testing::relative_residual(*A, x, b), 1.01e-8);
    // Both are at least as strong as Gauss-Seidel (rate cos^2(pi h)).
    const double mu = std::cos(M_PI / (m + 1));
    EXPECT_LT(testing::asymptotic_rate(s->residual_history(), 10), mu * mu);
  }
}

TYPED_TEST(SmootherMulticolor, ValuesOnlyResetupKeepsColoringAndMatchesFreshSetup) {
  using T = TypeParam;
  const int n = 200;
  auto A = testing::random_dominant<T>(n, 6, 81);
  auto A2 = std::make_shared<CsrMatrix<T>>(*A);
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  for (auto& v : A2->val) v = static_cast<T>(v * u(gen));
  for (Index i = 0; i < n; ++i) A2->val[A2->diag_pos[i]] = std::abs(A2->val[A2->diag_pos[i]]) * T(3);
  const auto b = testing::random_vector<T>(n, 1);
  for (const char* name : {"MULTICOLOR_GS", "MULTICOLOR_DILU", "MULTICOLOR_ILU"}) {
    SCOPED_TRACE(name);
    auto reused = build_solver<T>(solver_json(name, "\"symmetric_GS\": 1"), A);
    const Solver<T>* before = reused.solver.get();
    reused->setup(A2, /*reuse_structure=*/true);
    auto fresh = build_solver<T>(solver_json(name, "\"symmetric_GS\": 1"), A2);
    ASSERT_EQ(before, reused.solver.get());
    auto x1 = testing::random_vector<T>(n, 2), x2 = x1;
    reused->apply(b.data(), x1.data(), false, 2);
    fresh->apply(b.data(), x2.data(), false, 2);
    EXPECT_EQ(x1, x2);
  }
}

// Large enough for the OpenMP paths (the sweeps go parallel above
// kParallelRows rows): every row's arithmetic is independent of the thread count, so the
// results must be bitwise equal to a one-thread run. A race between rows of
// one colour, or a missing barrier between colours, breaks the equality.
TYPED_TEST(SmootherMulticolor, ParallelSweepsEqualOneThreadSweeps) {
  using T = TypeParam;
  std::vector<std::shared_ptr<const CsrMatrix<T>>> mats = {
      std::make_shared<CsrMatrix<T>>(testing::poisson2d<T>(140)),
      testing::random_dominant<T>(20000, 6, 123)};
  const char* configs[][2] = {
      {"BLOCK_JACOBI", ""},
      {"JACOBI_L1", ""},
      {"MULTICOLOR_GS", "\"symmetric_GS\": 1"},
      {"MULTICOLOR_DILU", ""},
      {"MULTICOLOR_ILU", ""},
      {"CHEBYSHEV", "\"preconditioner\": {\"solver\": \"JACOBI_L1\"}, "
                    "\"chebyshev_lambda_estimate_mode\": 2, \"chebyshev_polynomial_order\": 3"},
      {"CHEBYSHEV", "\"preconditioner\": {\"solver\": \"MULTICOLOR_GS\"}, "
                    "\"chebyshev_lambda_estimate_mode\": 3"},
  };
  const int saved = omp_get_max_threads();
  for (size_t m = 0; m < mats.size(); ++m) {
    const int n = mats[m]->nrows;
    const auto b = testing::random_vector<T>(n, 17);
    for (const auto& c : configs) {
      SCOPED_TRACE(std::string(c[0]) + " " + c[1] + " matrix " + std::to_string(m));
      std::vector<std::vector<T>> results;
      for (int threads : {1, 3}) {
        omp_set_num_threads(threads);
        auto s = build_solver<T>(solver_json(c[0], c[1]), mats[m]);
        std::vector<T> x(n);
        s->apply(b.data(), x.data(), true, 2);
        results.push_back(x);
      }
      EXPECT_EQ(results[0], results[1]);
    }
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace jaxamg
