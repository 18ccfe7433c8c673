// GMRES and FGMRES allocate their basis vectors as the Arnoldi steps reach
// them (solvers/krylov/lazy_basis.h): none at setup, only as many as a solve
// uses, reused by later solves, with the solution of a solver that had them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "api/linear_solver.h"
#include "problems.h"
#include "solvers/krylov/gmres_cycle.h"

namespace jaxamg {
namespace {

using testing::random_vector;

std::string config(const std::string& name, int restart, int max_iters,
                   const std::string& precond) {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + name +
         R"(", "gmres_n_restart": )" + std::to_string(restart) +
         R"(, "max_iters": )" + std::to_string(max_iters) +
         R"(, "tolerance": 1e-8, "convergence": "RELATIVE_INI_CORE", "monitor_residual": 1,
         "store_res_history": 1, "preconditioner": {"scope": "p", "solver": ")" + precond +
         R"(", "max_iters": 1, "algorithm": "CLASSICAL", "selector": "PMIS",
         "smoother": {"scope": "s", "solver": "MULTICOLOR_GS"},
         "coarse_solver": "DENSE_LU_SOLVER"}}})";
}

std::size_t stored(LinearSolver<double>& s) {
  auto* g = dynamic_cast<krylov::GmresCycle<double>*>(&s.solver());
  EXPECT_NE(g, nullptr);
  return g ? g->stored_vectors() : 0;
}

struct Solved {
  std::vector<double> x;
  int iterations = 0;
};

Solved solve(LinearSolver<double>& s, const std::vector<double>& b) {
  Solved o;
  o.x.assign(b.size(), 0.0);
  const SolveResult r = s.solve(b.data(), o.x.data(), static_cast<Index>(b.size()), false);
  o.iterations = r.iterations;
  return o;
}

// n-vectors a solve of k Arnoldi steps (k <= restart) needs: v_0..v_k, and
// z_0..z_{k-1} (FGMRES with a preconditioner) or one z (GMRES with one).
std::size_t needed(const std::string& name, bool precond, int k) {
  const std::size_t v = static_cast<std::size_t>(k) + 1;
  if (!precond) return v;
  return name == "FGMRES" ? v + static_cast<std::size_t>(k) : v + 1;
}

class LazyBasis : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(LazyBasis, AllocatesWhatTheSolveUsesAndReusesIt) {
  const std::string name = GetParam().first;
  const std::string precond = GetParam().second;
  const bool has_precond = precond != "NOSOLVER";
  const CsrMatrix<double> A = testing::convection_diffusion2d<double>(24, 0.05);
  const std::vector<double> b1 = random_vector<double>(A.nrows, 1);
  const std::vector<double> b2 = random_vector<double>(A.nrows, 2);
  const int restart = 200;  // more than any of these solves takes

  LinearSolver<double> s(config(name, restart, 400, precond));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  EXPECT_EQ(stored(s), 0u) << "setup allocated basis vectors";

  const Solved first = solve(s, b1);
  ASSERT_GT(first.iterations, 0);
  ASSERT_LT(first.iterations, restart);
  EXPECT_LT(testing::relative_residual(A, first.x, b1), 1e-7);
  EXPECT_EQ(stored(s), needed(name, has_precond, first.iterations));

  // The same solve again: same vectors, same result.
  const std::size_t after_first = stored(s);
  const Solved again = solve(s, b1);
  EXPECT_EQ(again.x, first.x);
  EXPECT_EQ(again.iterations, first.iterations);
  EXPECT_EQ(stored(s), after_first);

  // Another right-hand side: grows only if it takes more steps, and gives
  // what a fresh solver gives.
  const Solved second = solve(s, b2);
  EXPECT_EQ(stored(s), needed(name, has_precond, std::max(first.iterations, second.iterations)));
  LinearSolver<double> fresh(config(name, restart, 400, precond));
  fresh.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const Solved ref = solve(fresh, b2);
  EXPECT_EQ(second.x, ref.x);
  EXPECT_EQ(second.iterations, ref.iterations);

  // A resetup keeps the vectors (same size).
  s.resetup(A.val.data(), A.nnz());
  EXPECT_EQ(stored(s), needed(name, has_precond, std::max(first.iterations, second.iterations)));
  EXPECT_EQ(solve(s, b2).x, ref.x);
}

TEST_P(LazyBasis, RestartsBoundTheStorage) {
  const std::string name = GetParam().first;
  const std::string precond = GetParam().second;
  const CsrMatrix<double> A = testing::convection_diffusion2d<double>(24, 0.05);
  const std::vector<double> b = random_vector<double>(A.nrows, 3);
  const int restart = 3;
  LinearSolver<double> s(config(name, restart, 2000, precond));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const Solved r = solve(s, b);
  ASSERT_GT(r.iterations, restart);
  EXPECT_EQ(stored(s), needed(name, precond != "NOSOLVER", restart));
}

INSTANTIATE_TEST_SUITE_P(
    Methods, LazyBasis,
    ::testing::Values(std::make_pair("GMRES", "NOSOLVER"), std::make_pair("GMRES", "AMG"),
                      std::make_pair("FGMRES", "NOSOLVER"), std::make_pair("FGMRES", "AMG")),
    [](const auto& info) {
      return std::string(info.param.first) + "_" + info.param.second;
    });

}  // namespace
}  // namespace jaxamg
