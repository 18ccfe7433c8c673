// Batched solves beyond one block and across calls: more right-hand sides
// than a block holds (batched::kMaxBlockLanes) are solved block after block,
// lane widths that leave scalar tails in the lane vectors (lane_pack.h), and
// the work space LinearSolver keeps between solve_many calls, which must
// follow a resetup, new values and a switch to the transposed solver. Every
// lane is compared with its one-lane solve bit for bit (below kParallelRows rows all
// reductions are serial in both paths).
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "api/linear_solver.h"
#include "batched/batched_krylov.h"
#include "problems.h"

namespace jaxamg {
namespace {

// BiCGStab + classical AMG with damped Jacobi (jaxamg.solve's default).
const char* kBicgstabAmg = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "PBICGSTAB", "convergence": "RELATIVE_INI", "tolerance": 1e-6,
  "max_iters": 1000, "norm": "L2", "monitor_residual": 1, "store_res_history": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
    "selector": "PMIS", "interpolator": "D2", "max_iters": 1, "cycle": "V",
    "coarse_solver": "DENSE_LU_SOLVER", "strength_threshold": 0.5,
    "smoother": {"scope": "s", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.9}}}})";

// PCG + classical AMG with Chebyshev on l1-Jacobi.
const char* kPcgCheby = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "PCG", "max_iters": 300, "tolerance": 1e-9,
  "convergence": "RELATIVE_INI_CORE", "norm": "L2", "monitor_residual": 1, "store_res_history": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
    "interp_max_elements": 4, "max_iters": 1, "cycle": "V", "coarse_solver": "DENSE_LU_SOLVER",
    "dense_lu_num_rows": 32,
    "smoother": {"scope": "cheby", "solver": "CHEBYSHEV", "chebyshev_polynomial_order": 2,
      "chebyshev_lambda_estimate_mode": 3, "cheby_max_lambda": 1.0, "cheby_min_lambda": 0.25,
      "preconditioner": {"scope": "l1", "solver": "JACOBI_L1"}}}}})";

template <class T>
std::vector<T> random_lanes(Index n, int k, unsigned seed) {
  std::vector<T> B;
  for (int j = 0; j < k; ++j) {
    for (double v : testing::random_vector<double>(n, seed + j)) B.push_back(static_cast<T>(v));
  }
  return B;
}

// solve_many on k lanes against k one-lane solves of the same solver.
template <class T>
void expect_lanes_match(LinearSolver<T>& s, const std::vector<T>& B, const std::vector<T>& X0,
                        int k, bool use_x0, bool transpose) {
  const Index n = s.rows();
  std::vector<T> X = X0;
  const std::vector<SolveResult> many = s.solve_many(B.data(), X.data(), n, k, use_x0, transpose);
  ASSERT_EQ(many.size(), static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) {
    SCOPED_TRACE("lane " + std::to_string(j) + " of " + std::to_string(k));
    std::vector<T> x(X0.begin() + j * n, X0.begin() + (j + 1) * n);
    const SolveResult one = s.solve(B.data() + j * n, x.data(), n, use_x0, transpose);
    EXPECT_GT(one.iterations, 0);
    EXPECT_EQ(many[j].iterations, one.iterations);
    EXPECT_EQ(many[j].status, one.status);
    EXPECT_EQ(many[j].history, one.history);
    for (Index i = 0; i < n; ++i) ASSERT_EQ(X[j * n + i], x[i]) << "entry " << i;
  }
}

template <class T>
CsrMatrix<T> as(const CsrMatrix<double>& A) {
  if constexpr (std::is_same<T, double>::value) {
    return A;
  } else {
    return convert_values<T>(A);
  }
}

template <class T>
void check_widths(const char* config, const CsrMatrix<double>& Ad) {
  const CsrMatrix<T> A = as<T>(Ad);
  LinearSolver<T> s(config);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  // 2, 3, 5, 7: scalar tails in the lane vectors; 8: one full block; 11 and
  // 19: blocks of 8 followed by a narrower one.
  for (int k : {2, 3, 5, 7, 8, 11, 19}) {
    const std::vector<T> B = random_lanes<T>(A.nrows, k, 40 + k);
    const std::vector<T> X0 = random_lanes<T>(A.nrows, k, 90 + k);
    expect_lanes_match(s, B, X0, k, false, false);
    expect_lanes_match(s, B, X0, k, true, false);
  }
}

TEST(BatchedBlocks, LaneWidthsAndBlocksMatchOneLaneSolves) {
  const auto A = testing::poisson3d<double>(10);
  check_widths<double>(kBicgstabAmg, A);
  check_widths<float>(kBicgstabAmg, A);
  check_widths<double>(kPcgCheby, testing::jump3d<double>(9, 100.0));
  check_widths<float>(kPcgCheby, testing::jump3d<double>(9, 100.0));
}

TEST(BatchedBlocks, BlockWidthIsCapped) {
  const auto A = testing::poisson2d<double>(12);
  LinearSolver<double> s(kBicgstabAmg);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  for (int lanes : {1, 3, 8, 20}) {
    const auto b = batched::make_batch_solver(s.solver(), lanes);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(b->block_lanes(), std::min(lanes, batched::kMaxBlockLanes));
  }
  EXPECT_EQ(batched::make_batch_solver(s.solver(), 0), nullptr);
}

// The kept work space serves later calls, and is rebuilt for new values
// (resetup, replace_values) and for the transposed solver: every call still
// matches one-lane solves of the operator it was given.
TEST(BatchedBlocks, KeptWorkSpaceFollowsNewValuesAndTranspose) {
  const auto A = testing::convection_diffusion2d<double>(24, 0.05);
  const Index n = A.nrows;
  LinearSolver<double> s(kBicgstabAmg);
  s.setup(n, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const int k = 6;
  const auto B1 = random_lanes<double>(n, k, 7), B2 = random_lanes<double>(n, k, 17);
  const std::vector<double> X0(static_cast<std::size_t>(n) * k, 0.0);
  expect_lanes_match(s, B1, X0, k, false, false);
  expect_lanes_match(s, B2, X0, k, false, false);  // the same work space again
  expect_lanes_match(s, B1, X0, 3, false, false);  // fewer lanes than it holds

  // New values on the same pattern: a stronger diagonal, random per row.
  std::vector<double> vals = A.val.to_vector();
  const auto shift = testing::random_vector<double>(n, 3);
  for (Index i = 0; i < n; ++i) {
    for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      if (A.col[p] == i) vals[p] += 1.0 + std::abs(shift[i]);
    }
  }
  s.resetup(vals.data(), static_cast<Index>(vals.size()));
  expect_lanes_match(s, B1, X0, k, false, false);
  s.replace_values(A.val.data(), A.nnz());
  expect_lanes_match(s, B2, X0, k, false, false);

  expect_lanes_match(s, B1, X0, k, false, true);  // A^T: another solver
  expect_lanes_match(s, B2, X0, k, false, false);  // and back
}

}  // namespace
}  // namespace jaxamg
