// DeviceSetupSolver (an AGGREGATION hierarchy built on the device, the outer
// method from a solver tree that is never set up) against the host setup of
// the same config solved on the device (LinearSolver + DeviceSolver): the
// same iterations, statuses and solutions, forward and transposed (A^T's
// hierarchy built on the device against the host's make_transposed), after
// a setup, a resetup (full and with structure reuse) and replace_values;
// the transposed hierarchy entry for entry; the pattern check; the printed
// statistics against the solve they describe; and the
// configurations it leaves to the host setup, named (those checks read the
// config only and run without a GPU). Random-valued SPD and nonsymmetric
// matrices; the solves run on a non-blocking stream, as XLA's.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "backend/cuda/device_array.h"
#include "backend/cuda/setup/canonical_pattern.h"
#include "core/error.h"
#include "cuda/device_setup_testing.h"
#include "cuda/gpu_testing.h"
#include "device/device_setup_solver.h"
#include "device/device_solver.h"
#include "device/setup/device_aggregation_setup.h"
#include "problems.h"

namespace jaxamg {
namespace {

using cuda::DeviceArray;
using cuda::DeviceSetupSolver;
using testing::DeviceMatrix;

// New random values on A's pattern: off-diagonals scaled by U(0.5, 1.5)
// (the same factor for (i, j) and (j, i) when symmetric), the diagonal the
// row's off-diagonal l1 norm times U(1.05, 1.5): diagonally dominant, so SPD
// when symmetric.
template <class T>
CsrMatrix<T> random_values(const CsrMatrix<T>& A, unsigned seed, bool symmetric) {
  CsrMatrix<T> B = A;
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5), d(1.05, 1.5);
  auto factor = [&](Index i, Index j) {
    if (!symmetric) return u(gen);
    // A number fixed by the unordered pair and the seed.
    std::uint64_t z = (static_cast<std::uint64_t>(std::min(i, j)) << 32 | std::max(i, j)) ^
                      (static_cast<std::uint64_t>(seed) * 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return 0.5 + static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  };
  for (Index i = 0; i < B.nrows; ++i) {
    double off = 0;
    Index diag = -1;
    for (Index k = B.row_ptr[i]; k < B.row_ptr[i + 1]; ++k) {
      if (B.col[k] == i) {
        diag = k;
        continue;
      }
      B.val[k] = static_cast<T>(static_cast<double>(A.val[k]) * factor(i, B.col[k]));
      off += std::abs(static_cast<double>(B.val[k]));
    }
    B.val[diag] = static_cast<T>(off * d(gen));
  }
  return B;
}

// The coarsening keys of the two device-built hierarchies.
const char* const kAggregation = R"("algorithm": "AGGREGATION", "selector": "SIZE_8")";
const char* const kClassical = R"("algorithm": "CLASSICAL", "selector": "PMIS",
    "interpolator": "D2", "strength_threshold": 0.25, "interp_max_elements": 4)";

std::string config(const std::string& outer, const std::string& extra_amg = "",
                   double tol = 1e-8, const std::string& coarsening = kAggregation) {
  const std::string amg = R"("scope": "amg", "solver": "AMG", )" + coarsening + R"(,
      "cycle": "V", "presweeps": 1, "postsweeps": 1, "max_levels": 20,
      "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 64)" + extra_amg + R"(,
      "smoother": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 0.9})";
  std::ostringstream tolerance;
  tolerance << tol;  // 1e-08, not std::to_string's 0.000000
  const std::string common = R"("max_iters": 300, "tolerance": )" + tolerance.str() +
                             R"(, "convergence": "RELATIVE_INI_CORE", "norm": "L2",
      "monitor_residual": 1, "store_res_history": 1)";
  if (outer == "AMG") {
    return R"({"config_version": 2, "solver": {)" + amg + ", " + common + "}}";
  }
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + outer + R"(", )" +
         common + R"(, "preconditioner": {)" + amg + R"(, "max_iters": 1}}})";
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { cuda::check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream"); }
  ~Stream() { cudaStreamDestroy(s); }
};

template <class T>
std::vector<T> download(const DeviceArray<T>& d) {
  std::vector<T> h(d.size());
  cuda::check(cudaMemcpy(h.data(), d.data(), h.size() * sizeof(T), cudaMemcpyDeviceToHost),
              "download");
  return h;
}

template <class T>
struct Run {
  SolveResult r;
  std::vector<T> x;
};

template <class T, class S>
Run<T> solve_with(S& solver, const std::vector<T>& b, cudaStream_t s) {
  DeviceArray<T> db, dx(b.size());
  db.assign(b);
  Run<T> out;
  out.r = solver.solve(db.data(), dx.data(), false, s);
  out.x = download(dx);
  return out;
}

template <class T>
double rel_diff(const std::vector<T>& a, const std::vector<T>& b) {
  double d = 0, r = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += std::pow(static_cast<double>(a[i]) - b[i], 2);
    r += std::pow(static_cast<double>(b[i]), 2);
  }
  return std::sqrt(d / r);
}

// The device-built and the host-built hierarchy give the same solve.
// `slack`: iterations the two may differ by (a classical hierarchy's coarse
// values come from another summation order, so they agree to rounding only).
template <class T>
void expect_same_solve(const Run<T>& dev, const Run<T>& host, const CsrMatrix<T>& A,
                       const std::vector<T>& b, double tol, const std::string& what,
                       int slack = 0) {
  EXPECT_EQ(dev.r.status, Status::kSuccess) << what;
  EXPECT_EQ(host.r.status, Status::kSuccess) << what;
  EXPECT_LE(std::abs(dev.r.iterations - host.r.iterations), slack) << what;
  EXPECT_LT(testing::relative_residual(A, dev.x, b), tol * 1.01) << what;
  EXPECT_LT(rel_diff(dev.x, host.x), 1e3 * tol) << what;
}

template <class T>
Run<T> solve_transposed_with(DeviceSetupSolver<T>& solver, const DeviceMatrix<T>& A,
                             const std::vector<T>& b, cudaStream_t s) {
  DeviceArray<T> db, dx(b.size());
  db.assign(b);
  Run<T> out;
  out.r = solver.solve_transposed(A.view(), db.data(), dx.data(), false, s);
  out.x = download(dx);
  return out;
}

// The host setup's transposed tree (LinearSolver's adjoint) on the device.
template <class T>
Run<T> host_transposed_solve(LinearSolver<T>& ls, const std::vector<T>& b, cudaStream_t s) {
  auto At = std::make_shared<CsrMatrix<T>>(jaxamg::transpose(ls.matrix()));
  const std::unique_ptr<Solver<T>> tree = ls.solver().make_transposed(At);
  cuda::DeviceSolver<T> ds(*tree);
  return solve_with(ds, b, s);
}

template <class T>
Run<T> host_setup_solve(const std::string& cfg, const CsrMatrix<T>& A, const std::vector<T>& b,
                        cudaStream_t s) {
  LinearSolver<T> ls(cfg);
  ls.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  cuda::DeviceSolver<T> ds(ls.solver());
  return solve_with(ds, b, s);
}

template <class T>
CsrMatrix<T> problem(bool symmetric) {
  return symmetric ? random_values(testing::poisson3d<T>(16), 5, true)
                   : random_values(testing::convection_diffusion2d<T>(64, 0.1), 6, false);
}

template <class T>
void check_setup_and_resetup(double tol, const std::string& coarsening = kAggregation) {
  const bool classical = coarsening == kClassical;
  const int slack = classical ? 1 : 0;
  Stream stream;
  for (const bool symmetric : {true, false}) {
    const CsrMatrix<T> A = problem<T>(symmetric);
    const CsrMatrix<T> B = random_values(A, 99, symmetric);
    const std::vector<T> b = testing::random_vector<T>(A.nrows, 7);
    const DeviceMatrix<T> dA(A), dB(B);
    const std::vector<std::string> outers =
        symmetric ? std::vector<std::string>{"PCG", "PCGF", "AMG"}
                  : std::vector<std::string>{"PBICGSTAB"};
    for (const std::string& outer : outers) {
      const std::string what = outer + (symmetric ? " SPD" : " nonsymmetric") +
                               (classical ? " classical" : " aggregation");
      const std::string cfg = config(outer, "", tol, coarsening);
      DeviceSetupSolver<T> dev(cfg);
      ASSERT_EQ(dev.unsupported(), "") << what;
      dev.setup(dA.view());
      EXPECT_GT(dev.hierarchy().size(), 1u) << what;
      expect_same_solve(solve_with(dev, b, stream.s), host_setup_solve(cfg, A, b, stream.s), A, b,
                        tol, what, slack);
      // The adjoint: A^T's hierarchy from the device setup, as the host's
      // make_transposed builds it from the host setup.
      LinearSolver<T> ls(cfg);
      ls.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
      const CsrMatrix<T> At = transpose(A);
      expect_same_solve(solve_transposed_with(dev, dA, b, stream.s),
                        host_transposed_solve(ls, b, stream.s), At, b, tol, what + " transposed",
                        slack);
      // structure_reuse_levels 0 (the default): a resetup is a new setup on B.
      dev.resetup(dB.view());
      expect_same_solve(solve_with(dev, b, stream.s), host_setup_solve(cfg, B, b, stream.s), B, b,
                        tol, what + " resetup", slack);
      ls.setup(B.nrows, B.row_ptr.data(), B.col.data(), B.val.data(), B.nnz());
      expect_same_solve(solve_transposed_with(dev, dB, b, stream.s),
                        host_transposed_solve(ls, b, stream.s), transpose(B), b, tol,
                        what + " resetup transposed", slack);
    }
    if (classical) {
      // Structure reuse of a classical hierarchy is set up on the host.
      const DeviceSetupSolver<T> reuse(config("PCG", R"(, "structure_reuse_levels": -1)", tol,
                                              coarsening));
      EXPECT_NE(reuse.unsupported().find("structure_reuse_levels"), std::string::npos);
      continue;
    }
    // structure_reuse_levels -1: the aggregates of A, the values of B, as
    // the host's resetup with structure reuse.
    const std::string cfg = config(symmetric ? "PCG" : "PBICGSTAB",
                                   R"(, "structure_reuse_levels": -1)", tol);
    DeviceSetupSolver<T> dev(cfg);
    ASSERT_EQ(dev.unsupported(), "");
    dev.setup(dA.view());
    dev.resetup(dB.view());
    LinearSolver<T> ls(cfg);
    ls.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
    ls.resetup(B.val.data(), B.nnz());
    cuda::DeviceSolver<T> host(ls.solver());
    expect_same_solve(solve_with(dev, b, stream.s), solve_with(host, b, stream.s), B, b, tol,
                      "numeric resetup");
    // replace_values: the hierarchy of B, the operator A (as the host's).
    dev.replace_values(dA.val.data(), stream.s);
    ls.replace_values(A.val.data(), A.nnz());
    cuda::DeviceSolver<T> host2(ls.solver());
    expect_same_solve(solve_with(dev, b, stream.s), solve_with(host2, b, stream.s), A, b, tol,
                      "replace_values");
    expect_same_solve(solve_transposed_with(dev, dA, b, stream.s),
                      host_transposed_solve(ls, b, stream.s), transpose(A), b, tol,
                      "replace_values transposed");
  }
}

TEST(DeviceSetupSolver, SameSolvesAsHostSetupFloat64) {
  REQUIRE_GPU();
  check_setup_and_resetup<double>(1e-8);
}

TEST(DeviceSetupSolver, SameSolvesAsHostSetupFloat32) {
  REQUIRE_GPU();
  check_setup_and_resetup<float>(1e-5);
}

TEST(DeviceSetupSolver, ClassicalSameSolvesAsHostSetupFloat64) {
  REQUIRE_GPU();
  check_setup_and_resetup<double>(1e-8, kClassical);
}

TEST(DeviceSetupSolver, ClassicalSameSolvesAsHostSetupFloat32) {
  REQUIRE_GPU();
  check_setup_and_resetup<float>(1e-5, kClassical);
}

// CHEBYSHEV(2) on l1-Jacobi with configured bounds (mode 3) smooths a
// device-built hierarchy as it smooths the host-built one.
TEST(DeviceSetupSolver, ChebyshevSmootherSameSolvesAsHostSetup) {
  REQUIRE_GPU();
  Stream stream;
  const CsrMatrix<double> A = problem<double>(true);
  const std::vector<double> b = testing::random_vector<double>(A.nrows, 8);
  const DeviceMatrix<double> dA(A);
  const std::string l1 = R"({"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 0.9})";
  const std::string cheby = R"({"scope": "cheby", "solver": "CHEBYSHEV",
      "chebyshev_polynomial_order": 2, "chebyshev_lambda_estimate_mode": 3,
      "cheby_max_lambda": 1.0, "cheby_min_lambda": 0.25,
      "preconditioner": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 1.0}})";
  for (const char* coarsening : {kAggregation, kClassical}) {
    std::string cfg = config("PCG", "", 1e-8, coarsening);
    cfg.replace(cfg.find(l1), l1.size(), cheby);
    const std::string what = std::string("Chebyshev ") + coarsening;
    DeviceSetupSolver<double> dev(cfg);
    ASSERT_EQ(dev.unsupported(), "") << what;
    dev.setup(dA.view());
    expect_same_solve(solve_with(dev, b, stream.s), host_setup_solve(cfg, A, b, stream.s), A, b,
                      1e-8, what, coarsening == kClassical ? 1 : 0);
  }
}

// JAX-AMG's default (PBICGSTAB + classical PMIS/D2 + BLOCK_JACOBI 0.9,
// strength 0.5, coarsening down to a one-row dense LU) and a K-cycle with
// BLOCK_JACOBI (inside PCGF, or FGMRES for the nonsymmetric matrix), both on
// a device-built hierarchy: solved as the host-built hierarchy is.
TEST(DeviceSetupSolver, BlockJacobiDefaultConfigAndKCycleSameSolvesAsHostSetup) {
  REQUIRE_GPU();
  Stream stream;
  const std::string l1 = R"({"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 0.9})";
  const std::string bj = R"({"scope": "bj", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.9})";
  const std::string jaxamg_default = R"("algorithm": "CLASSICAL", "selector": "PMIS",
      "interpolator": "D2", "strength_threshold": 0.5)";
  for (const bool symmetric : {true, false}) {
    const CsrMatrix<double> A = problem<double>(symmetric);
    const std::vector<double> b = testing::random_vector<double>(A.nrows, 9);
    const DeviceMatrix<double> dA(A);
    std::string def = config("PBICGSTAB", "", 1e-8, jaxamg_default);
    const std::string rows64 = R"("dense_lu_num_rows": 64)";
    def.replace(def.find(rows64), rows64.size(), R"("dense_lu_num_rows": 1)");
    std::string kcycle = config(symmetric ? "PCGF" : "FGMRES", R"(, "cycle_iters": 2)");
    def.replace(def.find(l1), l1.size(), bj);
    kcycle.replace(kcycle.find(l1), l1.size(), bj);
    const std::string v_cycle = R"("cycle": "V")";
    kcycle.replace(kcycle.find(v_cycle), v_cycle.size(), R"("cycle": "CG")");
    for (const std::string& cfg : {def, kcycle}) {
      const std::string what = (cfg == def ? std::string("default") : std::string("K-cycle")) +
                               (symmetric ? " SPD" : " nonsymmetric");
      DeviceSetupSolver<double> dev(cfg);
      ASSERT_EQ(dev.unsupported(), "") << what;
      dev.setup(dA.view());
      expect_same_solve(solve_with(dev, b, stream.s), host_setup_solve(cfg, A, b, stream.s), A,
                        b, 1e-8, what, cfg == def || !symmetric ? 1 : 0);
    }
  }
}

// x_amg_precision FLOAT: the float32 hierarchy of float32(A) built on the
// device inside the float64 method, forward, transposed and after new
// values, against the host-built float32 hierarchy on the device.
TEST(DeviceSetupSolver, MixedPrecisionSameSolvesAsHostSetup) {
  REQUIRE_GPU();
  Stream stream;
  for (const bool symmetric : {true, false}) {
    const CsrMatrix<double> A = problem<double>(symmetric);
    const CsrMatrix<double> B = random_values(A, 41, symmetric);
    const std::vector<double> b = testing::random_vector<double>(A.nrows, 9);
    const DeviceMatrix<double> dA(A), dB(B);
    for (const char* coarsening : {kAggregation, kClassical}) {
      const int slack = coarsening == kClassical ? 1 : 0;
      const std::string cfg = config(symmetric ? "PCG" : "PBICGSTAB",
                                     R"(, "x_amg_precision": "FLOAT")", 1e-8, coarsening);
      const std::string what = std::string(symmetric ? "SPD " : "nonsymmetric ") + coarsening;
      DeviceSetupSolver<double> dev(cfg);
      ASSERT_EQ(dev.unsupported(), "") << what;
      dev.setup(dA.view());
      ASSERT_NE(dev.float_hierarchy(), nullptr);
      EXPECT_GT(dev.hierarchy().size(), 1u) << what;
      expect_same_solve(solve_with(dev, b, stream.s), host_setup_solve(cfg, A, b, stream.s), A, b,
                        1e-8, what, slack);
      LinearSolver<double> ls(cfg);
      ls.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
      expect_same_solve(solve_transposed_with(dev, dA, b, stream.s),
                        host_transposed_solve(ls, b, stream.s), transpose(A), b, 1e-8,
                        what + " transposed", slack);
      dev.resetup(dB.view());
      expect_same_solve(solve_with(dev, b, stream.s), host_setup_solve(cfg, B, b, stream.s), B, b,
                        1e-8, what + " resetup", slack);
    }
  }
}

// A value beyond float32's range cannot enter a float32 hierarchy: the setup
// names A and the fix; a float32 solver has no float64 hierarchy to show.
TEST(DeviceSetupSolver, MixedPrecisionRejectsValuesBeyondFloat32) {
  REQUIRE_GPU();
  CsrMatrix<double> A = problem<double>(true);
  A.val[A.diag_pos[3]] = 1e39;  // finite in float64, infinite in float32
  const DeviceMatrix<double> dA(A);
  DeviceSetupSolver<double> dev(config("PCG", R"(, "x_amg_precision": "FLOAT")"));
  ASSERT_EQ(dev.unsupported(), "");
  try {
    dev.setup(dA.view());
    ADD_FAILURE() << "no error for a value beyond float32";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "A: a value does not fit float32, which the AMG of scope 'amg' uses "
              "(x_amg_precision FLOAT); scale the system or set x_amg_precision to SAME");
  }
  try {
    dev.device_hierarchy();
    ADD_FAILURE() << "no error for the float64 hierarchy of a FLOAT solver";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()),
              "DeviceSetupSolver::device_hierarchy: this solver's hierarchy is float32 "
              "(x_amg_precision FLOAT) or not built; see float_hierarchy()");
  }
}

// The transposed hierarchy's matrices are the exact transposes of the
// forward ones (the host's transpose, entry for entry).
TEST(DeviceSetupSolver, TransposedHierarchyIsExact) {
  REQUIRE_GPU();
  const CsrMatrix<double> A = problem<double>(false);
  const DeviceMatrix<double> dA(A);
  DeviceSetupSolver<double> dev(config("PBICGSTAB"));
  ASSERT_EQ(dev.unsupported(), "");
  dev.setup(dA.view());
  const auto& fwd =
      dynamic_cast<const cuda::DeviceAggregationSetup<double>&>(dev.device_hierarchy());
  const cuda::DeviceAggregationSetup<double> t = fwd.transposed(dA.view());
  ASSERT_EQ(t.num_levels(), fwd.num_levels());
  for (int l = 0; l < t.num_levels(); ++l) {
    const CsrMatrix<double> expected = transpose(l == 0 ? A : fwd.download_matrix(l));
    const CsrMatrix<double> got = t.download_matrix(l);
    EXPECT_EQ(std::vector<Index>(got.row_ptr.begin(), got.row_ptr.end()),
              std::vector<Index>(expected.row_ptr.begin(), expected.row_ptr.end()))
        << "level " << l;
    EXPECT_EQ(std::vector<Index>(got.col.begin(), got.col.end()),
              std::vector<Index>(expected.col.begin(), expected.col.end()))
        << "level " << l;
    EXPECT_EQ(std::vector<double>(got.val.begin(), got.val.end()),
              std::vector<double>(expected.val.begin(), expected.val.end()))
        << "level " << l;
    if (l + 1 < t.num_levels()) {
      EXPECT_EQ(t.download_aggregates(l), fwd.download_aggregates(l)) << "level " << l;
    }
  }
}

// Field `field` (1 = the first after the key) of each line of `log` whose
// first word is `key`.
std::vector<double> column_after(const std::string& log, const std::string& key, int field) {
  std::vector<double> out;
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string first;
    if (!(words >> first) || first != key) continue;
    double v = 0;
    for (int f = 0; f < field; ++f) words >> v;
    out.push_back(v);
  }
  return out;
}

// print_grid_stats, print_solve_stats and obtain_timings on a device setup
// and solve: the grid table lists the hierarchy's levels, the iteration
// table the solve's monitored norms (the initial one checked against the
// host's ||b||, the last against b - A x from the downloaded solution), and
// the timings the setup and solve.
TEST(DeviceSetupSolver, PrintsStatisticsOfTheDeviceSolve) {
  REQUIRE_GPU();
  Stream stream;
  const CsrMatrix<double> A = problem<double>(true);
  const std::vector<double> b = testing::random_vector<double>(A.nrows, 21);
  const DeviceMatrix<double> dA(A);
  // print_grid_stats is read in the AMG scope, the others in the outer one.
  std::string cfg = config("PCG", R"(, "print_grid_stats": 1)");
  cfg.replace(cfg.find("\"monitor_residual\""), 0,
              "\"print_solve_stats\": 1, \"obtain_timings\": 1, ");
  DeviceSetupSolver<double> solver(cfg);
  ASSERT_EQ(solver.unsupported(), "");
  solver.setup(dA.view());
  const std::string grid = solver.take_log();
  EXPECT_NE(grid.find("AMG Grid:"), std::string::npos) << grid;
  EXPECT_NE(grid.find("Number of Levels: " + std::to_string(solver.hierarchy().size())),
            std::string::npos)
      << grid;
  const auto run = solve_with(solver, b, stream.s);
  ASSERT_EQ(run.r.status, Status::kSuccess);
  const std::string log = solver.take_log();
  EXPECT_NE(log.find("Total Iterations: " + std::to_string(run.r.iterations)), std::string::npos)
      << log;
  const std::vector<double> ini = column_after(log, "Ini", 2);
  ASSERT_EQ(ini.size(), 1u) << log;
  double bnorm = 0;
  for (double v : b) bnorm += v * v;
  EXPECT_NEAR(ini[0], std::sqrt(bnorm), 1e-5 * std::sqrt(bnorm));
  // One row per iteration, numbered from 0; the last is the true residual.
  const std::vector<double> last =
      column_after(log, std::to_string(run.r.iterations - 1), 2);
  ASSERT_FALSE(last.empty()) << log;
  const double true_norm = testing::relative_residual(A, run.x, b) * std::sqrt(bnorm);
  EXPECT_NEAR(last.back(), true_norm, 1e-5 * true_norm) << log;
  EXPECT_NE(log.find("    setup: "), std::string::npos) << log;
  EXPECT_NE(log.find("    solve: "), std::string::npos) << log;
  EXPECT_EQ(log.find("AMG Grid:"), std::string::npos);  // printed at setup only
  // A solve on the cached setup asks for the same table again.
  solver.print_setup_stats();
  EXPECT_EQ(solver.take_log(), grid);
}

TEST(DeviceSetupSolver, PatternCheck) {
  REQUIRE_GPU();
  Stream stream;
  const CsrMatrix<double> A = testing::poisson2d<double>(6);
  auto check = [&](const CsrMatrix<double>& M) {
    const DeviceMatrix<double> d(M);
    return cuda::device_pattern_is_canonical(M.nrows, M.ncols, d.ptr.data(), M.nnz(),
                                             d.col.data(), stream.s);
  };
  EXPECT_TRUE(check(A));
  CsrMatrix<double> unsorted = A;
  std::swap(unsorted.col[unsorted.row_ptr[7]], unsorted.col[unsorted.row_ptr[7] + 1]);
  EXPECT_FALSE(check(unsorted));
  CsrMatrix<double> repeated = A;
  repeated.col[repeated.row_ptr[7] + 1] = repeated.col[repeated.row_ptr[7]];
  EXPECT_FALSE(check(repeated));
  CsrMatrix<double> outside = A;
  outside.col.back() = A.ncols;
  EXPECT_FALSE(check(outside));
}

// The reasons read the config only (no device work): these run anywhere.
TEST(DeviceSetupSolver, LeavesOtherConfigsToTheHost) {
  auto reason = [](const std::string& cfg) { return DeviceSetupSolver<double>(cfg).unsupported(); };
  EXPECT_EQ(reason(config("PCG")), "");
  EXPECT_EQ(reason(config("PBICGSTAB")), "");
  EXPECT_EQ(reason(config("AMG")), "");
  EXPECT_NE(reason(config("CG")).find("no AMG preconditioner"), std::string::npos);
  EXPECT_NE(reason(config("PCG", R"(, "structure_reuse_levels": 2)")).find("structure_reuse"),
            std::string::npos);
  EXPECT_EQ(reason(config("PCG", R"(, "x_amg_precision": "FLOAT")")), "");
  // A float32 hierarchy inside a float32 solve is the host's.
  EXPECT_NE(DeviceSetupSolver<float>(config("PCG", R"(, "x_amg_precision": "FLOAT")"))
                .unsupported()
                .find("x_amg_precision"),
            std::string::npos);
  EXPECT_EQ(reason(config("PCG", "", 1e-8, kClassical)), "");
  EXPECT_NE(reason(config("PCG", R"(, "aggressive_levels": 1)", 1e-8, kClassical)).find("aggressive"),
            std::string::npos);
  std::string cheby = config("PCG");
  cheby.replace(cheby.find("\"JACOBI_L1\""), 11, "\"CHEBYSHEV\"");
  EXPECT_NE(reason(cheby).find("CHEBYSHEV"), std::string::npos);
  std::string stats = config("PCG");
  stats.replace(stats.find("\"monitor_residual\""), 0,
                "\"print_solve_stats\": 1, \"obtain_timings\": 1, ");
  EXPECT_EQ(reason(stats), "");  // the device solve prints its statistics
  std::string fgmres = config("PCG");
  fgmres.replace(fgmres.find("\"PCG\""), 5, "\"FGMRES\"");
  EXPECT_EQ(reason(fgmres), "");  // the engine's FGMRES runs on the device
  std::string idr = config("PCG");
  idr.replace(idr.find("\"PCG\""), 5, "\"IDR\"");
  EXPECT_EQ(reason(idr), "");  // and so does its IDR
  std::string gs = config("PCG");
  gs.replace(gs.find("\"PCG\""), 5, "\"GS\"");
  EXPECT_NE(reason(gs).find("solver GS"), std::string::npos);
  // An invalid config is an error, as for the host setup.
  EXPECT_THROW(DeviceSetupSolver<double>(config("PCG", R"(, "max_levels": 0)")).unsupported(),
               std::exception);
}

}  // namespace
}  // namespace jaxamg
