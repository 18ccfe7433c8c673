// Two-stage extended+i interpolation on aggressive levels, restriction by
// P^T without a stored R, and the transfer operators the hierarchy reports.
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "amg/amg_solver.h"
#include "amg/classical/classical_coarsening.h"
#include "amg/classical/splitting.h"
#include "api/linear_solver.h"
#include "backend/cpu/blas.h"
#include "core/parallel.h"
#include "problems.h"
#include "solvers/krylov/krylov_solver.h"
#include "test_classical_util.h"

namespace jaxamg {
namespace {

using namespace classical;

ClassicalParams two_stage(Selector sel, int pmax) {
  ClassicalParams p;
  p.selector = sel;
  p.interpolator = Interpolator::kTwoStageD2;
  p.truncation.max_elements = pmax;
  return p;
}

TEST(ClassicalTwoStage, ConstantsTruncationRebuildAndThreads) {
  const auto L = testing::random_matrix<double>(6000, 5, 23, true);  // graph Laplacian
  const auto A3 = testing::poisson3d<double>(16);
  const int saved = omp_get_max_threads();
  for (const auto* A : {&L, &A3}) {
    for (Selector sel : {Selector::kAggressivePmis, Selector::kAggressiveHmis}) {
      TransferOperators<double> o1, o2;
      ClassicalCoarsening<double> c1(two_stage(sel, 4)), c2(two_stage(sel, 4));
      omp_set_num_threads(1);
      c1.build(*A, o1);
      omp_set_num_threads(2);
      c2.build(*A, o2);
      omp_set_num_threads(saved);
      EXPECT_EQ(c1.splitting(), c2.splitting());
      EXPECT_EQ(o1.P.row_ptr, o2.P.row_ptr);
      EXPECT_EQ(o1.P.col, o2.P.col);
      EXPECT_EQ(o1.P.val, o2.P.val);
      ASSERT_EQ(o1.P.nrows, A->nrows);
      ASSERT_EQ(o1.P.ncols, c1.num_coarse());
      // R = P^T.
      const auto Pt = transpose(o1.P);
      EXPECT_EQ(o1.R.row_ptr, Pt.row_ptr);
      EXPECT_EQ(o1.R.col, Pt.col);
      EXPECT_EQ(o1.R.val, Pt.val);
      // C rows are identity rows, F rows have at most 4 entries, and on the
      // graph Laplacian (every row sums to zero) P interpolates constants.
      std::vector<double> one(o1.P.ncols, 1.0), p1(A->nrows);
      cpu::spmv(o1.P, one.data(), p1.data());
      Index interpolated = 0;
      for (Index i = 0; i < A->nrows; ++i) {
        const Index len = o1.P.row_ptr[i + 1] - o1.P.row_ptr[i];
        if (c1.splitting()[i] == kCoarse) {
          ASSERT_EQ(len, 1);
          EXPECT_EQ(o1.P.val[o1.P.row_ptr[i]], 1.0);
          continue;
        }
        EXPECT_LE(len, 4);
        interpolated += len > 0;
        if (A == &L && len > 0) EXPECT_NEAR(p1[i], 1.0, 1e-12) << "row " << i;
      }
      // Distance-four interpolation reaches (nearly) every F point.
      EXPECT_GT(interpolated, 0.95 * (A->nrows - c1.num_coarse()));
      // A rebuild with the same values reproduces the build.
      const auto P0 = o1.P;
      c1.rebuild(*A, o1);
      EXPECT_EQ(o1.P.col, P0.col);
      EXPECT_EQ(o1.P.val, P0.val);
    }
  }
}

std::string pcg_config(const std::string& aggressive_interpolator) {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG",
    "max_iters": 200, "tolerance": 1e-8, "convergence": "RELATIVE_INI_CORE",
    "monitor_residual": 1,
    "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
      "selector": "PMIS", "interpolator": "D2", "interp_max_elements": 4,
      "aggressive_levels": 1, "aggressive_interpolator": ")" +
         aggressive_interpolator + R"(", "max_iters": 1, "cycle": "V",
      "presweeps": 1, "postsweeps": 1, "coarse_solver": "DENSE_LU_SOLVER",
      "smoother": {"scope": "jac", "solver": "JACOBI_L1", "relaxation_factor": 1.0}}}})";
}

int solve_iterations(const std::string& config, const CsrMatrix<double>& A) {
  LinearSolver<double> s(config);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  std::vector<double> b(A.nrows), x(A.nrows, 0.0), r(A.nrows);
  for (Index i = 0; i < A.nrows; ++i) b[i] = std::sin(0.37 * i) + 0.5;
  const SolveResult res = s.solve(b.data(), x.data(), A.nrows, false);
  EXPECT_EQ(res.status, Status::kSuccess);
  cpu::residual(A, x.data(), b.data(), r.data());
  EXPECT_LE(cpu::norm(A.nrows, r.data(), NormType::kL2),
            1e-8 * cpu::norm(A.nrows, b.data(), NormType::kL2) * 1.0001);
  return res.iterations;
}

TEST(ClassicalTwoStage, ConvergesFasterThanMultipass) {
  const auto A = testing::poisson3d<double>(24);
  const int two = solve_iterations(pcg_config("D2_TWO_STAGE"), A);
  const int multipass = solve_iterations(pcg_config("MULTIPASS"), A);
  EXPECT_LT(two, multipass);
}

TEST(ClassicalTwoStage, OnANonAggressiveLevelItIsD2) {
  const auto A = testing::poisson3d<double>(12);
  ClassicalParams p;
  p.selector = Selector::kPmis;
  p.interpolator = Interpolator::kD2;
  p.truncation.max_elements = 4;
  ClassicalCoarsening<double> d2(p);
  p.interpolator = Interpolator::kTwoStageD2;
  ClassicalCoarsening<double> ts(p);
  TransferOperators<double> o1, o2;
  d2.build(A, o1);
  ts.build(A, o2);
  EXPECT_EQ(o1.P.col, o2.P.col);
  EXPECT_EQ(o1.P.val, o2.P.val);
}

TEST(RestrictResidual, EqualsTransposeTimesResidual) {
  const auto A = testing::poisson3d<double>(28);
  ASSERT_GT(A.nrows, kParallelRows);  // the threaded loops run
  ClassicalParams p;
  p.truncation.max_elements = 4;
  p.interpolator = Interpolator::kD2;
  ClassicalCoarsening<double> c(p);
  TransferOperators<double> ops;
  c.build(A, ops);
  const Index n = A.nrows, m = ops.P.ncols;
  std::vector<double> x(n), b(n), r(n), ref_r(n), ref(m), y(m), r_out(n);
  for (Index i = 0; i < n; ++i) {
    x[i] = std::cos(0.1 * i);
    b[i] = std::sin(0.2 * i);
  }
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::vector<double> work(cpu::restrict_work_size(ops.P, threads));
    // With x: P^T (b - A x), also writing the residual.
    cpu::residual(A, x.data(), b.data(), ref_r.data());
    cpu::spmv(ops.R, ref_r.data(), ref.data());
    cpu::restrict_residual(A, x.data(), b.data(), ops.P, y.data(), r_out.data(), work.data(),
                           work.size());
    for (Index i = 0; i < n; ++i) EXPECT_NEAR(r_out[i], ref_r[i], 1e-13);
    for (Index j = 0; j < m; ++j) EXPECT_NEAR(y[j], ref[j], 1e-12 * (1 + std::abs(ref[j])));
    // Without x: P^T b, and no residual written.
    cpu::spmv(ops.R, b.data(), ref.data());
    cpu::restrict_residual(A, static_cast<const double*>(nullptr), b.data(), ops.P, y.data(),
                           static_cast<double*>(nullptr), work.data(), work.size());
    for (Index j = 0; j < m; ++j) EXPECT_NEAR(y[j], ref[j], 1e-12 * (1 + std::abs(ref[j])));
  }
  omp_set_num_threads(saved);
}

// The classical hierarchy keeps P only; transfer() still shows R = P^T and
// the coarse operators are the Galerkin products with it.
TEST(RestrictResidual, HierarchyReportsRAsTransposeOfP) {
  const auto A = testing::poisson3d<double>(20);
  LinearSolver<double> s(pcg_config("D2_TWO_STAGE"));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  struct Peek : KrylovSolver<double> {
    static const Solver<double>* get(const KrylovSolver<double>& k) {
      return (k.*(&Peek::precond_)).get();
    }
  };
  const auto* pcg = dynamic_cast<const KrylovSolver<double>*>(&s.solver());
  ASSERT_NE(pcg, nullptr);
  const auto* amg = dynamic_cast<const AmgSolver<double>*>(Peek::get(*pcg));
  ASSERT_NE(amg, nullptr);
  ASSERT_GE(amg->num_levels(), 2);
  for (int l = 0; l + 1 < amg->num_levels(); ++l) {
    const auto& ops = amg->transfer(l);
    const auto Pt = transpose(ops.P);
    EXPECT_EQ(ops.R.row_ptr, Pt.row_ptr);
    EXPECT_EQ(ops.R.col, Pt.col);
    EXPECT_EQ(ops.R.val, Pt.val);
    const auto ref = testing::galerkin(amg->level_matrix(l), ops.P);
    const auto& Ac = amg->level_matrix(l + 1);
    ASSERT_EQ(Ac.row_ptr, ref.row_ptr);
    ASSERT_EQ(Ac.col, ref.col);
    for (Index k = 0; k < Ac.nnz(); ++k)
      EXPECT_NEAR(Ac.val[k], ref.val[k], 1e-12 * (1 + std::abs(ref.val[k])));
  }
}

}  // namespace
}  // namespace jaxamg
