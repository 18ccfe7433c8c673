// Distributed AMG against the serial engine: the solutions agree (both
// converge to 1e-12), and with rank-local coarsening (aggregation, classical
// PMIS, smoothed aggregation) the iteration count stays within +20% of the
// serial count (+2 on tiny problems, where one iteration is already 20%). The transposed solve of a
// nonsymmetric matrix equals the serial transposed solve.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "api/linear_solver.h"
#include "dist/dist_linear_solver.h"
#include "dist_vs_serial.h"
#include "mpi_test_util.h"
#include "problems.h"

namespace jaxamg {
namespace {

using namespace mpitest;

std::string amg_config(const std::string& outer, const std::string& smoother,
                       const std::string& selector = "SIZE_2") {
  return R"({"config_version": 2, "solver": {"solver": ")" + outer +
         R"(", "scope": "main", "max_iters": 500, "tolerance": 1e-12, "monitor_residual": 1,
         "convergence": "RELATIVE_INI", "gmres_n_restart": 30,
         "preconditioner": {"solver": "AMG", "scope": "amg", "algorithm": "AGGREGATION",
           "selector": ")" + selector + R"(", "max_iters": 1, "cycle": "V", "max_levels": 20,
           "presweeps": 1, "postsweeps": 1, "coarse_solver": "DENSE_LU_SOLVER",
           "dense_lu_num_rows": 32, "smoother": )" + smoother + "}}}";
}

void expect_close_to_serial(const CsrMatrix<double>& A, const std::string& cfg, const char* what,
                            bool transpose = false, Index block_dim = 1) {
  for (bool unequal : {false, true}) {
    const Outcome r = compare(A, cfg, unequal, transpose, block_dim, 5);
    if (rank() == 0) {
      std::printf("[ AMG      ] %s np=%d %s: serial %d iterations, distributed %d\n", what, size(),
                  unequal ? "unequal" : "equal", r.serial_iters, r.dist_iters);
    }
    EXPECT_EQ(r.serial_status, Status::kSuccess) << what;
    EXPECT_EQ(r.dist_status, Status::kSuccess) << what;
    EXPECT_LE(r.rel_diff, 1e-8) << what;
    EXPECT_LE(r.dist_iters, std::max<int>(r.serial_iters * 1.2, r.serial_iters + 2)) << what;
  }
}

const std::string kJacobiL1 = R"({"solver": "JACOBI_L1", "scope": "jac"})";
const std::string kCheby = R"({"solver": "CHEBYSHEV", "scope": "cheb", "chebyshev_polynomial_order": 2,
    "preconditioner": {"solver": "JACOBI_L1", "scope": "cj"}})";
const std::string kPolynomial = R"({"solver": "POLYNOMIAL", "scope": "poly", "kpz_order": 3})";

TEST(DistAmg, PcgAggregationOnPoissonMatchesSerial) {
  expect_close_to_serial(testing::poisson2d<double>(40), amg_config("PCG", kJacobiL1), "PCG+AMG(JACOBI_L1) 2D");
  expect_close_to_serial(testing::poisson3d<double>(12), amg_config("PCG", kCheby, "SIZE_8"),
                         "PCG+AMG(CHEBYSHEV) 3D");
  expect_close_to_serial(testing::poisson2d<double>(40), amg_config("PCG", kPolynomial),
                         "PCG+AMG(POLYNOMIAL) 2D");
}

TEST(DistAmg, NonsymmetricAndTransposedSolvesMatchSerial) {
  const auto A = random_matrix<double>(900, 5, false, 77);
  expect_close_to_serial(A, amg_config("FGMRES", kJacobiL1), "FGMRES+AMG random");
  expect_close_to_serial(A, amg_config("PBICGSTAB", kJacobiL1), "PBICGSTAB+AMG random transposed", true);
}

TEST(DistAmg, BlockMatricesMatchSerial) {
  const auto A = random_matrix<double>(800, 6, true, 88);
  expect_close_to_serial(A, amg_config("PCG", R"({"solver": "BLOCK_JACOBI", "scope": "bj"})"),
                         "PCG+AMG block_dim 2", false, 2);
}

}  // namespace
}  // namespace jaxamg

namespace jaxamg {
namespace {

using namespace mpitest;

std::string classical_config(const std::string& outer, const std::string& interp) {
  return R"({"config_version": 2, "solver": {"solver": ")" + outer +
         R"(", "scope": "main", "max_iters": 500, "tolerance": 1e-12, "monitor_residual": 1,
         "convergence": "RELATIVE_INI", "gmres_n_restart": 30,
         "preconditioner": {"solver": "AMG", "scope": "amg", "algorithm": "CLASSICAL",
           "selector": "PMIS", "interpolator": ")" + interp + R"(", "max_iters": 1,
           "cycle": "V", "max_levels": 20, "presweeps": 1, "postsweeps": 1,
           "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32,
           "x_dist_coarsening": "RANK_LOCAL",
           "smoother": {"solver": "JACOBI_L1", "scope": "jac"}}}})";
}

// (Classical AMG across processes, the default: test_dist_classical.cc.)
TEST(DistAmg, ClassicalPmisWithRankLocalSplittingMatchesSerial) {
  // PMIS and interpolation run on each process's block; P has several
  // entries per row, so its ghost rows travel for the Galerkin product.
  expect_close_to_serial(testing::poisson2d<double>(40), classical_config("PCG", "D1"),
                         "PCG+classical PMIS/D1 2D");
  expect_close_to_serial(testing::poisson3d<double>(12), classical_config("PCG", "D2"),
                         "PCG+classical PMIS/D2 3D");
  expect_close_to_serial(random_matrix<double>(900, 5, false, 79), classical_config("FGMRES", "D2"),
                         "FGMRES+classical random");
}

TEST(DistAmg, SmoothedAggregationMatchesSerial) {
  const std::string cfg = R"({"config_version": 2, "solver": {"solver": "PCG", "scope": "main",
      "max_iters": 500, "tolerance": 1e-12, "monitor_residual": 1, "convergence": "RELATIVE_INI",
      "preconditioner": {"solver": "AMG", "scope": "amg", "algorithm": "AGGREGATION",
        "selector": "SIZE_4", "x_smoothed_aggregation": 1, "max_iters": 1,
        "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32,
        "smoother": {"solver": "JACOBI_L1", "scope": "jac"}}}})";
  expect_close_to_serial(testing::poisson2d<double>(40), cfg, "PCG+smoothed aggregation 2D");
}

TEST(DistAmg, Float32SolveMatchesSerialFloat32) {
  const auto Ad = testing::poisson2d<double>(30);
  const CsrMatrix<float> A = convert_values<float>(Ad);
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), true);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  const std::string cfg = R"({"config_version": 2, "solver": {"solver": "PCG", "scope": "main",
      "max_iters": 200, "tolerance": 1e-5, "monitor_residual": 1, "convergence": "RELATIVE_INI",
      "preconditioner": {"solver": "AMG", "scope": "amg", "algorithm": "AGGREGATION",
        "selector": "SIZE_4", "max_iters": 1, "coarse_solver": "DENSE_LU_SOLVER",
        "dense_lu_num_rows": 32, "smoother": {"solver": "JACOBI_L1", "scope": "j"}}}})";
  const auto bd = random_vector(n, 3);
  const std::vector<float> b(bd.begin(), bd.end());
  LinearSolver<float> serial(cfg);
  serial.setup(n, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  std::vector<float> xs(n, 0.0f);
  ASSERT_EQ(serial.solve(b.data(), xs.data(), n, false).status, Status::kSuccess);
  auto rows = take_rows(A, lo, hi);
  dist::DistLinearSolver<float> ds(cfg, MPI_COMM_WORLD);
  ds.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
           rows.val.data(), static_cast<int64_t>(rows.col.size()));
  std::vector<float> xl(hi - lo, 0.0f);
  EXPECT_EQ(ds.solve(b.data() + lo, xl.data(), static_cast<Index>(hi - lo), false).status,
            Status::kSuccess);
  // Both stop at a relative residual of 1e-5 (cond ~ 400): agreement to 1e-3.
  EXPECT_LE(global_relative_difference(xl, xs, lo), 1e-3);
}

TEST(DistAmg, ResetupWithNewValuesMatchesAFreshSetup) {
  const auto A = testing::poisson2d<double>(24);
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), false);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  auto rows = take_rows(A, lo, hi);
  const std::string cfg = R"({"config_version": 2, "solver": {"solver": "PCG", "scope": "main",
      "max_iters": 300, "tolerance": 1e-12, "monitor_residual": 1, "convergence": "RELATIVE_INI",
      "preconditioner": {"solver": "AMG", "scope": "amg", "algorithm": "AGGREGATION",
        "selector": "SIZE_4", "max_iters": 1, "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 16,
        "smoother": {"solver": "JACOBI_L1", "scope": "j"}}}})";
  dist::DistLinearSolver<double> s(cfg, MPI_COMM_WORLD);
  s.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
          rows.val.data(), static_cast<int64_t>(rows.col.size()));
  std::vector<double> scaled(rows.val);
  for (double& v : scaled) v *= 3.0;
  s.resetup(scaled.data(), static_cast<int64_t>(scaled.size()));
  const auto b = random_vector(n, 4);
  std::vector<double> x1(hi - lo, 0.0), x2(hi - lo, 0.0);
  const SolveResult r1 = s.solve(b.data() + lo, x1.data(), static_cast<Index>(hi - lo), false);
  dist::DistLinearSolver<double> fresh(cfg, MPI_COMM_WORLD);
  fresh.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
              scaled.data(), static_cast<int64_t>(scaled.size()));
  const SolveResult r2 = fresh.solve(b.data() + lo, x2.data(), static_cast<Index>(hi - lo), false);
  // A uniform scale keeps the aggregates: the kept hierarchy with new values
  // is the fresh one, iteration for iteration.
  EXPECT_EQ(r1.iterations, r2.iterations);
  EXPECT_EQ(r1.history.size(), r2.history.size());
  for (int64_t i = 0; i < hi - lo; ++i) EXPECT_NEAR(x1[i], x2[i], 1e-12 * (1 + std::abs(x2[i])));
}

}  // namespace
}  // namespace jaxamg

namespace jaxamg {
namespace {

using namespace mpitest;

TEST(DistAmg, RowsCoupledOnlyAcrossProcessesStayOutOfAggregates) {
  // Row i couples to i +- 1 for even i and to i + n/2 (mod n) for all: with
  // several processes many rows have no coupling inside their own block.
  const int n = 400;
  CsrMatrix<double> A(n, n);
  for (int i = 0; i < n; ++i) {
    std::vector<std::pair<int, double>> e{{i, 4.0}, {(i + n / 2) % n, -1.0}};
    if (i % 2 == 0 && i + 1 < n) e.emplace_back(i + 1, -1.0);
    if (i % 2 == 1) e.emplace_back(i - 1, -1.0);
    std::sort(e.begin(), e.end());
    for (auto& [c, v] : e) { A.col.push_back(c); A.val.push_back(v); }
    A.row_ptr[i + 1] = static_cast<Index>(A.col.size());
  }
  A.find_diagonal();
  const std::string cfg = R"({"config_version": 2, "solver": {"solver": "PCG", "scope": "main",
      "max_iters": 300, "tolerance": 1e-12, "monitor_residual": 1, "convergence": "RELATIVE_INI",
      "preconditioner": {"solver": "AMG", "scope": "amg", "algorithm": "AGGREGATION",
        "selector": "SIZE_2", "max_iters": 1, "coarse_solver": "DENSE_LU_SOLVER",
        "dense_lu_num_rows": 16, "smoother": {"solver": "JACOBI_L1", "scope": "j"}}}})";
  const auto starts = partition_starts(n, size(), false);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  auto rows = take_rows(A, lo, hi);
  dist::DistLinearSolver<double> ds(cfg, MPI_COMM_WORLD);
  ds.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
           rows.val.data(), static_cast<int64_t>(rows.col.size()));
  const auto b = random_vector(n, 6);
  std::vector<double> xl(hi - lo, 0.0);
  const SolveResult r = ds.solve(b.data() + lo, xl.data(), static_cast<Index>(hi - lo), false);
  EXPECT_EQ(r.status, Status::kSuccess);
  // The true residual, independently of the solver.
  std::vector<double> x(n, 0.0);
  std::copy(xl.begin(), xl.end(), x.begin() + lo);
  MPI_Allreduce(MPI_IN_PLACE, x.data(), n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double rr = 0, bb = 0;
  for (int i = 0; i < n; ++i) {
    double s = b[i];
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) s -= A.val[k] * x[A.col[k]];
    rr += s * s;
    bb += b[i] * b[i];
  }
  EXPECT_LE(std::sqrt(rr / bb), 1e-10);
}

}  // namespace
}  // namespace jaxamg

namespace jaxamg {
namespace {

using namespace mpitest;

// The adjoint reuses the forward setup: the transposed solver's hierarchy has
// the forward's levels (same global rows and nonzeros per level, as A^T's
// coarse matrices are the transposes of A's), and its solutions equal the
// serial transposed solves, which reuse the serial setup the same way.
TEST(DistAmg, TransposedSolveReusesTheForwardHierarchy) {
  const auto A = random_matrix<double>(900, 5, false, 83);
  const std::string aggregation = amg_config("FGMRES", kJacobiL1, "SIZE_4");
  const std::string classical = classical_config("FGMRES", "D2");
  for (const std::string* cfg : {&aggregation, &classical}) {
    expect_close_to_serial(A, *cfg, "FGMRES+AMG random, transposed", true);
    const int n = A.nrows;
    const auto starts = partition_starts(n, size(), true, 1);
    const int64_t lo = starts[rank()], hi = starts[rank() + 1];
    auto rows = take_rows(A, lo, hi);
    dist::DistLinearSolver<double> ds(*cfg, MPI_COMM_WORLD);
    ds.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
             rows.val.data(), static_cast<int64_t>(rows.col.size()));
    EXPECT_TRUE(ds.transposed_hierarchy().empty());
    const auto b = random_vector(n, 9);
    std::vector<double> x(hi - lo, 0.0);
    const SolveResult r = ds.solve(b.data() + lo, x.data(), static_cast<Index>(hi - lo), false, true);
    EXPECT_EQ(r.status, Status::kSuccess);
    const auto fwd = ds.hierarchy(), adj = ds.transposed_hierarchy();
    ASSERT_EQ(adj.size(), fwd.size());
    ASSERT_GT(fwd.size(), 1u);
    for (std::size_t l = 0; l < fwd.size(); ++l) {
      EXPECT_EQ(adj[l].rows, fwd[l].rows) << "level " << l;
      EXPECT_EQ(adj[l].nnz, fwd[l].nnz) << "level " << l;
    }
  }
}

}  // namespace
}  // namespace jaxamg

namespace jaxamg {
namespace {

using namespace mpitest;

// Every cycle of the serial AMG runs distributed: W, F and the K-cycles
// (CG, CGF: inner products summed over processes), on aggregation and on
// classical hierarchies, for the forward and the transposed solve.
TEST(DistAmg, WFAndKCyclesMatchSerial) {
  const auto P = testing::poisson3d<double>(12);
  const auto R = random_matrix<double>(900, 5, false, 87);
  for (const char* cycle : {"W", "F", "CG", "CGF"}) {
    const std::string what = std::string("cycle ") + cycle;
    expect_close_to_serial(P, with_cycle(amg_config("PCG", kJacobiL1, "SIZE_4"), cycle),
                           (what + ", PCG+aggregation 3D").c_str());
    expect_close_to_serial(P, with_cycle(classical_config("PCG", "D2"), cycle),
                           (what + ", PCG+classical 3D").c_str());
    expect_close_to_serial(R, with_cycle(amg_config("FGMRES", kJacobiL1, "SIZE_2"), cycle),
                           (what + ", FGMRES+aggregation random, transposed").c_str(), true);
  }
}

// The distributed hierarchy runs the serial one's cycle (amg/cycle.h), so it
// honours every cycle parameter: error scaling (its inner products summed
// over processes), reused scales and finest_sweeps.
TEST(DistAmg, ErrorScalingAndFinestSweepsMatchSerial) {
  const auto A = testing::anisotropic2d<double>(30, 0.05);
  auto with = [](std::string cfg, const std::string& extra) {
    return cfg.replace(cfg.find(R"("cycle": "V")"), 12, R"("cycle": "V", )" + extra);
  };
  const std::string base = amg_config("PCGF", kJacobiL1, "SIZE_4");
  expect_close_to_serial(A, with(base, R"("error_scaling": 2)"), "error_scaling 2");
  expect_close_to_serial(A, with(base, R"("error_scaling": 3, "reuse_scale": 2)"),
                         "error_scaling 3, reuse_scale 2");
  expect_close_to_serial(A, with(base, R"("finest_sweeps": 3)"), "finest_sweeps 3");
}

}  // namespace
}  // namespace jaxamg

namespace jaxamg {
namespace {

using namespace mpitest;

// A resetup of a classical hierarchy keeps every level's splitting and
// rebuilds P from the new values: a uniform scale gives the fresh setup's
// hierarchy and iterations exactly; a nonuniform change keeps the level
// sizes and still solves (checked against the serial engine's resetup, which
// keeps its splitting the same way).
TEST(DistAmg, ClassicalResetupKeepsTheSplittingAndRebuildsInterpolation) {
  const auto A = testing::poisson3d<double>(10);
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), true);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  const std::string cfg = classical_config("PCG", "D2");
  auto rows = take_rows(A, lo, hi);
  dist::DistLinearSolver<double> s(cfg, MPI_COMM_WORLD);
  s.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
          rows.val.data(), static_cast<int64_t>(rows.col.size()));
  const auto levels = s.hierarchy();
  const auto b = random_vector(n, 6);
  const auto solve = [&](dist::DistLinearSolver<double>& d, std::vector<double>& x) {
    x.assign(hi - lo, 0.0);
    return d.solve(b.data() + lo, x.data(), static_cast<Index>(hi - lo), false);
  };
  // Uniform scale: D2 weights are scale invariant, so nothing but values moves.
  std::vector<double> scaled(rows.val);
  for (double& v : scaled) v *= 3.0;
  s.resetup(scaled.data(), static_cast<int64_t>(scaled.size()));
  dist::DistLinearSolver<double> fresh(cfg, MPI_COMM_WORLD);
  fresh.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
              scaled.data(), static_cast<int64_t>(scaled.size()));
  std::vector<double> x1, x2;
  const SolveResult r1 = solve(s, x1), r2 = solve(fresh, x2);
  EXPECT_EQ(r1.iterations, r2.iterations);
  for (int64_t i = 0; i < hi - lo; ++i) EXPECT_NEAR(x1[i], x2[i], 1e-10 * (1 + std::abs(x2[i])));
  // Nonuniform: weaker off-diagonals by a symmetric factor in [0.5, 1], so
  // B stays symmetric and diagonally dominant.
  const CsrMatrix<double> B = perturbed(A);
  auto brows = take_rows(B, lo, hi);
  s.resetup(brows.val.data(), static_cast<int64_t>(brows.val.size()));
  const auto after = s.hierarchy();
  ASSERT_EQ(after.size(), levels.size());
  for (std::size_t l = 0; l < levels.size(); ++l) {
    EXPECT_EQ(after[l].rows, levels[l].rows) << "level " << l;
  }
  LinearSolver<double> serial(cfg);
  serial.setup(n, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  serial.resetup(B.val.data(), B.nnz());
  std::vector<double> xs(n, 0.0);
  const SolveResult rs = serial.solve(b.data(), xs.data(), n, false);
  const SolveResult rd = solve(s, x1);
  EXPECT_EQ(rd.status, Status::kSuccess);
  EXPECT_LE(global_relative_difference(x1, xs, lo), 1e-8);
  EXPECT_LE(rd.iterations, std::max<int>(rs.iterations * 1.2, rs.iterations + 2));
  if (size() == 1) EXPECT_EQ(rd.iterations, rs.iterations);  // the same hierarchy
}

}  // namespace
}  // namespace jaxamg
