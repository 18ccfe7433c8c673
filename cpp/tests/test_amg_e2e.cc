// End-to-end AMG with the real coarsenings (classical PMIS, aggregation),
// smoothers, dense LU coarse solver and Krylov outer solvers.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "test_amg_util.h"

namespace jaxamg {
namespace {

using testing::make_amg;

// PCG to a relative residual of 1e-8, preconditioned by one AMG cycle whose
// scope "amg" gets `amg` added.
std::string pcg_amg_json(const std::string& amg) {
  return "{\"config_version\": 2, \"solver\": {\"solver\": \"PCG\", \"scope\": \"main\", "
         "\"max_iters\": 100, \"monitor_residual\": 1, \"convergence\": \"RELATIVE_INI\", "
         "\"tolerance\": 1e-8, \"preconditioner\": {\"solver\": \"AMG\", \"scope\": \"amg\", "
         "\"max_iters\": 1, " + amg + "}}}";
}

const char* kClassical =
    "\"algorithm\": \"CLASSICAL\", \"selector\": \"PMIS\", \"interpolator\": \"D2\", "
    "\"interp_max_elements\": 4, \"presweeps\": 2, \"postsweeps\": 2";

// Iterations of a solve from zero; fails the test if it does not converge.
int solve_iterations(Solver<double>& s, const CsrMatrix<double>& A, unsigned seed = 1) {
  const auto b = testing::random_vector<double>(A.nrows, seed);
  std::vector<double> x(A.nrows, 0.0);
  EXPECT_EQ(s.solve(b.data(), x.data(), true), Status::kSuccess);
  EXPECT_LE(testing::relative_residual(A, x, b), 1e-8);
  return s.iterations();
}

TEST(AmgEndToEnd, PcgClassicalPmisOnPoisson3d) {
  auto A = std::make_shared<const CsrMatrix<double>>(testing::poisson3d<double>(32));
  auto run = make_amg<double>(pcg_amg_json(std::string(kClassical) + ", \"print_grid_stats\": 1"), A);
  EXPECT_LE(solve_iterations(*run.solver, *A), 12);
  const auto levels = run.solver->hierarchy();
  ASSERT_GE(levels.size(), 3u);
  EXPECT_EQ(levels[0].rows, 32768);
  // Classical coarsening of 3D Poisson: each level well below half the rows.
  for (std::size_t l = 1; l < levels.size(); ++l) EXPECT_LT(levels[l].rows, levels[l - 1].rows / 2);
  EXPECT_NE(run.ctx->log.str().find("AMG Grid:"), std::string::npos);
}

TEST(AmgEndToEnd, ClassicalResetupReusesStructure) {
  auto A = std::make_shared<const CsrMatrix<double>>(testing::poisson3d<double>(20));
  auto run = make_amg<double>(
      pcg_amg_json(std::string(kClassical) + ", \"structure_reuse_levels\": -1"), A);
  const auto b = testing::random_vector<double>(A->nrows, 2);
  std::vector<double> x1(A->nrows, 0.0), x2(A->nrows, 0.0);
  run.solver->solve(b.data(), x1.data(), true);
  const auto levels = run.solver->hierarchy();
  // Same values: the same solve, bit for bit.
  run.solver->setup(std::make_shared<const CsrMatrix<double>>(*A), true);
  run.solver->solve(b.data(), x2.data(), true);
  EXPECT_EQ(x1, x2);
  // New values (a symmetric diagonal scaling D A D): same level sizes,
  // still converging.
  auto B = std::make_shared<CsrMatrix<double>>(*A);
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  std::vector<double> d(A->nrows);
  for (auto& v : d) v = u(gen);
  for (Index i = 0; i < B->nrows; ++i)
    for (Index k = B->row_ptr[i]; k < B->row_ptr[i + 1]; ++k) B->val[k] *= d[i] * d[B->col[k]];
  run.solver->setup(B, true);
  const auto reused = run.solver->hierarchy();
  ASSERT_EQ(reused.size(), levels.size());
  for (std::size_t l = 0; l < levels.size(); ++l) {
    EXPECT_EQ(reused[l].rows, levels[l].rows);
    EXPECT_EQ(reused[l].nnz, levels[l].nnz);
  }
  EXPECT_LE(solve_iterations(*run.solver, *B), 25);
}

TEST(AmgEndToEnd, ClassicalTransposedSolveOfNonsymmetricSystem) {
  const int n = 20;
  const auto A = testing::convection_diffusion2d<double>(n, 0.02);
  LinearSolver<double> solver(
      "{\"config_version\": 2, \"solver\": {\"solver\": \"FGMRES\", \"scope\": \"main\", "
      "\"max_iters\": 100, \"monitor_residual\": 1, \"convergence\": \"RELATIVE_INI\", "
      "\"tolerance\": 1e-10, \"preconditioner\": {\"solver\": \"AMG\", \"scope\": \"amg\", "
      "\"max_iters\": 1, \"selector\": \"PMIS\", \"interpolator\": \"D2\", "
      "\"smoother\": {\"scope\": \"gs\", \"solver\": \"GS\"}}}}");
  solver.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const auto b = testing::random_vector<double>(A.nrows, 4);
  std::vector<double> x(A.nrows, 0.0);
  const SolveResult r = solver.solve(b.data(), x.data(), A.nrows, false, /*transpose=*/true);
  EXPECT_EQ(r.status, Status::kSuccess);
  const auto ref = testing::dense_solve(transpose(A), b);
  double err = 0, nrm = 0;
  for (Index i = 0; i < A.nrows; ++i) {
    err = std::max(err, std::abs(x[i] - ref[i]));
    nrm = std::max(nrm, std::abs(ref[i]));
  }
  EXPECT_LT(err, 1e-7 * nrm);
}

TEST(AmgEndToEnd, AggregationKCycleKeepsIterationsFlat) {
  // Unsmoothed aggregation: V-cycle counts grow with the grid; the CG
  // K-cycle keeps them flat.
  std::vector<int> kcycle, vcycle;
  for (int n : {16, 24, 32}) {
    auto A = std::make_shared<const CsrMatrix<double>>(testing::poisson3d<double>(n));
    auto k = make_amg<double>(
        pcg_amg_json("\"algorithm\": \"AGGREGATION\", \"selector\": \"SIZE_4\", \"cycle\": \"CG\""), A);
    kcycle.push_back(solve_iterations(*k.solver, *A));
    auto v = make_amg<double>(
        pcg_amg_json("\"algorithm\": \"AGGREGATION\", \"selector\": \"SIZE_4\", \"cycle\": \"V\""), A);
    vcycle.push_back(solve_iterations(*v.solver, *A));
  }
  EXPECT_LE(kcycle.back(), kcycle.front() + 2);
  EXPECT_LT(kcycle.back(), vcycle.back());
  EXPECT_GT(vcycle.back(), vcycle.front());
}

TEST(AmgEndToEnd, AggregationResetupKeepsAggregates) {
  auto A = std::make_shared<const CsrMatrix<double>>(testing::poisson3d<double>(24));
  auto run = make_amg<double>(
      pcg_amg_json("\"algorithm\": \"AGGREGATION\", \"selector\": \"SIZE_8\", \"cycle\": \"CGF\", "
                   "\"structure_reuse_levels\": -1"), A);
  const int it = solve_iterations(*run.solver, *A);
  EXPECT_LE(it, 25);
  const auto levels = run.solver->hierarchy();
  // Values scaled by 3: aggregates and coarse patterns are kept, every
  // level scales by 3, and PCG takes the same number of iterations.
  auto B = std::make_shared<CsrMatrix<double>>(*A);
  for (auto& v : B->val) v *= 3.0;
  run.solver->setup(B, true);
  const auto reused = run.solver->hierarchy();
  ASSERT_EQ(reused.size(), levels.size());
  for (std::size_t l = 0; l < levels.size(); ++l) EXPECT_EQ(reused[l].nnz, levels[l].nnz);
  EXPECT_EQ(solve_iterations(*run.solver, *B), it);
}

}  // namespace
}  // namespace jaxamg
