// Classical AMG inside the solver stack: PCG preconditioned by one V(1,1)
// cycle of classical AMG (PMIS + extended+i truncated to 4 entries) on 3D
// Poisson, whose iteration count must not grow with the grid.
#include <gtest/gtest.h>

#include <cstdio>

#include "api/linear_solver.h"
#include "problems.h"

namespace jaxamg {
namespace {

struct Outcome {
  int iterations;
  double residual;
  double operator_complexity;
  double grid_complexity;
  std::vector<LevelInfo> levels;
};

template <class T>
Outcome solve_poisson3d(int n, const std::string& amg_params, const std::string& smoother,
                        double omega) {
  const std::string cfg =
      R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG", "tolerance": 1e-8,
          "convergence": "RELATIVE_INI", "monitor_residual": 1, "max_iters": 100,
          "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
            "max_iters": 1, "cycle": "V", "presweeps": 1, "postsweeps": 1, )" +
      amg_params + R"(, "smoother": {"scope": "smoother", "solver": ")" + smoother +
      R"(", "relaxation_factor": )" + std::to_string(omega) +
      R"(}, "coarse_solver": "DENSE_LU_SOLVER"}}})";
  const auto A = testing::poisson3d<T>(n);
  LinearSolver<T> s(cfg);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const auto b = testing::random_vector<T>(A.nrows, 7);
  std::vector<T> x(A.nrows, T(0));
  const SolveResult r = s.solve(b.data(), x.data(), A.nrows, false);
  Outcome o{r.iterations, testing::relative_residual(A, x, b), 0, 0, s.hierarchy()};
  double nnz = 0, rows = 0;
  for (const LevelInfo& l : o.levels) {
    nnz += l.nnz;
    rows += l.rows;
  }
  o.operator_complexity = nnz / A.nnz();
  o.grid_complexity = rows / A.nrows;
  std::printf("  %d^3 %s(%.2g): %d iterations, residual %.2e, levels %zu, complexity op %.3f grid %.3f\n",
              n, smoother.c_str(), omega, o.iterations, o.residual, o.levels.size(),
              o.operator_complexity, o.grid_complexity);
  std::printf("    rows:");
  for (const LevelInfo& l : o.levels) std::printf(" %d", l.rows);
  std::printf("\n    nnz/row:");
  for (const LevelInfo& l : o.levels) std::printf(" %.1f", double(l.nnz) / l.rows);
  std::printf("\n");
  return o;
}

const char* kPmisD2 =
    R"("selector": "PMIS", "interpolator": "D2", "interp_max_elements": 4, "strength_threshold": 0.25)";

// l1-Jacobi converges without damping (as in hypre); BLOCK_JACOBI keeps
// AmgX's default 0.9.
TEST(ClassicalAmg, PcgPoisson3dIterationsAndComplexity) {
  for (int n : {32, 48}) {
    for (auto [smoother, omega] : {std::pair<const char*, double>{"JACOBI_L1", 1.0},
                                   std::pair<const char*, double>{"BLOCK_JACOBI", 0.9}}) {
      const Outcome o = solve_poisson3d<double>(n, kPmisD2, smoother, omega);
      EXPECT_LE(o.iterations, 12) << n << "^3 " << smoother;
      EXPECT_LT(o.residual, 1e-8 * 1.01) << n << "^3 " << smoother;
      // Measured 2.68 (32^3) and 2.73 (48^3): the first coarse level alone
      // adds 1.28 (PMIS keeps 31% of the points of the 7-point grid and the
      // Galerkin operator of a 4-entry extended+i P has 27-28 entries per
      // row). theta = 0.5 gives 3.2, theta = 0.1 2.52-2.58 with 13-14
      // iterations, interp_max_elements 3 2.49 with 15. One aggressive
      // level is the way below 2.5 (next test).
      EXPECT_LE(o.operator_complexity, 2.8) << n << "^3 " << smoother;
      EXPECT_GE(o.levels.size(), 3u);
    }
  }
}

// AGGRESSIVE_PMIS + MULTIPASS on the finest level (AmgX's aggressive_levels),
// D2 below: a much cheaper hierarchy for some more iterations.
TEST(ClassicalAmg, AggressiveFirstLevel) {
  const std::string params = std::string(kPmisD2) + R"(, "aggressive_levels": 1)";
  for (int n : {32, 48}) {
    const Outcome o = solve_poisson3d<double>(n, params, "JACOBI_L1", 1.0);
    EXPECT_LE(o.iterations, 25) << n << "^3";
    EXPECT_LT(o.residual, 1e-8 * 1.01) << n << "^3";
    EXPECT_LE(o.operator_complexity, 1.5) << n << "^3";
    // The aggressive level keeps well under a fifth of the points.
    EXPECT_LT(o.levels.at(1).rows, o.levels.at(0).rows / 5);
  }
}

}  // namespace
}  // namespace jaxamg
