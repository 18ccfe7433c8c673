// Distributed Krylov solvers and smoothers against the serial engine: the
// same configuration on the same matrix gives the same solution (relative
// difference <= 1e-8 at tolerance 1e-12) for any process count, equal and
// unequal partitions, scalar and block (block_dim 2) matrices, and the
// transposed solve equals the serial transposed solve.
#include <gtest/gtest.h>

#include <cmath>

#include "api/linear_solver.h"
#include "dist/dist_linear_solver.h"
#include "dist_vs_serial.h"
#include "mpi_test_util.h"
#include "problems.h"

namespace jaxamg {
namespace {

using namespace mpitest;

std::string config(const std::string& solver, const std::string& precond) {
  std::string p = precond.empty() ? "" : ", \"preconditioner\": " + precond;
  return R"({"config_version": 2, "solver": {"solver": ")" + solver +
         R"(", "scope": "main", "max_iters": 2000, "tolerance": 1e-12, "monitor_residual": 1,
             "convergence": "RELATIVE_INI", "gmres_n_restart": 30, "store_res_history": 1)" + p +
         "}}";
}

void expect_equal_solutions(const CsrMatrix<double>& A, const std::string& cfg, bool transpose = false,
                            Index block_dim = 1) {
  for (bool unequal : {false, true}) {
    const Outcome o = compare(A, cfg, unequal, transpose, block_dim, 99);
    EXPECT_EQ(o.serial_status, Status::kSuccess) << cfg;
    EXPECT_EQ(o.dist_status, Status::kSuccess) << cfg;
    EXPECT_LE(o.rel_diff, 1e-8) << cfg << (unequal ? " (unequal)" : " (equal)");
    // Rounding differs with the partition; the iteration count barely moves.
    EXPECT_NEAR(o.dist_iters, o.serial_iters, 2 + o.serial_iters / 10) << cfg;
  }
}

const std::string kJacobiL1 = R"({"solver": "JACOBI_L1", "scope": "jac", "max_iters": 1})";
const std::string kBlockJacobi = R"({"solver": "BLOCK_JACOBI", "scope": "bj", "max_iters": 1})";
const std::string kGs = R"({"solver": "GS", "scope": "gs", "max_iters": 1})";
const std::string kCheby = R"({"solver": "CHEBYSHEV", "scope": "cheb", "max_iters": 1,
    "chebyshev_polynomial_order": 3, "preconditioner": {"solver": "JACOBI_L1", "scope": "cj"}})";

TEST(DistKrylov, SymmetricMatricesMatchSerial) {
  const auto spd = random_matrix<double>(150, 5, true, 21);
  const auto poisson = testing::poisson2d<double>(14);
  for (const auto* A : {&spd, &poisson}) {
    expect_equal_solutions(*A, config("CG", ""));
    expect_equal_solutions(*A, config("PCG", kJacobiL1));
    expect_equal_solutions(*A, config("PCG", kCheby));
    expect_equal_solutions(*A, config("PCG", kBlockJacobi));
  }
}

TEST(DistKrylov, NonsymmetricMatricesMatchSerial) {
  const auto A = random_matrix<double>(140, 5, false, 31);
  expect_equal_solutions(A, config("PBICGSTAB", kJacobiL1));
  expect_equal_solutions(A, config("BICGSTAB", ""));
  expect_equal_solutions(A, config("FGMRES", kJacobiL1));
  expect_equal_solutions(A, config("GMRES", kBlockJacobi));
}

TEST(DistKrylov, BlockMatricesMatchSerial) {
  // block_dim 2: blocks never straddle a process boundary.
  const auto A = random_matrix<double>(120, 6, true, 41);
  expect_equal_solutions(A, config("PCG", kBlockJacobi), false, 2);
  const auto N = random_matrix<double>(120, 6, false, 42);
  expect_equal_solutions(N, config("FGMRES", kBlockJacobi), false, 2);
}

TEST(DistKrylov, TransposedSolvesMatchSerialTransposedSolves) {
  const auto A = random_matrix<double>(130, 5, false, 51);
  expect_equal_solutions(A, config("PBICGSTAB", kJacobiL1), true);
  expect_equal_solutions(A, config("FGMRES", kJacobiL1), true);
}

TEST(DistSmoothers, HybridGaussSeidelPreconditionsAndConverges) {
  // Hybrid GS differs from serial GS across process boundaries: compare
  // the solutions (both converged to 1e-12), not the iteration counts.
  const auto A = random_matrix<double>(160, 5, false, 61);
  for (bool unequal : {false, true}) {
    const Outcome o = compare(A, config("FGMRES", kGs), unequal, false, 1, 99);
    EXPECT_EQ(o.dist_status, Status::kSuccess);
    EXPECT_LE(o.rel_diff, 1e-8);
    if (size() == 1) EXPECT_EQ(o.dist_iters, o.serial_iters);
  }
}

TEST(DistSmoothers, HybridBlockGaussSeidelPreconditionsAndConverges) {
  // block_dim 2: block GS within a process, block Jacobi across processes.
  const auto A = random_matrix<double>(160, 6, false, 62);
  for (bool unequal : {false, true}) {
    const Outcome o = compare(A, config("FGMRES", kGs), unequal, false, 2, 99);
    EXPECT_EQ(o.dist_status, Status::kSuccess);
    EXPECT_LE(o.rel_diff, 1e-8);
    if (size() == 1) EXPECT_EQ(o.dist_iters, o.serial_iters);
  }
}

TEST(DistSolverErrors, AZeroDiagonalIsNamedByItsGlobalRow) {
  // The last process's first row loses its diagonal: every process raises
  // with that row's global index, the user's numbering, not a local one.
  auto A = testing::poisson2d<double>(8);
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), true);
  const int culprit = size() - 1;
  const int64_t row = starts[culprit];
  A.val[A.diag_pos[row]] = 0.0;
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  auto rows = take_rows(A, lo, hi);
  for (const char* smoother : {R"({"solver": "BLOCK_JACOBI", "scope": "bj"})",
                               R"({"solver": "GS", "scope": "gs"})",
                               R"({"solver": "MULTICOLOR_GS", "scope": "mcgs"})",
                               R"({"solver": "MULTICOLOR_DILU", "scope": "dilu"})",
                               R"({"solver": "MULTICOLOR_ILU", "scope": "ilu"})"}) {
    dist::DistLinearSolver<double> s(config("PCG", smoother), MPI_COMM_WORLD);
    const std::string msg = error_of([&] {
      s.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
              rows.val.data(), static_cast<int64_t>(rows.col.size()));
    });
    EXPECT_NE(msg.find("global row " + std::to_string(row)), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank " + std::to_string(culprit)), std::string::npos) << msg;
    EXPECT_TRUE(same_on_all_ranks(msg));
  }
}

}  // namespace
}  // namespace jaxamg

namespace jaxamg {
namespace {

using namespace mpitest;

TEST(DistKrylov, TransposedSolveAfterNewValuesUsesTheNewValues) {
  // The adjoint's A^T is built once; new values travel by the cached map.
  const auto A = random_matrix<double>(120, 5, false, 71);
  CsrMatrix<double> B = A;
  for (std::size_t k = 0; k < B.val.size(); ++k) B.val[k] *= 1.0 + 0.1 * std::sin(double(k));
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), true);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  const std::string cfg = config("FGMRES", kJacobiL1);
  const auto b = random_vector(n, 8);
  auto ra = take_rows(A, lo, hi), rb = take_rows(B, lo, hi);
  dist::DistLinearSolver<double> ds(cfg, MPI_COMM_WORLD);
  ds.setup(lo, n, static_cast<Index>(hi - lo), ra.row_ptr.data(), ra.col.data(), ra.val.data(),
           static_cast<int64_t>(ra.col.size()));
  std::vector<double> xl(hi - lo, 0.0);
  ds.solve(b.data() + lo, xl.data(), static_cast<Index>(hi - lo), false, true);
  ds.resetup(rb.val.data(), static_cast<int64_t>(rb.val.size()));
  ds.solve(b.data() + lo, xl.data(), static_cast<Index>(hi - lo), false, true);
  LinearSolver<double> serial(cfg);
  serial.setup(n, B.row_ptr.data(), B.col.data(), B.val.data(), B.nnz());
  std::vector<double> xs(n, 0.0);
  serial.solve(b.data(), xs.data(), n, false, true);
  EXPECT_LE(global_relative_difference(xl, xs, lo), 1e-8);
}

}  // namespace
}  // namespace jaxamg
