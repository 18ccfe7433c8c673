// Block systems (block_dim = k): block Jacobi against a dense per-block
// reference, aggregation on the block graph (P = P_node (x) I_k), and the
// coupled kron(Poisson, [[2,1],[1,2]]) system, which block aggregation solves
// in a few iterations.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "amg/aggregation/aggregation_coarsening.h"
#include "api/linear_solver.h"
#include "core/error.h"
#include "problems.h"
#include "test_block_util.h"

namespace jaxamg {
namespace {

using testing::kCoupling;
using testing::kron_nodes;
using testing::random_block_matrix;

std::string block_amg_json(const std::string& krylov, const std::string& amg_extra = "",
                           int max_iters = 200, const std::string& tolerance = "1e-8") {
  // The block defaults of JAX-AMG (aggregation SIZE_2, BLOCK_JACOBI 0.9, ...).
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + krylov +
         R"(", "tolerance": )" + tolerance + R"(, "convergence": "RELATIVE_INI", "monitor_residual": 1,
      "max_iters": )" + std::to_string(max_iters) + R"(,
      "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION",
      "selector": "SIZE_2", "smoother": {"scope": "jac", "solver": "BLOCK_JACOBI",
      "relaxation_factor": 0.9}, "presweeps": 1, "postsweeps": 1, "max_levels": 100,
      "min_coarse_rows": 32, "dense_lu_num_rows": 64, "coarse_solver": "DENSE_LU_SOLVER",
      "max_iters": 1, "cycle": "V")" + amg_extra + "}}}";
}

SolveResult setup_solve(const std::string& json, const CsrMatrix<double>& A, Index block_dim,
                        const std::vector<double>& b, std::vector<double>& x) {
  LinearSolver<double> s(json);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), block_dim);
  x.assign(A.nrows, 0.0);
  return s.solve(b.data(), x.data(), A.nrows, false);
}

TEST(Block, JacobiSweepMatchesDenseBlockReference) {
  const Index k = 3, nodes = 7;
  const double w = 0.8;
  const auto A = random_block_matrix(testing::poisson1d<double>(static_cast<int>(nodes)), k, 5);
  const auto b = testing::random_vector<double>(static_cast<int>(A.nrows), 6);
  const auto x0 = testing::random_vector<double>(static_cast<int>(A.nrows), 7);
  LinearSolver<double> s(R"({"config_version": 2, "solver": {"scope": "main",
      "solver": "BLOCK_JACOBI", "relaxation_factor": 0.8, "max_iters": 1,
      "monitor_residual": 0}})");
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), k);
  std::vector<double> x = x0;
  s.solve(b.data(), x.data(), A.nrows, true);

  // Reference: r = b - A x0, then per node solve D_I d_I = r_I densely.
  std::vector<double> r(b);
  for (Index i = 0; i < A.nrows; ++i)
    for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) r[i] -= A.val[p] * x0[A.col[p]];
  for (Index I = 0; I < nodes; ++I) {
    CsrMatrix<double> D(k, k);
    for (Index c = 0; c < k; ++c) {
      for (Index p = A.row_ptr[I * k + c]; p < A.row_ptr[I * k + c + 1]; ++p) {
        if (A.col[p] / k == I) {
          D.col.push_back(A.col[p] - I * k);
          D.val.push_back(A.val[p]);
        }
      }
      D.row_ptr[c + 1] = D.nnz();
    }
    const std::vector<double> rI(r.begin() + I * k, r.begin() + (I + 1) * k);
    const auto d = testing::dense_solve(D, rI);
    for (Index c = 0; c < k; ++c) {
      EXPECT_NEAR(x[I * k + c], x0[I * k + c] + w * d[c], 1e-12) << "node " << I << " comp " << c;
    }
  }
}

TEST(Block, JacobiRejectsSingularDiagonalBlock) {
  // Node 1's block [[1,1],[1,1]] is singular although its scalar diagonal is not.
  auto A = kron_nodes(testing::poisson1d<double>(3), {1, 1, 1, 1}, 2);
  LinearSolver<double> s(R"({"config_version": 2, "solver": {"scope": "main",
      "solver": "BLOCK_JACOBI", "max_iters": 1}})");
  try {
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), 2);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("node 0"), std::string::npos) << e.what();
  }
}

TEST(Block, AggregationKeepsComponentsTogether) {
  const Index k = 2;
  auto A = kron_nodes(testing::poisson2d<double>(12), kCoupling, k);
  A.block_dim = k;
  aggregation::AggregationOptions opt;
  aggregation::AggregationCoarsening<double> coarsening(opt);
  TransferOperators<double> ops;
  coarsening.build(A, ops);
  const auto& agg = coarsening.aggregates();
  ASSERT_EQ(agg.n, A.nrows);
  ASSERT_GT(agg.count, 0);
  ASSERT_LT(agg.count, A.nrows);
  EXPECT_EQ(agg.count % k, 0);
  // P = P_node (x) I_k: row i*k + c has its one entry in column J*k + c, and
  // both components of a node share J.
  ASSERT_EQ(ops.P.nrows, A.nrows);
  ASSERT_EQ(ops.P.ncols, agg.count);
  for (Index i = 0; i < A.nrows / k; ++i) {
    const Index J = ops.P.col[ops.P.row_ptr[i * k]] / k;
    for (Index c = 0; c < k; ++c) {
      const Index row = i * k + c;
      ASSERT_EQ(ops.P.row_ptr[row + 1] - ops.P.row_ptr[row], 1);
      EXPECT_EQ(ops.P.col[ops.P.row_ptr[row]], J * k + c);
      EXPECT_EQ(ops.P.val[ops.P.row_ptr[row]], 1.0);
    }
  }
  // The same pairs as scalar aggregation of the node (Poisson) graph.
  const auto node = testing::poisson2d<double>(12);
  const auto node_agg = aggregation::select_aggregates(node, opt);
  EXPECT_EQ(node_agg.count * k, agg.count);
  for (Index i = 0; i < node.nrows; ++i) EXPECT_EQ(agg.of[i * k], node_agg.of[i] * k);
  // The coarse matrix is again k-blocked.
  CsrMatrix<double> Ac;
  coarsening.coarse_matrix(A, ops, Ac);
  EXPECT_EQ(Ac.block_dim, k);
  EXPECT_EQ(Ac.nrows, agg.count);
}

TEST(Block, KronSystemSolvesWithBlockAggregation) {
  // JAX-AMG's default tolerance (1e-6 relative to the initial residual).
  const auto A = kron_nodes(testing::poisson2d<double>(64), kCoupling, 2);
  const auto b = testing::random_vector<double>(static_cast<int>(A.nrows), 11);
  std::vector<double> x;
  for (const std::string krylov : {"PCG", "PBICGSTAB"}) {
    const SolveResult r = setup_solve(block_amg_json(krylov, "", 1000, "1e-6"), A, 2, b, x);
    EXPECT_EQ(r.status, Status::kSuccess) << krylov;
    // Measured: PBICGSTAB (the JAX-AMG default) 14, PCG 21; the bounds add a margin.
    EXPECT_LE(r.iterations, krylov == "PCG" ? 24 : 20) << krylov;
    EXPECT_LE(testing::relative_residual(A, x, b), 1e-5) << krylov;
    std::printf("[ block ] kron(Poisson 64^2, [[2,1],[1,2]]) %s block_dim=2: %d iterations\n",
                krylov.c_str(), r.iterations);
  }
  // The same configuration on the scalar matrix pairs unknowns across
  // components and converges far more slowly.
  const SolveResult scalar = setup_solve(block_amg_json("PCG", "", 1000, "1e-6"), A, 1, b, x);
  EXPECT_GT(scalar.iterations, 40);
  std::printf("[ block ] same system, block_dim=1: %d iterations (%s)\n", scalar.iterations,
              scalar.status == Status::kSuccess ? "SUCCESS" : "not converged");
}

TEST(Block, SmallKronMatchesDenseSolve) {
  const auto A = kron_nodes(testing::poisson2d<double>(16), kCoupling, 2);
  const auto b = testing::random_vector<double>(static_cast<int>(A.nrows), 3);
  const auto ref = testing::dense_solve(A, b);
  std::vector<double> x;
  for (const std::string krylov : {"PCG", "PBICGSTAB"}) {
    const SolveResult r = setup_solve(block_amg_json(krylov, "", 200), A, 2, b, x);
    EXPECT_EQ(r.status, Status::kSuccess) << krylov;
    EXPECT_LE(r.iterations, 20) << krylov;
    double err = 0, nrm = 0;
    for (Index i = 0; i < A.nrows; ++i) {
      err = std::max(err, std::abs(x[i] - ref[i]));
      nrm = std::max(nrm, std::abs(ref[i]));
    }
    EXPECT_LE(err, 1e-6 * nrm) << krylov;
  }
}

TEST(Block, TransposedSolveKeepsBlocks) {
  // A nonsymmetric coupling: the transposed solve uses the transposed blocks.
  const auto A = kron_nodes(testing::poisson2d<double>(16), {3, 1, -1, 2}, 2);
  const auto b = testing::random_vector<double>(static_cast<int>(A.nrows), 4);
  LinearSolver<double> s(block_amg_json("PBICGSTAB"));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), 2);
  EXPECT_EQ(s.block_dim(), 2);
  std::vector<double> x(A.nrows, 0.0);
  const SolveResult r = s.solve(b.data(), x.data(), A.nrows, false, /*transpose=*/true);
  EXPECT_EQ(r.status, Status::kSuccess);
  EXPECT_LE(r.iterations, 20);
  EXPECT_LE(testing::relative_residual(transpose(A), x, b), 1e-7);
}

// Classical AMG coarsens a block system unknown by unknown
// (test_classical_block.cc has the details).
TEST(Block, ClassicalAmgSolvesBlockSystems) {
  const auto A = kron_nodes(testing::poisson2d<double>(16), kCoupling, 2);
  LinearSolver<double> s(R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG",
      "tolerance": 1e-8, "convergence": "RELATIVE_INI_CORE", "monitor_residual": 1,
      "max_iters": 100, "preconditioner": {"scope": "amg", "solver": "AMG",
      "algorithm": "CLASSICAL", "max_iters": 1}}})");
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), 2);
  const auto b = testing::random_vector<double>(A.nrows, 3);
  std::vector<double> x(A.nrows, 0.0);
  EXPECT_EQ(s.solve(b.data(), x.data(), A.nrows, false).status, Status::kSuccess);
  EXPECT_LE(testing::relative_residual(A, x, b), 1.01e-8);
}

TEST(Block, BlockDimMustDivideRows) {
  const auto A = testing::poisson2d<double>(5);  // 25 rows
  LinearSolver<double> s(block_amg_json("PCG"));
  EXPECT_THROW(s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), 2),
               InvalidInput);
  EXPECT_THROW(s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), 0),
               InvalidInput);
}

}  // namespace
}  // namespace jaxamg
