// The multicolour smoothers, IDR and an outer DENSE_LU_SOLVER on matrices
// distributed over the processes, against the serial engine on the whole
// matrix: the colouring is valid across processes, and every solve reaches
// the tolerance (1e-12) with a solution within 1e-8 of the serial one. The
// iteration counts are printed ("[ ITERS    ]" lines) for BENCHMARKS.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "dist_vs_serial.h"
#include "mpi_test_util.h"
#include "problems.h"
#include "solvers/smoothers/coloring.h"

namespace jaxamg {
namespace {

using namespace mpitest;

// Poisson on an nx x ny x nz grid whose cell coefficients are random in
// [0.2, 5] (log-uniform): symmetric positive definite, same on every process.
CsrMatrix<double> random_poisson(int nx, int ny, int nz, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(std::log(0.2), std::log(5.0));
  std::vector<double> coef(static_cast<std::size_t>(nx) * ny * nz);
  for (double& c : coef) c = std::exp(u(gen));
  return testing::stencil_matrix<double>(nx, ny, nz, 1, 1, nz > 1 ? 1 : 0,
                                         [&](int i) { return coef[i]; });
}

std::string config(const std::string& solver, const std::string& precond) {
  std::string p = precond.empty() ? "" : ", \"preconditioner\": " + precond;
  return R"({"config_version": 2, "solver": {"solver": ")" + solver +
         R"(", "scope": "main", "max_iters": 1000, "tolerance": 1e-12, "monitor_residual": 1,
             "convergence": "RELATIVE_INI", "gmres_n_restart": 30, "subspace_dim_s": 4)" + p +
         "}}";
}

std::string amg(const std::string& smoother) {
  return R"({"solver": "AMG", "scope": "amg", "algorithm": "AGGREGATION", "selector": "SIZE_2",
             "max_iters": 1, "cycle": "V", "max_levels": 20, "presweeps": 1, "postsweeps": 1,
             "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32, "smoother": )" +
         smoother + "}";
}

const std::string kMcGs = R"({"solver": "MULTICOLOR_GS", "scope": "mcgs", "max_iters": 1})";
const std::string kMcSgs =
    R"({"solver": "MULTICOLOR_GS", "scope": "mcsgs", "max_iters": 1, "symmetric_GS": 1})";
const std::string kDilu = R"({"solver": "MULTICOLOR_DILU", "scope": "dilu", "max_iters": 1})";
const std::string kIlu = R"({"solver": "MULTICOLOR_ILU", "scope": "ilu", "max_iters": 1})";
const std::string kJacobiL1 = R"({"solver": "JACOBI_L1", "scope": "jac", "max_iters": 1})";
const std::string kNone = R"("NOSOLVER")";  // the default preconditioner is AMG

// Both solves converge and agree; `iters_close` also asks for (nearly) the
// serial iteration count, for methods whose distributed iterates are the
// serial ones up to rounding.
void expect_solved(const CsrMatrix<double>& A, const std::string& cfg, const char* what,
                   bool iters_close, Index block_dim = 1) {
  for (bool unequal : {false, true}) {
    const Outcome o = compare(A, cfg, unequal, false, block_dim, 17);
    if (rank() == 0) {
      std::printf("[ ITERS    ] %s np=%d %s: serial %d, distributed %d\n", what, size(),
                  unequal ? "unequal" : "equal", o.serial_iters, o.dist_iters);
    }
    EXPECT_EQ(o.serial_status, Status::kSuccess) << what;
    EXPECT_EQ(o.dist_status, Status::kSuccess) << what;
    EXPECT_LE(o.rel_diff, 1e-8) << what << (unequal ? " (unequal)" : " (equal)");
    if (iters_close) EXPECT_NEAR(o.dist_iters, o.serial_iters, 2 + o.serial_iters / 10) << what;
  }
}

// The colouring the multicolour smoothers use on the distributed matrix,
// gathered, checked against the whole matrix's couplings in both directions.
void expect_valid_coloring(const CsrMatrix<double>& A, const char* what, Index block_dim,
                           bool unequal) {
  const int n = A.nrows;
  const auto starts = partition_starts(n, size(), unequal, block_dim);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  auto rows = take_rows(A, lo, hi);
  dist::DistLinearSolver<double> ds(config("MULTICOLOR_GS", ""), MPI_COMM_WORLD);
  ds.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(),
           rows.val.data(), static_cast<int64_t>(rows.col.size()), block_dim);
  const smoothers::Coloring c = smoothers::greedy_coloring(ds.matrix(), block_dim);
  ASSERT_EQ(c.color.size(), static_cast<std::size_t>(hi - lo));
  if (rank() == 0) {
    std::printf("[ COLORS   ] %s block_dim %d np=%d %s: serial %d, distributed %d\n", what,
                static_cast<int>(block_dim), size(), unequal ? "unequal" : "equal",
                smoothers::greedy_coloring(A, block_dim).num_colors, c.num_colors);
  }
  EXPECT_TRUE(same_on_all_ranks(std::to_string(c.num_colors)));
  std::vector<int> counts(size()), displs(size());
  for (int r = 0; r < size(); ++r) {
    counts[r] = static_cast<int>(starts[r + 1] - starts[r]);
    displs[r] = static_cast<int>(starts[r]);
  }
  std::vector<int> color(n);
  MPI_Allgatherv(c.color.data(), static_cast<int>(c.color.size()), MPI_INT, color.data(),
                 counts.data(), displs.data(), MPI_INT, MPI_COMM_WORLD);
  int conflicts = 0, out_of_range = 0, split_nodes = 0;
  for (int i = 0; i < n; ++i) {
    if (color[i] < 0 || color[i] >= c.num_colors) ++out_of_range;
    if (color[i] != color[i / block_dim * block_dim]) ++split_nodes;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const int j = A.col[k];
      // a_ij couples i and j in both directions: one check covers a_ji.
      if (j / block_dim != i / block_dim && color[i] == color[j]) ++conflicts;
    }
  }
  EXPECT_EQ(conflicts, 0) << "block_dim " << block_dim;
  EXPECT_EQ(out_of_range, 0);
  EXPECT_EQ(split_nodes, 0);
}

TEST(DistColoring, CoupledRowsNeverShareAColourAcrossProcesses) {
  // Random far couplings with a nonsymmetric pattern: some couplings across
  // processes are stored on one side only.
  const auto nonsym = random_matrix<double>(150, 5, false, 81);
  const auto poisson = random_poisson(8, 8, 8, 82);
  const auto blocks = random_matrix<double>(120, 6, false, 83);
  for (bool unequal : {false, true}) {
    expect_valid_coloring(nonsym, "random nonsymmetric", 1, unequal);
    expect_valid_coloring(poisson, "Poisson 3D", 1, unequal);
    expect_valid_coloring(blocks, "random nonsymmetric", 2, unequal);
  }
}

TEST(DistMulticolor, KrylovPreconditionersMatchSerial) {
  const auto p2 = random_poisson(24, 24, 1, 91);
  const auto p3 = random_poisson(9, 9, 9, 92);
  for (const auto& [A, name] : {std::make_pair(&p2, "2D"), std::make_pair(&p3, "3D")}) {
    const std::string tag = std::string("Poisson ") + name + " ";
    expect_solved(*A, config("PCG", kMcSgs), (tag + "PCG+MULTICOLOR_GS(sym)").c_str(), false);
    expect_solved(*A, config("PCG", kDilu), (tag + "PCG+MULTICOLOR_DILU").c_str(), false);
    expect_solved(*A, config("FGMRES", kMcGs), (tag + "FGMRES+MULTICOLOR_GS").c_str(), false);
    expect_solved(*A, config("FGMRES", kIlu), (tag + "FGMRES+MULTICOLOR_ILU").c_str(), false);
  }
}

TEST(DistMulticolor, AmgSmoothersMatchSerial) {
  const auto p2 = random_poisson(24, 24, 1, 93);
  const auto p3 = random_poisson(9, 9, 9, 94);
  for (const auto& [A, name] : {std::make_pair(&p2, "2D"), std::make_pair(&p3, "3D")}) {
    const std::string tag = std::string("Poisson ") + name + " FGMRES+AMG/";
    expect_solved(*A, config("FGMRES", amg(kMcGs)), (tag + "MULTICOLOR_GS").c_str(), false);
    expect_solved(*A, config("FGMRES", amg(kDilu)), (tag + "MULTICOLOR_DILU").c_str(), false);
    expect_solved(*A, config("FGMRES", amg(kIlu)), (tag + "MULTICOLOR_ILU").c_str(), false);
  }
}

TEST(DistMulticolor, BlockMulticolorGaussSeidelMatchesSerial) {
  // block_dim 2: nodes are coloured, and never straddle a process boundary.
  const auto A = random_matrix<double>(160, 6, false, 95);
  expect_solved(A, config("FGMRES", kMcGs), "random block_dim 2 FGMRES+MULTICOLOR_GS", false, 2);
}

TEST(DistIdr, SolutionsAndIterationsMatchSerial) {
  // Convection-diffusion (nonsymmetric) and a random nonsymmetric matrix.
  const auto cd = testing::convection_diffusion2d<double>(20, 0.05);
  const auto rnd = random_matrix<double>(160, 5, false, 96);
  for (const auto& [A, name] : {std::make_pair(&cd, "conv-diff"), std::make_pair(&rnd, "random")}) {
    for (const char* method : {"IDR", "IDRMSYNC"}) {
      const std::string tag = std::string(name) + " " + method;
      expect_solved(*A, config(method, kNone), tag.c_str(), true);
      expect_solved(*A, config(method, kJacobiL1), (tag + "+JACOBI_L1").c_str(), true);
    }
  }
  expect_solved(cd, config("IDRMSYNC", amg(kJacobiL1)), "conv-diff IDRMSYNC+AMG", true);
}

TEST(DistDenseLU, OuterSolveEqualsTheSerialSolve) {
  const auto A = random_matrix<double>(140, 5, false, 97);
  for (bool unequal : {false, true}) {
    const Outcome o = compare(A, config("DENSE_LU_SOLVER", kNone), unequal, false, 1, 18);
    EXPECT_EQ(o.serial_status, Status::kSuccess);
    EXPECT_EQ(o.dist_status, Status::kSuccess);
    EXPECT_EQ(o.dist_iters, o.serial_iters);
    // The same factorisation of the same matrix on rank 0: rounding only.
    EXPECT_LE(o.rel_diff, 1e-13);
  }
}

}  // namespace
}  // namespace jaxamg
