// Block Gauss-Seidel (GS and MULTICOLOR_GS with block_dim k > 1): one sweep
// against a node-by-node reference with dense k x k solves, the node
// colouring's independence, and block GS as the AMG smoother of a coupled
// system where scalar smoothing is much weaker.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "core/error.h"
#include "problems.h"
#include "solvers/smoothers/coloring.h"
#include "test_block_util.h"

namespace jaxamg {
namespace {

using testing::kCoupling;
using testing::kron_nodes;
using testing::random_block_matrix;

std::string smoother_json(const std::string& solver, double w, const std::string& extra = "") {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + solver +
         R"(", "relaxation_factor": )" + std::to_string(w) +
         R"(, "max_iters": 1, "monitor_residual": 0)" + extra + "}}";
}

// x_I <- x_I + w D_I^-1 (b_I - A_I x), node by node in `order`, with D_I
// solved densely: the definition of block Gauss-Seidel.
std::vector<double> reference_sweep(const CsrMatrix<double>& A, Index k, double w,
                                    const std::vector<double>& b, std::vector<double> x,
                                    const std::vector<Index>& order) {
  for (Index I : order) {
    CsrMatrix<double> D(k, k);
    std::vector<double> r(static_cast<std::size_t>(k));
    for (Index c = 0; c < k; ++c) {
      const Index i = I * k + c;
      r[c] = b[i];
      for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
        r[c] -= A.val[p] * x[A.col[p]];
        if (A.col[p] / k == I) {
          D.col.push_back(A.col[p] - I * k);
          D.val.push_back(A.val[p]);
        }
      }
      D.row_ptr[c + 1] = D.nnz();
    }
    const auto d = testing::dense_solve(D, r);
    for (Index c = 0; c < k; ++c) x[I * k + c] += w * d[c];
  }
  return x;
}

std::vector<double> one_sweep(const std::string& json, const CsrMatrix<double>& A, Index k,
                              const std::vector<double>& b, std::vector<double> x,
                              bool x_is_zero) {
  LinearSolver<double> s(json);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), k);
  s.solve(b.data(), x.data(), A.nrows, !x_is_zero);
  return x;
}

void expect_near(const std::vector<double>& x, const std::vector<double>& ref,
                 const std::string& what) {
  ASSERT_EQ(x.size(), ref.size());
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(x[i], ref[i], 1e-12) << what << " " << i;
}

TEST(BlockGaussSeidel, SequentialSweepMatchesNodeByNodeReference) {
  const Index k = 3;
  const auto A = random_block_matrix(testing::poisson2d<double>(6), k, 21);
  const auto b = testing::random_vector<double>(static_cast<int>(A.nrows), 22);
  const auto x0 = testing::random_vector<double>(static_cast<int>(A.nrows), 23);
  std::vector<Index> order(A.nrows / k);
  for (Index I = 0; I < A.nrows / k; ++I) order[I] = I;
  const std::string json = smoother_json("GS", 0.7);
  expect_near(one_sweep(json, A, k, b, x0, false), reference_sweep(A, k, 0.7, b, x0, order),
              "from x0");
  // From a zero guess (the solver skips the unvisited part of each row).
  const std::vector<double> zero(A.nrows, 0.0);
  expect_near(one_sweep(json, A, k, b, x0, true), reference_sweep(A, k, 0.7, b, zero, order),
              "from zero");
}

TEST(BlockGaussSeidel, NodeColoringSeparatesCoupledNodes) {
  const Index k = 2;
  const auto A = random_block_matrix(testing::poisson2d<double>(9), k, 31);
  const auto coloring = smoothers::greedy_coloring(A, k);
  ASSERT_EQ(coloring.color.size(), static_cast<std::size_t>(A.nrows));
  EXPECT_EQ(coloring.num_colors, 2);  // the 5-point node graph is bipartite
  for (Index i = 0; i < A.nrows; ++i) {
    EXPECT_EQ(coloring.color[i], coloring.color[(i / k) * k]) << "row " << i;
    for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      if (A.col[p] / k != i / k) EXPECT_NE(coloring.color[i], coloring.color[A.col[p]]);
    }
  }
  // Each colour lists its nodes as k consecutive rows.
  for (int c = 0; c < coloring.num_colors; ++c) {
    const Index first = coloring.color_ptr[c], last = coloring.color_ptr[c + 1];
    ASSERT_EQ((last - first) % k, 0);
    for (Index p = first; p < last; ++p) {
      EXPECT_EQ(coloring.rows[p], coloring.rows[first + ((p - first) / k) * k] + (p - first) % k);
    }
  }
}

TEST(BlockGaussSeidel, MulticolorSweepMatchesColourOrderedReference) {
  const Index k = 2;
  // A 9-point node graph needs more than two colours.
  auto P = testing::poisson2d<double>(12);
  {
    CsrMatrix<double> Q(P.nrows, P.ncols);
    const int m = 12;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < m; ++j) {
        for (int di = -1; di <= 1; ++di)
          for (int dj = -1; dj <= 1; ++dj) {
            const int ii = i + di, jj = j + dj;
            if (ii < 0 || jj < 0 || ii >= m || jj >= m) continue;
            Q.col.push_back(ii * m + jj);
            Q.val.push_back(ii == i && jj == j ? 8.0 : -1.0);
          }
        Q.row_ptr[i * m + j + 1] = Q.nnz();
      }
    P = Q;
  }
  const auto A = random_block_matrix(P, k, 41);
  const auto b = testing::random_vector<double>(static_cast<int>(A.nrows), 42);
  const auto x0 = testing::random_vector<double>(static_cast<int>(A.nrows), 43);
  const auto coloring = smoothers::greedy_coloring(A, k);
  EXPECT_GE(coloring.num_colors, 3);
  std::vector<Index> forward;
  for (Index p = 0; p < A.nrows; p += k) forward.push_back(coloring.rows[p] / k);
  std::vector<Index> symmetric = forward;
  for (int c = coloring.num_colors - 1; c >= 0; --c)
    for (Index p = coloring.color_ptr[c]; p < coloring.color_ptr[c + 1]; p += k)
      symmetric.push_back(coloring.rows[p] / k);
  expect_near(one_sweep(smoother_json("MULTICOLOR_GS", 0.9), A, k, b, x0, false),
              reference_sweep(A, k, 0.9, b, x0, forward), "forward");
  expect_near(one_sweep(smoother_json("MULTICOLOR_GS", 0.9, R"(, "symmetric_GS": 1)"), A, k, b,
                        x0, false),
              reference_sweep(A, k, 0.9, b, x0, symmetric), "symmetric");
  const std::vector<double> zero(A.nrows, 0.0);
  expect_near(one_sweep(smoother_json("MULTICOLOR_GS", 0.9), A, k, b, x0, true),
              reference_sweep(A, k, 0.9, b, zero, forward), "from zero");
}

TEST(BlockGaussSeidel, RejectsSingularDiagonalBlock) {
  // Node 0's block [[1,1],[1,1]] is singular although its scalar diagonal is not.
  const auto A = kron_nodes(testing::poisson1d<double>(3), {1, 1, 1, 1}, 2);
  for (const std::string solver : {"GS", "MULTICOLOR_GS"}) {
    LinearSolver<double> s(smoother_json(solver, 1.0));
    try {
      s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), 2);
      ADD_FAILURE() << solver << ": expected InvalidInput";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("node 0"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(solver), std::string::npos) << e.what();
    }
  }
}

TEST(BlockGaussSeidel, AcceptsZeroScalarDiagonalInAnInvertibleBlock) {
  // Blocks [[0,1],[1,0]]-like coupling plus a Laplacian: scalar GS would
  // divide by zero; block GS inverts the whole block.
  const auto A = kron_nodes(testing::poisson2d<double>(8), {0.0, 1.0, 1.0, 0.0}, 2);
  const auto b = testing::random_vector<double>(static_cast<int>(A.nrows), 51);
  for (const std::string solver : {"GS", "MULTICOLOR_GS"}) {
    LinearSolver<double> s(smoother_json(solver, 1.0));
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), 2);
    std::vector<double> x(A.nrows, 0.0);
    s.solve(b.data(), x.data(), A.nrows, false);
    for (double v : x) EXPECT_TRUE(std::isfinite(v)) << solver;
  }
}

SolveResult amg_solve(const CsrMatrix<double>& A, Index block_dim, const std::string& smoother,
                      const std::vector<double>& b, std::vector<double>& x) {
  const std::string json =
      R"({"config_version": 2, "solver": {"scope": "main", "solver": "FGMRES",
      "gmres_n_restart": 30, "tolerance": 1e-8, "convergence": "RELATIVE_INI",
      "monitor_residual": 1, "max_iters": 200,
      "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION",
      "selector": "SIZE_2", "smoother": {"scope": "sm", "solver": ")" + smoother +
      R"(", "relaxation_factor": )" + (smoother == "BLOCK_JACOBI" ? "0.9" : "1.0") +
      R"(}, "presweeps": 1, "postsweeps": 1, "min_coarse_rows": 32, "dense_lu_num_rows": 64,
      "coarse_solver": "DENSE_LU_SOLVER", "max_iters": 1, "cycle": "V"}}})";
  LinearSolver<double> s(json);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), block_dim);
  x.assign(A.nrows, 0.0);
  return s.solve(b.data(), x.data(), A.nrows, false);
}

TEST(BlockGaussSeidel, SmoothsCoupledSystemInAggregationAmg) {
  // kron(Poisson, [[2,1],[1,2]]) with block aggregation: block GS treats the
  // strong in-node coupling exactly and beats block Jacobi; the scalar
  // system (block_dim 1) with scalar GS converges far more slowly.
  const auto A = kron_nodes(testing::poisson2d<double>(64), kCoupling, 2);
  const auto b = testing::random_vector<double>(static_cast<int>(A.nrows), 61);
  std::vector<double> x;
  const SolveResult jacobi = amg_solve(A, 2, "BLOCK_JACOBI", b, x);
  ASSERT_EQ(jacobi.status, Status::kSuccess);
  const SolveResult scalar = amg_solve(A, 1, "GS", b, x);
  std::printf("[ block ] kron(Poisson 64^2, [[2,1],[1,2]]) FGMRES to 1e-8: block Jacobi %d, "
              "scalar GS (block_dim 1) %d iterations\n", jacobi.iterations, scalar.iterations);
  for (const std::string smoother : {"GS", "MULTICOLOR_GS"}) {
    const SolveResult r = amg_solve(A, 2, smoother, b, x);
    EXPECT_EQ(r.status, Status::kSuccess) << smoother;
    EXPECT_LE(testing::relative_residual(A, x, b), 1e-8) << smoother;
    // Measured: GS 25, MULTICOLOR_GS 23; the bound adds a margin.
    EXPECT_LE(r.iterations, 28) << smoother;
    EXPECT_LT(r.iterations, jacobi.iterations) << smoother;
    EXPECT_LT(2 * r.iterations, scalar.iterations) << smoother;
    std::printf("[ block ] same, block %s: %d iterations\n", smoother.c_str(), r.iterations);
  }
}

}  // namespace
}  // namespace jaxamg
