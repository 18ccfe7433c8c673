// The multicolour and block smoothers in batched solves: several right-hand
// sides advanced together on the lanes backend (multicolor_methods.h,
// diagonal_sweep_method.h with the lanes backend's sweeps) give, lane by lane, the iterations,
// residual history and solution of one-lane solves bit for bit (below kParallelRows
// rows every reduction is serial in both paths).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "batched/batched_krylov.h"
#include "problems.h"
#include "test_block_util.h"

namespace jaxamg {
namespace {

std::string krylov(const std::string& method, const std::string& preconditioner) {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + method +
         R"(", "max_iters": 300, "tolerance": 1e-9, "convergence": "RELATIVE_INI_CORE",
         "monitor_residual": 1, "store_res_history": 1, "preconditioner": )" +
         preconditioner + "}}";
}

std::string amg_with(const std::string& smoother) {
  return R"({"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION", "selector": "SIZE_4",
      "max_iters": 1, "presweeps": 1, "postsweeps": 1, "coarse_solver": "DENSE_LU_SOLVER",
      "smoother": )" + smoother + "}";
}

// Solves five right-hand sides one by one and through the batched path.
void expect_lanes_match(const std::string& config, const CsrMatrix<double>& A,
                        Index block_dim = 1) {
  SCOPED_TRACE(config);
  LinearSolver<double> s(config);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), block_dim);
  const Index n = A.nrows;
  const int k = 5;
  std::vector<double> B;
  for (int j = 0; j < k; ++j) {
    const auto b = testing::random_vector<double>(n, 40 + j);
    B.insert(B.end(), b.begin(), b.end());
  }
  std::vector<double> X(B.size(), 0.0);
  std::vector<batched::LaneResult> lanes;
  ASSERT_TRUE(batched::solve_batched(s.solver(), B.data(), X.data(), n, k, false, &lanes));
  for (int j = 0; j < k; ++j) {
    SCOPED_TRACE("lane " + std::to_string(j));
    std::vector<double> x(n, 0.0);
    const SolveResult one = s.solve(B.data() + j * n, x.data(), n, false, false);
    EXPECT_EQ(one.status, Status::kSuccess);
    EXPECT_EQ(lanes[j].status, one.status);
    EXPECT_EQ(lanes[j].iterations, one.iterations);
    EXPECT_EQ(lanes[j].history, one.history);
    for (Index i = 0; i < n; ++i) ASSERT_EQ(X[j * n + i], x[i]) << "entry " << i;
  }
}

TEST(BatchedMulticolor, SmoothersInAmgMatchOneLaneSolvesExactly) {
  const auto A = testing::poisson3d<double>(10);
  const auto cd = testing::convection_diffusion2d<double>(30, 0.05);
  expect_lanes_match(krylov("PCG", amg_with(R"({"scope": "s", "solver": "MULTICOLOR_GS",
      "symmetric_GS": 1})")), A);
  expect_lanes_match(krylov("PBICGSTAB", amg_with(R"({"scope": "s", "solver": "MULTICOLOR_GS"})")),
                     cd);
  expect_lanes_match(krylov("PBICGSTAB", amg_with(R"({"scope": "s",
      "solver": "MULTICOLOR_DILU"})")), cd);
  expect_lanes_match(krylov("PBICGSTAB", amg_with(R"({"scope": "s",
      "solver": "MULTICOLOR_ILU"})")), cd);
}

TEST(BatchedMulticolor, SmootherPreconditionersMatchOneLaneSolvesExactly) {
  const auto A = testing::poisson2d<double>(30);
  expect_lanes_match(krylov("PCG", R"({"scope": "p", "solver": "MULTICOLOR_DILU"})"), A);
  expect_lanes_match(krylov("PBICGSTAB", R"({"scope": "p", "solver": "MULTICOLOR_ILU",
      "max_iters": 2})"), A);
}

TEST(BatchedMulticolor, BlockSmoothersMatchOneLaneSolvesExactly) {
  const auto P = testing::poisson2d<double>(16);
  for (Index k : {2, 3}) {
    const auto A = testing::random_block_matrix(P, k, 11 + k);
    expect_lanes_match(krylov("PBICGSTAB", amg_with(R"({"scope": "s",
        "solver": "MULTICOLOR_GS", "relaxation_factor": 0.8})")), A, k);
    expect_lanes_match(krylov("PBICGSTAB", amg_with(R"({"scope": "s",
        "solver": "BLOCK_JACOBI", "relaxation_factor": 0.7})")), A, k);
    expect_lanes_match(krylov("PBICGSTAB", R"({"scope": "p", "solver": "BLOCK_JACOBI"})"), A, k);
  }
}

}  // namespace
}  // namespace jaxamg
