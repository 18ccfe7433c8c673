// Classical AMG on a block system (block_dim 3): unknown-based coarsening.
// Every P entry couples a fine point and a coarse point of the same
// function (the fine level's from i mod 3, the coarse ones handed down by
// the coarsening), the coarse levels are scalar, and PCG converges on the
// system and, after a resetup with new values, on the new one.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "amg/amg_solver.h"
#include "amg/classical/classical_coarsening.h"
#include "api/linear_solver.h"
#include "solvers/krylov/krylov_solver.h"
#include "problems.h"
#include "test_block_util.h"

namespace jaxamg {
namespace {

const char* kConfig = R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG",
    "tolerance": 1e-9, "convergence": "RELATIVE_INI_CORE", "monitor_residual": 1,
    "max_iters": 200, "preconditioner": {"scope": "amg", "solver": "AMG",
      "algorithm": "CLASSICAL", "selector": "PMIS", "interpolator": "D2", "max_iters": 1,
      "presweeps": 1, "postsweeps": 1, "min_coarse_rows": 16, "dense_lu_num_rows": 16,
      "structure_reuse_levels": -1,
      "coarse_solver": "DENSE_LU_SOLVER",
      "smoother": {"scope": "s", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.7}}}})";

// A symmetric positive definite 3-blocked matrix on `nodes`' graph: a
// random block matrix made symmetric and diagonally dominant.
CsrMatrix<double> spd_block_matrix(const CsrMatrix<double>& nodes, unsigned seed) {
  CsrMatrix<double> A = testing::random_block_matrix(nodes, 3, seed);
  const CsrMatrix<double> At = transpose(A);
  for (std::size_t q = 0; q < A.val.size(); ++q) A.val[q] = 0.5 * (A.val[q] + At.val[q]);
  for (Index i = 0; i < A.nrows; ++i) {
    double off = 0;
    for (Index q = A.row_ptr[i]; q < A.row_ptr[i + 1]; ++q) {
      if (A.col[q] != i) off += std::abs(A.val[q]);
    }
    A.val[A.diag_pos[i]] = off + 0.1;
  }
  A.block_dim = 3;
  return A;
}

void expect_functions_kept(const AmgSolver<double>& amg) {
  const auto& levels = amg.levels();
  ASSERT_GE(levels.size(), 3u);
  EXPECT_EQ(levels[0].A->block_dim, 3);
  std::vector<Index> fine(static_cast<std::size_t>(levels[0].rows()));
  for (Index i = 0; i < levels[0].rows(); ++i) fine[i] = i % 3;
  for (std::size_t l = 0; l + 1 < levels.size(); ++l) {
    EXPECT_EQ(levels[l + 1].A->block_dim, 1) << "level " << l + 1;
    const std::vector<Index>* coarse = levels[l].coarsening->coarse_functions();
    ASSERT_NE(coarse, nullptr);
    ASSERT_EQ(static_cast<Index>(coarse->size()), levels[l + 1].rows());
    const CsrMatrix<double>& P = levels[l].ops.P;
    for (Index i = 0; i < P.nrows; ++i) {
      for (Index q = P.row_ptr[i]; q < P.row_ptr[i + 1]; ++q) {
        ASSERT_EQ(fine[i], (*coarse)[P.col[q]]) << "level " << l << " row " << i;
      }
    }
    fine = *coarse;
  }
}

TEST(ClassicalBlock, FunctionsAreKeptAndPcgConverges) {
  const auto nodes = testing::poisson3d<double>(10);
  CsrMatrix<double> A = spd_block_matrix(nodes, 5);
  LinearSolver<double> s(kConfig);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), 3);
  const auto* pcg = dynamic_cast<const KrylovSolver<double>*>(&s.solver());
  ASSERT_NE(pcg, nullptr);
  const auto* amg = dynamic_cast<const AmgSolver<double>*>(pcg->preconditioner());
  ASSERT_NE(amg, nullptr);
  expect_functions_kept(*amg);

  const auto b = testing::random_vector<double>(A.nrows, 9);
  for (int round = 0; round < 2; ++round) {
    std::vector<double> x(A.nrows, 0.0);
    const SolveResult r = s.solve(b.data(), x.data(), A.nrows, false);
    EXPECT_EQ(r.status, Status::kSuccess) << "round " << round;
    EXPECT_LT(testing::relative_residual(A, x, b), 1.01e-9) << "round " << round;
    // New values on the same pattern: every level keeps its structure
    // (structure_reuse_levels -1), so the coarsening rebuilds P.
    A = spd_block_matrix(nodes, 6);
    s.resetup(A.val.data(), A.nnz());
    expect_functions_kept(*amg);
  }
}

// Functions handed down for a level of another size are an internal error,
// reported as such instead of read out of bounds.
TEST(ClassicalBlock, FunctionsOfTheWrongLengthAreASetupError) {
  const auto A = testing::poisson3d<double>(4);
  classical::ClassicalCoarsening<double> c{classical::ClassicalParams{}};
  c.set_functions(std::vector<Index>(static_cast<std::size_t>(A.nrows) - 1, 0));
  TransferOperators<double> ops;
  try {
    c.build(A, ops);
    FAIL() << "no error";
  } catch (const SetupError& e) {
    EXPECT_NE(std::string(e.what()).find("63 functions given for a level of 64 rows"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace jaxamg
