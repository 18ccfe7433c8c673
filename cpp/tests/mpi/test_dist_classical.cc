// Classical AMG across process boundaries (dist/dist_classical.h) against
// the serial engine. PMIS weights come from global ids, so on every number
// of processes and every partition the splitting is the serial splitting,
// and the owned rows of P are the serial rows (same numbers, same order:
// asserted bit for bit). Whole solves agree with the serial solve to 1e-8 at
// tolerance 1e-12 within +20% of the serial iterations; the rank-local
// (lumped) coarsening's iterations are printed next to them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>
#include <vector>

#include "amg/classical/classical_coarsening.h"
#include "amg/classical/splitting.h"
#include "api/linear_solver.h"
#include "dist/dist_classical.h"
#include "dist/dist_linear_solver.h"
#include "dist_vs_serial.h"
#include "mpi_test_util.h"
#include "problems.h"

namespace jaxamg {
namespace {

using namespace mpitest;
using classical::ClassicalParams;
using classical::Interpolator;

// The rows [lo, hi) of P built across processes (global columns) against
// the serial P: the number of rows that differ in any column or bit.
int rows_differing(const dist::DistProlongation<double>& dp, const CsrMatrix<double>& P,
                   int64_t lo, int64_t hi, int64_t cstart) {
  int bad = 0;
  for (int64_t i = lo; i < hi; ++i) {
    const Index li = static_cast<Index>(i - lo);
    // Local columns are [owned | ghost]: compare in global column order.
    std::vector<std::pair<int64_t, double>> row;
    for (Index k = dp.P.row_ptr[li]; k < dp.P.row_ptr[li + 1]; ++k) {
      const Index c = dp.P.col[k];
      row.emplace_back(c < dp.nc ? cstart + c : dp.ghosts[c - dp.nc], dp.P.val[k]);
    }
    std::sort(row.begin(), row.end());
    bool same = static_cast<Index>(row.size()) == P.row_ptr[i + 1] - P.row_ptr[i];
    for (std::size_t q = 0; same && q < row.size(); ++q) {
      const Index k = P.row_ptr[i] + static_cast<Index>(q);
      // Bit for bit: the same weights from the same numbers.
      same = row[q].first == P.col[k] && row[q].second == P.val[k];
    }
    bad += !same;
  }
  return bad;
}

// The splitting and P of the finest level, distributed on this run's
// processes, against ClassicalCoarsening on the global matrix; then a
// rebuild with new values (perturbed(A)) against the serial rebuild.
void expect_serial_splitting_and_p(const CsrMatrix<double>& A, const ClassicalParams& p,
                                   const char* what) {
  // HMIS's first pass runs on each process's block: serial on one process.
  if (p.selector == classical::Selector::kHmis && size() > 1) return;
  const CsrMatrix<double> B = perturbed(A);
  const dist::Communicator comm(MPI_COMM_WORLD);
  for (bool unequal : {false, true}) {
    classical::ClassicalCoarsening<double> serial(p);
    TransferOperators<double> ops;
    serial.build(A, ops);
    const auto& cf = serial.splitting();
    const auto starts = partition_starts(A.nrows, size(), unequal);
    const int64_t lo = starts[rank()], hi = starts[rank() + 1];
    const auto part = dist::RowPartition::build(comm, lo, hi - lo, A.nrows);
    auto local_matrix = [&](const CsrMatrix<double>& M) {
      auto rows = take_rows(M, lo, hi);
      return dist::localize(comm, part,
                            dist::GlobalRows<double>{rows.row_ptr.data(), rows.col.data(),
                                                     rows.val.data(),
                                                     static_cast<int64_t>(rows.col.size())},
                            1);
    };
    const auto local = local_matrix(A);
    const auto* op = dynamic_cast<const dist::DistOperator<double>*>(local.A->dist.get());
    ASSERT_NE(op, nullptr);
    dist::DistClassical<double> dc(p);
    dist::DistProlongation<double> dp;
    dc.build(*op, *local.A, dp);
    const std::string how = std::string(what) + (unequal ? " unequal" : " equal");
    int64_t cstart = 0;
    for (int64_t i = 0; i < lo; ++i) cstart += cf[i] == classical::kCoarse;
    int bad_cf = 0;
    for (int64_t i = lo; i < hi; ++i) bad_cf += dc.splitting()[i - lo] != cf[i];
    EXPECT_EQ(bad_cf, 0) << how << ": points whose C/F state differs from serial";
    EXPECT_EQ(rows_differing(dp, ops.P, lo, hi, cstart), 0) << how << ": rows of P differ";
    EXPECT_EQ(comm.sum_int(dp.nc), ops.P.ncols) << how;
    // New values on the same pattern: weights recomputed on the kept
    // strength, splitting and pattern, on both sides.
    serial.rebuild(B, ops);
    const auto local_b = local_matrix(B);
    const auto* op_b = dynamic_cast<const dist::DistOperator<double>*>(local_b.A->dist.get());
    ASSERT_TRUE(dc.fits(*local_b.A));
    dc.rebuild(*op_b, *local_b.A, dp);
    EXPECT_EQ(rows_differing(dp, ops.P, lo, hi, cstart), 0) << how << ": rebuilt rows of P differ";
  }
}

ClassicalParams params(Interpolator interp, int max_elements = -1, double theta = 0.25,
                       classical::Selector selector = classical::Selector::kPmis) {
  ClassicalParams p;
  p.selector = selector;
  p.interpolator = interp;
  p.truncation.max_elements = max_elements;
  p.strength.theta = theta;
  p.seed = 0x5eed;
  return p;
}

TEST(DistClassical, SplittingAndInterpolationEqualSerialOnAnyPartition) {
  expect_serial_splitting_and_p(testing::poisson3d<double>(11), params(Interpolator::kD1),
                                "3D Poisson D1");
  expect_serial_splitting_and_p(testing::poisson3d<double>(11), params(Interpolator::kD2),
                                "3D Poisson D2");
  expect_serial_splitting_and_p(testing::poisson2d<double>(37), params(Interpolator::kD2, 4),
                                "2D Poisson D2 truncated to 4");
  expect_serial_splitting_and_p(testing::anisotropic2d<double>(30, 0.01),
                                params(Interpolator::kD2, -1, 0.5), "anisotropic D2");
  // Structurally nonsymmetric: dependences and "lost" marks travel back to
  // the owners of ghost points that do not see the dependent point.
  const auto R = random_matrix<double>(900, 5, false, 91);
  expect_serial_splitting_and_p(R, params(Interpolator::kD1), "random nonsymmetric D1");
  expect_serial_splitting_and_p(R, params(Interpolator::kD2), "random nonsymmetric D2");
  expect_serial_splitting_and_p(testing::poisson3d<double>(11),
                                params(Interpolator::kD2, -1, 0.25, classical::Selector::kHmis),
                                "3D Poisson HMIS D2 (one process)");
}

std::string classical_cfg(const std::string& outer, const std::string& interp,
                          const std::string& mode, const std::string& selector = "PMIS") {
  return R"({"config_version": 2, "solver": {"solver": ")" + outer +
         R"(", "scope": "main", "max_iters": 500, "tolerance": 1e-12, "monitor_residual": 1,
         "convergence": "RELATIVE_INI", "gmres_n_restart": 30,
         "preconditioner": {"solver": "AMG", "scope": "amg", "algorithm": "CLASSICAL",
           "selector": ")" + selector + R"(", "interpolator": ")" + interp + R"(", "max_iters": 1,
           "cycle": "V", "max_levels": 20, "presweeps": 1, "postsweeps": 1,
           "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32,
           "x_dist_coarsening": ")" + mode + R"(",
           "smoother": {"solver": "JACOBI_L1", "scope": "jac"}}}})";
}

// Solves across processes and rank-locally against serial. On one process
// the hierarchy across processes is the serial one; on more, the levels
// have the serial sizes up to rounding at the strength threshold (the
// finest splitting is exact: SplittingAndInterpolationEqualSerial...).
void expect_matches_serial(const CsrMatrix<double>& A, const std::string& outer,
                           const std::string& interp, const char* what, bool transpose = false,
                           const std::string& selector = "PMIS") {
  const std::string across = classical_cfg(outer, interp, "ACROSS_PROCESSES", selector);
  for (bool unequal : {false, true}) {
    const Outcome r = compare(A, across, unequal, transpose, 1, 5);
    const Outcome lumped = compare(A, classical_cfg(outer, interp, "RANK_LOCAL", selector), unequal,
                                   transpose, 1, 5);
    if (rank() == 0) {
      std::printf("[ CLASSIC  ] %s np=%d %s: serial %d, rank-local %d, across processes %d\n",
                  what, size(), unequal ? "unequal" : "equal", r.serial_iters, lumped.dist_iters,
                  r.dist_iters);
    }
    EXPECT_EQ(r.dist_status, Status::kSuccess) << what;
    EXPECT_LE(r.rel_diff, 1e-8) << what;
    EXPECT_LE(r.dist_iters, std::max<int>(r.serial_iters * 1.2, r.serial_iters + 1)) << what;
    if (size() == 1) EXPECT_EQ(r.dist_iters, r.serial_iters) << what;  // the serial hierarchy
  }
  // Level sizes: the serial splitting on every level.
  LinearSolver<double> serial(across);
  serial.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const auto starts = partition_starts(A.nrows, size(), true);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  auto rows = take_rows(A, lo, hi);
  dist::DistLinearSolver<double> ds(across, MPI_COMM_WORLD);
  ds.setup(lo, A.nrows, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
           rows.val.data(), static_cast<int64_t>(rows.col.size()));
  const auto hs = serial.hierarchy(), hd = ds.hierarchy();
  ASSERT_EQ(hd.size(), hs.size()) << what;
  for (std::size_t l = 0; l < hs.size(); ++l) {
    if (size() == 1) {
      // Every sum in the serial order: the serial hierarchy exactly.
      EXPECT_EQ(hd[l].rows, hs[l].rows) << what << " level " << l;
      EXPECT_EQ(hd[l].nnz, hs[l].nnz) << what << " level " << l;
    } else if (selector == "PMIS") {  // HMIS's splitting depends on the partition
      // Coarse rows gather partial sums from several processes: rounding
      // may tip a coupling that sits exactly at the strength threshold.
      EXPECT_NEAR(hd[l].rows, hs[l].rows, 0.01 * hs[l].rows) << what << " level " << l;
      EXPECT_NEAR(hd[l].nnz, hs[l].nnz, 0.01 * hs[l].nnz) << what << " level " << l;
    }
  }
}

TEST(DistClassical, SolvesMatchSerialWithinTwentyPercentOfItsIterations) {
  expect_matches_serial(testing::poisson3d<double>(16), "PCG", "D1", "PCG+PMIS/D1 3D Poisson 16^3");
  expect_matches_serial(testing::poisson3d<double>(16), "PCG", "D2", "PCG+PMIS/D2 3D Poisson 16^3");
  expect_matches_serial(testing::poisson2d<double>(40), "PCG", "D1", "PCG+PMIS/D1 2D Poisson 40^2");
  expect_matches_serial(testing::jump3d<double>(12, 1e3), "PCG", "D2", "PCG+PMIS/D2 3D jump");
}

TEST(DistClassical, WAndKCyclesMatchSerial) {
  const auto A = testing::poisson3d<double>(12);
  for (const char* cycle : {"W", "F", "CGF"}) {
    const std::string cfg = with_cycle(classical_cfg("PCGF", "D2", "ACROSS_PROCESSES"), cycle);
    for (bool unequal : {false, true}) {
      const Outcome r = compare(A, cfg, unequal, false, 1, 4);
      EXPECT_EQ(r.dist_status, Status::kSuccess) << cycle;
      EXPECT_LE(r.rel_diff, 1e-8) << cycle;
      EXPECT_LE(r.dist_iters, std::max<int>(r.serial_iters * 1.2, r.serial_iters + 1)) << cycle;
    }
  }
}

TEST(DistClassical, HmisSolvesMatchSerial) {
  expect_matches_serial(testing::poisson3d<double>(16), "PCG", "D2", "PCG+HMIS/D2 3D Poisson 16^3",
                        false, "HMIS");
  expect_matches_serial(random_matrix<double>(900, 5, false, 79), "FGMRES", "D1",
                        "FGMRES+HMIS/D1 random transposed", true, "HMIS");
}

TEST(DistClassical, NonsymmetricAndAdjointSolvesMatchSerial) {
  const auto A = random_matrix<double>(900, 5, false, 79);
  expect_matches_serial(A, "FGMRES", "D2", "FGMRES+PMIS/D2 random");
  expect_matches_serial(A, "PBICGSTAB", "D1", "PBICGSTAB+PMIS/D1 random transposed", true);
  expect_matches_serial(testing::convection_diffusion2d<double>(30, 0.01), "FGMRES", "D2",
                        "FGMRES+PMIS/D2 convection-diffusion transposed", true);
}

// The Python interface's default configuration (PBICGSTAB + classical
// PMIS/D2 with BLOCK_JACOBI, coarsened down to a handful of rows): the
// coarse levels leave some processes without rows, and their plans without
// neighbours.
TEST(DistClassical, DefaultConfigDownToTinyLevels) {
  const std::string cfg = R"({"config_version": 2, "solver": {"scope": "main",
      "solver": "PBICGSTAB", "convergence": "RELATIVE_INI", "tolerance": 1e-12,
      "max_iters": 1000, "monitor_residual": 1,
      "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
        "selector": "PMIS", "interpolator": "D2", "presweeps": 1, "postsweeps": 1,
        "smoother": {"scope": "amg_smoother", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.9},
        "max_levels": 100, "strength_threshold": 0.5, "dense_lu_num_rows": 1,
        "coarse_solver": "DENSE_LU_SOLVER", "max_iters": 1, "cycle": "V"}}})";
  for (const auto& A : {testing::poisson2d<double>(24), random_matrix<double>(500, 5, false, 81)}) {
    for (bool unequal : {false, true}) {
      const Outcome r = compare(A, cfg, unequal, false, 1, 9);
      EXPECT_EQ(r.dist_status, Status::kSuccess);
      EXPECT_LE(r.rel_diff, 1e-8);
      EXPECT_LE(r.dist_iters, std::max<int>(r.serial_iters * 1.2, r.serial_iters + 1));
    }
  }
}

// float32 across processes: the serial float32 solve's solution (to the
// tolerance) within +20% of its iterations.
TEST(DistClassical, Float32SolveMatchesSerialFloat32) {
  const CsrMatrix<float> A = convert_values<float>(testing::poisson3d<double>(12));
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), true);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  const std::string cfg = R"({"config_version": 2, "solver": {"solver": "PCG", "scope": "main",
      "max_iters": 200, "tolerance": 1e-5, "monitor_residual": 1, "convergence": "RELATIVE_INI",
      "preconditioner": {"solver": "AMG", "scope": "amg", "algorithm": "CLASSICAL",
        "selector": "PMIS", "interpolator": "D2", "max_iters": 1,
        "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32,
        "smoother": {"solver": "JACOBI_L1", "scope": "j"}}}})";
  const auto bd = random_vector(n, 3);
  const std::vector<float> b(bd.begin(), bd.end());
  LinearSolver<float> serial(cfg);
  serial.setup(n, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  std::vector<float> xs(n, 0.0f);
  const SolveResult rs = serial.solve(b.data(), xs.data(), n, false);
  ASSERT_EQ(rs.status, Status::kSuccess);
  auto rows = take_rows(A, lo, hi);
  dist::DistLinearSolver<float> ds(cfg, MPI_COMM_WORLD);
  ds.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
           rows.val.data(), static_cast<int64_t>(rows.col.size()));
  std::vector<float> xl(hi - lo, 0.0f);
  const SolveResult rd = ds.solve(b.data() + lo, xl.data(), static_cast<Index>(hi - lo), false);
  EXPECT_EQ(rd.status, Status::kSuccess);
  EXPECT_LE(rd.iterations, std::max<int>(rs.iterations * 1.2, rs.iterations + 1));
  // Both stop at a relative residual of 1e-5: agreement to 1e-3.
  EXPECT_LE(global_relative_difference(xl, xs, lo), 1e-3);
}

// A resetup keeps every level's splitting and interpolation pattern and
// recomputes the weights from the new values, as the serial resetup does:
// with PMIS (the serial splitting) it solves as the serial resetup does.
TEST(DistClassical, ResetupKeepsTheSplittingAndMatchesTheSerialResetup) {
  const auto A = testing::poisson3d<double>(12);
  const int n = A.nrows;
  const CsrMatrix<double> B = perturbed(A);
  const auto starts = partition_starts(n, size(), true);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  auto rows = take_rows(A, lo, hi);
  auto brows = take_rows(B, lo, hi);
  const auto b = random_vector(n, 8);
  for (const char* selector : {"PMIS", "HMIS"}) {
    for (const char* interp : {"D1", "D2"}) {
      const std::string cfg = classical_cfg("PCG", interp, "ACROSS_PROCESSES", selector);
      const std::string what = std::string(selector) + "/" + interp;
      LinearSolver<double> serial(cfg);
      serial.setup(n, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
      serial.resetup(B.val.data(), B.nnz());
      std::vector<double> xs(n, 0.0);
      const SolveResult rs = serial.solve(b.data(), xs.data(), n, false);
      dist::DistLinearSolver<double> ds(cfg, MPI_COMM_WORLD);
      ds.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
               rows.val.data(), static_cast<int64_t>(rows.col.size()));
      const auto before = ds.hierarchy();
      ds.resetup(brows.val.data(), static_cast<int64_t>(brows.val.size()));
      const auto after = ds.hierarchy();
      // The levels kept their splittings; as in the serial AMG, a level that
      // was the coarsest may now coarsen further.
      ASSERT_GE(after.size(), before.size()) << what;
      for (std::size_t l = 0; l < before.size(); ++l) {
        EXPECT_EQ(after[l].rows, before[l].rows) << what << " level " << l;
      }
      if (size() == 1) EXPECT_EQ(after.size(), serial.hierarchy().size()) << what;
      std::vector<double> x(hi - lo, 0.0);
      const SolveResult rd = ds.solve(b.data() + lo, x.data(), static_cast<Index>(hi - lo), false);
      EXPECT_EQ(rd.status, Status::kSuccess) << what;
      EXPECT_LE(global_relative_difference(x, xs, lo), 1e-8) << what;
      if (std::string(selector) == "PMIS" || size() == 1) {
        EXPECT_EQ(rd.iterations, rs.iterations) << what;
      } else {
        EXPECT_LE(rd.iterations, std::max<int>(rs.iterations * 1.2, rs.iterations + 1)) << what;
      }
    }
  }
}

// The numbers of the report: 3D Poisson 32^3, PCG + V(1,1) classical AMG.
// Run with --gtest_also_run_disabled_tests.
TEST(DistClassical, DISABLED_Poisson32Iterations) {
  expect_matches_serial(testing::poisson3d<double>(32), "PCG", "D1", "PCG+PMIS/D1 3D Poisson 32^3");
  expect_matches_serial(testing::poisson3d<double>(32), "PCG", "D2", "PCG+PMIS/D2 3D Poisson 32^3");
}

}  // namespace
}  // namespace jaxamg
