// Aggregation AMG end to end: PCG preconditioned by one AMG cycle with the
// AGGREGATION algorithm, through the public LinearSolver and AmgX JSON, on
// 3D Poisson to a relative residual of 1e-8. Iteration bounds are the
// measured counts plus a small margin, so a weaker hierarchy fails here.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "problems.h"

namespace jaxamg {
namespace {

struct AmgCase {
  std::string selector;
  std::string smoother;
  std::string cycle = "V";
  int error_scaling = 0;
  int sweeps = 1;
};

std::string pcg_aggregation_json(const AmgCase& c, const std::string& amg_extra = "") {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG",
      "tolerance": 1e-8, "convergence": "RELATIVE_INI", "monitor_residual": 1, "max_iters": 200,
      "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION",
      "max_iters": 1, "selector": ")" +
         c.selector + R"(", "smoother": ")" + c.smoother + R"(", "cycle": ")" + c.cycle +
         R"(", "error_scaling": )" + std::to_string(c.error_scaling) +
         R"(, "presweeps": )" + std::to_string(c.sweeps) + R"(, "postsweeps": )" +
         std::to_string(c.sweeps) + amg_extra + "}}}";
}

struct Outcome {
  int iterations = 0;
  std::vector<LevelInfo> levels;
};

// Solves from x = 0; the solve must reach 1e-8 in the true residual.
Outcome solve_poisson(LinearSolver<double>& s, const CsrMatrix<double>& A) {
  const auto b = testing::random_vector<double>(A.nrows, 17);
  std::vector<double> x(A.nrows, 0.0);
  const SolveResult r = s.solve(b.data(), x.data(), A.nrows, false);
  EXPECT_EQ(r.status, Status::kSuccess);
  EXPECT_LE(testing::relative_residual(A, x, b), 1e-8);
  return {r.iterations, s.hierarchy()};
}

Outcome setup_and_solve(const AmgCase& c, const CsrMatrix<double>& A) {
  LinearSolver<double> s(pcg_aggregation_json(c));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  return solve_poisson(s, A);
}

TEST(AggregationAmg, PcgOnPoisson3D32) {
  const auto A = testing::poisson3d<double>(32);
  struct Expect {
    AmgCase c;
    int max_iterations;
    double min_ratio;  // rows of level 0 / rows of level 1
  };
  const Expect cases[] = {
      {{"SIZE_2", "BLOCK_JACOBI"}, 23, 2.0},
      {{"SIZE_4", "BLOCK_JACOBI"}, 25, 4.0},
      {{"SIZE_8", "BLOCK_JACOBI"}, 27, 8.0},
      {{"SIZE_2", "JACOBI_L1"}, 27, 2.0},
      {{"SIZE_8", "JACOBI_L1"}, 34, 8.0},
  };
  for (const Expect& e : cases) {
    SCOPED_TRACE(e.c.selector + " + " + e.c.smoother);
    const Outcome o = setup_and_solve(e.c, A);
    EXPECT_LE(o.iterations, e.max_iterations);
    ASSERT_GE(o.levels.size(), 2u);
    EXPECT_GE(static_cast<double>(o.levels[0].rows) / o.levels[1].rows, e.min_ratio);
    // The hierarchy stops at AmgX's dense LU size (128 rows).
    EXPECT_LE(o.levels.back().rows, 128 * 8);
  }
}

// At 48^3: a V-cycle with error scaling and two sweeps, and the K-cycle over
// SIZE_8 aggregates, whose count must not grow from 24^3 to 48^3 (a V-cycle
// over unsmoothed aggregates does grow).
TEST(AggregationAmg, PcgOnPoisson3D48) {
  const auto A = testing::poisson3d<double>(48);
  const AmgCase vcycle{"SIZE_2", "BLOCK_JACOBI", "V", 3, 2};
  EXPECT_LE(setup_and_solve(vcycle, A).iterations, 14);

  const AmgCase kcycle{"SIZE_8", "BLOCK_JACOBI", "CG", 3, 1};
  const int large = setup_and_solve(kcycle, A).iterations;
  EXPECT_LE(large, 16);
  const int small = setup_and_solve(kcycle, testing::poisson3d<double>(24)).iterations;
  EXPECT_LE(large, small + 1);
}

// Resetup with structure reuse keeps the aggregates: for 2 A (the same
// aggregates a fresh setup would choose) the hierarchy and the iteration
// count are unchanged; for perturbed values it still converges.
TEST(AggregationAmg, ResetupReusesAggregates) {
  const auto A = testing::poisson3d<double>(24);
  const AmgCase c{"SIZE_4", "BLOCK_JACOBI", "CG", 2, 1};
  LinearSolver<double> s(pcg_aggregation_json(c, R"(, "structure_reuse_levels": -1)"));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const Outcome first = solve_poisson(s, A);

  CsrMatrix<double> A2 = A;
  for (auto& v : A2.val) v *= 2.0;
  s.resetup(A2.val.data(), A2.nnz());
  const Outcome second = solve_poisson(s, A2);
  EXPECT_EQ(second.iterations, first.iterations);
  ASSERT_EQ(second.levels.size(), first.levels.size());
  for (std::size_t l = 0; l < first.levels.size(); ++l) {
    EXPECT_EQ(second.levels[l].rows, first.levels[l].rows);
    EXPECT_EQ(second.levels[l].nnz, first.levels[l].nnz);
  }

  // A jump in the coefficient on the same pattern.
  const auto A3 = testing::jump3d<double>(24, 10.0);
  ASSERT_EQ(A3.col, A.col);
  s.resetup(A3.val.data(), A3.nnz());
  const Outcome third = solve_poisson(s, A3);
  EXPECT_LE(third.iterations, 3 * first.iterations);
}

}  // namespace
}  // namespace jaxamg
