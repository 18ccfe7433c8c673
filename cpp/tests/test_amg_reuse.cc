// AMG resetup with structure reuse, and the transposed solver built from an
// existing hierarchy, with an injected geometric coarsening.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "backend/cpu/spgemm.h"
#include "test_amg_util.h"

namespace jaxamg {
namespace {

using testing::amg_json;
using testing::CoarseningCounters;
using testing::geometric;
using testing::InjectCoarsening;
using testing::make_amg;

// The 1D operator-dependent hierarchy: A -> 31 -> 15 -> 7 -> 3 for n = 63
// (four transfers; a fifth build at 3 rows is rejected by min_coarse_rows).
constexpr int kN = 63;
constexpr int kTransfers = 4;

std::vector<double> solve_from_zero(Solver<double>& s, const std::vector<double>& b) {
  std::vector<double> x(b.size(), 0.0);
  s.solve(b.data(), x.data(), true);
  return x;
}

// Same values, new positive diagonal shift and coupling scaling: SPD, and
// the operator-dependent P changes its values.
std::shared_ptr<CsrMatrix<double>> perturbed(const CsrMatrix<double>& A, unsigned seed) {
  auto B = std::make_shared<CsrMatrix<double>>(A);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  // Symmetric scaling D A D keeps symmetry and definiteness.
  std::vector<double> d(A.nrows);
  for (auto& v : d) v = u(gen);
  for (Index i = 0; i < A.nrows; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) B->val[k] *= d[i] * d[A.col[k]];
  return B;
}

void expect_same_levels(AmgSolver<double>& a, AmgSolver<double>& b, double tol) {
  ASSERT_EQ(a.num_levels(), b.num_levels());
  for (int l = 0; l < a.num_levels(); ++l) {
    const auto& A = a.level_matrix(l);
    const auto& B = b.level_matrix(l);
    ASSERT_EQ(A.col, B.col) << "level " << l;
    for (Index k = 0; k < A.nnz(); ++k) {
      EXPECT_NEAR(A.val[k], B.val[k], tol * std::abs(B.val[k])) << "level " << l;
    }
    ASSERT_EQ(a.transfer(l).P.col, b.transfer(l).P.col);
    for (Index k = 0; k < a.transfer(l).P.nnz(); ++k) {
      EXPECT_NEAR(a.transfer(l).P.val[k], b.transfer(l).P.val[k], tol);
    }
  }
}

TEST(AmgReuse, ResetupWithUnchangedValuesReproducesTheSolveExactly) {
  CoarseningCounters counters;
  InjectCoarsening<double> inject(geometric<double>(1, &counters));
  auto A = std::make_shared<CsrMatrix<double>>(testing::poisson1d<double>(kN));
  auto run = make_amg<double>(amg_json("\"structure_reuse_levels\": -1"), A);
  EXPECT_EQ(counters.builds, kTransfers + 1);
  const auto b = testing::random_vector<double>(kN, 1);
  const auto x1 = solve_from_zero(*run.solver, b);
  const int it1 = run.solver->iterations();

  // A fresh matrix object with the same values, as LinearSolver::resetup makes.
  auto same = std::make_shared<CsrMatrix<double>>(*A);
  run.solver->setup(same, true);
  EXPECT_EQ(counters.rebuilds, kTransfers);
  EXPECT_EQ(counters.builds, kTransfers + 2);  // only the coarsest tries again
  const auto x2 = solve_from_zero(*run.solver, b);
  EXPECT_EQ(run.solver->iterations(), it1);
  EXPECT_EQ(x1, x2);  // bit for bit
}

TEST(AmgReuse, ResetupWithNewValuesMatchesAFreshSetup) {
  CoarseningCounters counters;
  InjectCoarsening<double> inject(geometric<double>(1, &counters));
  auto A = std::make_shared<CsrMatrix<double>>(testing::poisson1d<double>(kN));
  auto run = make_amg<double>(amg_json("\"structure_reuse_levels\": -1"), A);
  const auto b = testing::random_vector<double>(kN, 2);
  for (unsigned seed : {11u, 12u}) {
    auto A2 = perturbed(*A, seed);
    const int rebuilds = counters.rebuilds;
    run.solver->setup(A2, true);
    EXPECT_EQ(counters.rebuilds, rebuilds + kTransfers);
    auto fresh = make_amg<double>(amg_json(), A2);
    expect_same_levels(run.amg(), fresh.amg(), 1e-13);
    const auto x = solve_from_zero(*run.solver, b);
    EXPECT_EQ(run.solver->status(), Status::kSuccess);
    EXPECT_LE(testing::relative_residual(*A2, x, b), 1e-8);
  }
  // Scaling every value scales the solution.
  auto A3 = std::make_shared<CsrMatrix<double>>(*A);
  for (auto& v : A3->val) v *= 4.0;
  run.solver->setup(A3, true);
  const auto x = solve_from_zero(*run.solver, b);
  const auto ref = testing::dense_solve(*A3, b);
  for (int i = 0; i < kN; ++i) EXPECT_NEAR(x[i], ref[i], 1e-7 * (1 + std::abs(ref[i])));
}

TEST(AmgReuse, StructureReuseLevelsSelectsTheKeptTransfers) {
  CoarseningCounters counters;
  InjectCoarsening<double> inject(geometric<double>(1, &counters));
  auto A = std::make_shared<CsrMatrix<double>>(testing::poisson1d<double>(kN));
  struct Case {
    const char* config;
    bool reuse;
    int rebuilds;
  };
  // structure_reuse_levels counts levels from the finest: 1 keeps only the
  // fine level, 2 also the first transfer, -1 all of them.
  for (const Case& c : {Case{"0", true, 0}, Case{"1", true, 0}, Case{"2", true, 1},
                        Case{"4", true, 3}, Case{"-1", true, kTransfers},
                        Case{"-1", false, 0}}) {
    SCOPED_TRACE(std::string(c.config) + (c.reuse ? " reuse" : " full"));
    auto run = make_amg<double>(amg_json(std::string("\"structure_reuse_levels\": ") + c.config), A);
    counters = CoarseningCounters();
    auto A2 = perturbed(*A, 5);
    run.solver->setup(A2, c.reuse);
    EXPECT_EQ(counters.rebuilds, c.rebuilds);
    EXPECT_EQ(counters.builds + counters.rebuilds, kTransfers + 1);
    auto fresh = make_amg<double>(amg_json(), A2);
    expect_same_levels(run.amg(), fresh.amg(), 1e-13);
  }
}

TEST(AmgReuse, ChangedSparsityFallsBackToAFullSetup) {
  CoarseningCounters counters;
  InjectCoarsening<double> inject(geometric<double>(2, &counters));
  auto A = std::make_shared<CsrMatrix<double>>(testing::poisson2d<double>(15));
  auto run = make_amg<double>(amg_json("\"structure_reuse_levels\": -1"), A);
  // A 9-point operator on the same grid: more entries per row, diagonally
  // dominant (a_ii = 5 against off-diagonal sums of at most 5).
  const int n = 15;
  std::vector<Index> rp{0}, ci;
  std::vector<double> v;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int xx = x + dx, yy = y + dy;
          if (xx < 0 || yy < 0 || xx >= n || yy >= n) continue;
          ci.push_back(yy * n + xx);
          v.push_back(dx == 0 && dy == 0 ? 5.0 : (dx != 0 && dy != 0 ? -0.25 : -1.0));
        }
      rp.push_back(static_cast<Index>(ci.size()));
    }
  auto B = std::make_shared<CsrMatrix<double>>(
      make_csr<double>(n * n, n * n, rp.data(), ci.data(), v.data(), static_cast<Index>(ci.size())));
  counters = CoarseningCounters();
  run.solver->setup(B, true);
  EXPECT_EQ(counters.rebuilds, 0);
  const auto b = testing::random_vector<double>(B->nrows, 3);
  const auto x = solve_from_zero(*run.solver, b);
  EXPECT_EQ(run.solver->status(), Status::kSuccess);
  EXPECT_LE(testing::relative_residual(*B, x, b), 1e-8);
}

TEST(AmgTransposed, SolvesTheTransposedSystemWithTheSameHierarchy) {
  CoarseningCounters counters;
  // R != P^T (rows of R scaled), so that swapping the roles matters.
  InjectCoarsening<double> inject(geometric<double>(2, &counters, 0.25));
  const int n = 15;
  auto A = std::make_shared<const CsrMatrix<double>>(testing::convection_diffusion2d<double>(n, 0.05));
  ASSERT_FALSE(is_symmetric(*A, 1e-12));
  auto run = make_amg<double>(amg_json(), A);
  const int builds = counters.builds;
  auto At = std::make_shared<const CsrMatrix<double>>(transpose(*A));
  auto tr = run.solver->make_transposed(At);
  EXPECT_EQ(counters.builds, builds);  // no coarsening for the transpose
  auto& t = dynamic_cast<AmgSolver<double>&>(*tr);
  auto& o = run.amg();
  ASSERT_EQ(t.num_levels(), o.num_levels());
  for (int l = 0; l < o.num_levels(); ++l) {
    const auto ref = transpose(o.level_matrix(l));
    EXPECT_EQ(t.level_matrix(l).col, ref.col);
    EXPECT_EQ(t.level_matrix(l).val, ref.val);
    if (l + 1 < o.num_levels()) {
      EXPECT_EQ(t.transfer(l).P.val, transpose(o.transfer(l).R).val);
      EXPECT_EQ(t.transfer(l).R.val, transpose(o.transfer(l).P).val);
      // The transposed coarse operator is the Galerkin product of the
      // swapped transfers: (R A P)^T = P^T A^T R^T.
      const auto galerkin = cpu::spgemm(t.transfer(l).R, cpu::spgemm(t.level_matrix(l), t.transfer(l).P));
      ASSERT_EQ(galerkin.col, t.level_matrix(l + 1).col);
      for (Index k = 0; k < galerkin.nnz(); ++k) {
        EXPECT_NEAR(galerkin.val[k], t.level_matrix(l + 1).val[k], 1e-12 * std::abs(galerkin.val[k]));
      }
    }
  }
  const auto b = testing::random_vector<double>(n * n, 4);
  std::vector<double> x(n * n, 0.0);
  EXPECT_EQ(tr->solve(b.data(), x.data(), true), Status::kSuccess);
  const auto ref = testing::dense_solve(*At, b);
  double err = 0, nrm = 0;
  for (int i = 0; i < n * n; ++i) {
    err = std::max(err, std::abs(x[i] - ref[i]));
    nrm = std::max(nrm, std::abs(ref[i]));
  }
  EXPECT_LT(err, 1e-6 * nrm);
  // The forward solver is untouched and still solves A x = b.
  std::vector<double> y(n * n, 0.0);
  EXPECT_EQ(run.solver->solve(b.data(), y.data(), true), Status::kSuccess);
  EXPECT_LE(testing::relative_residual(*A, y, b), 1e-8);
}

TEST(AmgTransposed, LinearSolverTransposedSolveUsesTheHierarchy) {
  CoarseningCounters counters;
  InjectCoarsening<double> inject(geometric<double>(2, &counters, 0.25));
  const int n = 31;
  const auto A = testing::convection_diffusion2d<double>(n, 0.05);
  LinearSolver<double> solver(amg_json());
  solver.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const int builds = counters.builds;
  const auto b = testing::random_vector<double>(A.nrows, 6);
  std::vector<double> x(A.nrows, 0.0);
  const SolveResult r = solver.solve(b.data(), x.data(), A.nrows, false, /*transpose=*/true);
  EXPECT_EQ(r.status, Status::kSuccess);
  EXPECT_EQ(counters.builds, builds);
  EXPECT_LE(testing::relative_residual(transpose(A), x, b), 1e-8);
}

}  // namespace
}  // namespace jaxamg
