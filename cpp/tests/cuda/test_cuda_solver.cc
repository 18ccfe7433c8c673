// The CUDA backend's solve against the engine's CPU solve of the same setup:
// same status, iterations within one, the same solution to the tolerance,
// and a true residual under it. Every test skips where no GPU is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "backend/cuda/device_array.h"
#include "cuda/gpu_testing.h"
#include "device/device_solver.h"
#include "problems.h"
#include "test_block_util.h"

namespace jaxamg {
namespace {

std::string krylov_amg(const std::string& krylov, const std::string& amg_body, double tol) {
  std::ostringstream tolerance;  // std::to_string would print 1e-8 as 0.000000
  tolerance << tol;
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + krylov +
         R"(", "max_iters": 200, "tolerance": )" + tolerance.str() +
         R"(, "convergence": "RELATIVE_INI_CORE", "norm": "L2", "monitor_residual": 1,
         "store_res_history": 1, "preconditioner": {"scope": "amg", "solver": "AMG",
         "max_iters": 1, "cycle": "V", )" + amg_body + "}}}";
}

const char* kAggregationL1 = R"("algorithm": "AGGREGATION", "selector": "SIZE_8",
    "presweeps": 1, "postsweeps": 1, "coarse_solver": "DENSE_LU_SOLVER",
    "smoother": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 0.9})";
const char* kClassicalCheby = R"("algorithm": "CLASSICAL", "selector": "PMIS",
    "strength_threshold": 0.25, "interpolator": "D2", "presweeps": 1, "postsweeps": 1,
    "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32,
    "smoother": {"scope": "cheby", "solver": "CHEBYSHEV", "chebyshev_polynomial_order": 2,
      "chebyshev_lambda_estimate_mode": 3, "cheby_max_lambda": 1.0, "cheby_min_lambda": 0.25,
      "preconditioner": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 1.0}})";
const char* kClassicalJacobiW = R"("algorithm": "CLASSICAL", "presweeps": 2, "postsweeps": 1,
    "cycle": "W", "coarse_solver": "NOSOLVER", "coarsest_sweeps": 3,
    "smoother": {"scope": "bj", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.7})";

template <class T>
struct Compared {
  SolveResult cpu, gpu;
  double x_diff = 0;       // ||x_gpu - x_cpu|| / ||x_cpu||
  double gpu_residual = 0;  // ||b - A x_gpu|| / ||b - A x0|| (||b|| without x0)
};

// Solves A x = b (or A^T x = b) on the CPU and on the device from one setup.
template <class T>
Compared<T> compare(const std::string& config, const CsrMatrix<T>& A, bool transpose = false,
                    bool use_x0 = false, Index block_dim = 1) {
  LinearSolver<T> s(config);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), block_dim);
  const Index n = A.nrows;
  const std::vector<T> b = testing::random_vector<T>(n, 7);
  const std::vector<T> x0 = testing::random_vector<T>(n, 11);
  Compared<T> out;
  std::vector<T> x_cpu = x0;
  out.cpu = s.solve(b.data(), x_cpu.data(), n, use_x0, transpose);

  std::unique_ptr<Solver<T>> transposed;
  std::shared_ptr<CsrMatrix<T>> At;
  const Solver<T>* tree = &s.solver();
  if (transpose) {
    At = std::make_shared<CsrMatrix<T>>(jaxamg::transpose(s.matrix()));
    transposed = s.solver().make_transposed(At);
    tree = transposed.get();
  }
  EXPECT_EQ(cuda::DeviceSolver<T>::unsupported(*tree), "");
  cuda::DeviceSolver<T> dev(*tree);
  cuda::DeviceArray<T> db, dx;
  db.assign(b);
  dx.assign(x0);
  out.gpu = dev.solve(db.data(), dx.data(), use_x0, nullptr);
  std::vector<T> x_gpu(n);
  cuda::check(cudaMemcpy(x_gpu.data(), dx.data(), n * sizeof(T), cudaMemcpyDeviceToHost), "copy");
  double d = 0, ref = 0;
  for (Index i = 0; i < n; ++i) {
    d += std::pow(static_cast<double>(x_gpu[i]) - x_cpu[i], 2);
    ref += std::pow(static_cast<double>(x_cpu[i]), 2);
  }
  out.x_diff = std::sqrt(d / ref);
  const CsrMatrix<T>& M = transpose ? *At : s.matrix();
  // RELATIVE_INI_CORE stops relative to the initial residual, ||b|| from zero.
  out.gpu_residual = testing::relative_residual(M, x_gpu, b) /
                     (use_x0 ? testing::relative_residual(M, x0, b) : 1.0);
  return out;
}

template <class T>
void expect_same(const Compared<T>& c, double tol) {
  EXPECT_EQ(c.gpu.status, Status::kSuccess);
  EXPECT_EQ(c.cpu.status, Status::kSuccess);
  EXPECT_LE(std::abs(c.gpu.iterations - c.cpu.iterations), 1)
      << "cpu " << c.cpu.iterations << " gpu " << c.gpu.iterations;
  EXPECT_LT(c.gpu_residual, tol * 1.01);
  // Both solutions are within the tolerance of the exact one (condition
  // number of these problems ~1e3).
  EXPECT_LT(c.x_diff, 1e3 * tol);
  ASSERT_FALSE(c.gpu.history.empty());
  EXPECT_NEAR(c.gpu.history.front(), c.cpu.history.front(), 1e-6 * c.cpu.history.front());
}

TEST(CudaSolver, PcgAggregationJacobiL1MatchesCpu) {
  REQUIRE_GPU();
  const auto A = testing::poisson3d<double>(24);
  expect_same(compare(krylov_amg("PCG", kAggregationL1, 1e-8), A), 1e-8);
}

TEST(CudaSolver, PcgClassicalChebyshevMatchesCpu) {
  REQUIRE_GPU();
  const auto A = testing::jump3d<double>(20, 1e3);
  expect_same(compare(krylov_amg("PCG", kClassicalCheby, 1e-8), A), 1e-8);
}

TEST(CudaSolver, Float32PcgMatchesCpu) {
  REQUIRE_GPU();
  const auto A = testing::poisson3d<float>(20);
  expect_same(compare(krylov_amg("PCG", kAggregationL1, 1e-5), A), 1e-5);
}

TEST(CudaSolver, PcgfWCycleBlockJacobiWithGuess) {
  REQUIRE_GPU();
  const auto A = testing::poisson2d<double>(40);
  expect_same(compare(krylov_amg("PCGF", kClassicalJacobiW, 1e-8), A, false, true), 1e-8);
}

TEST(CudaSolver, PbicgstabNonsymmetricAndTransposed) {
  REQUIRE_GPU();
  const auto A = testing::convection_diffusion2d<double>(40, 0.05);
  expect_same(compare(krylov_amg("PBICGSTAB", kClassicalCheby, 1e-8), A), 1e-8);
  expect_same(compare(krylov_amg("PBICGSTAB", kClassicalCheby, 1e-8), A, true), 1e-8);
}

// `cfg` with `param` (e.g. "\"gmres_n_restart\": 8") added to the outer scope.
std::string with_param(std::string cfg, const std::string& param) {
  const std::string key = "\"max_iters\": 200";
  return cfg.replace(cfg.find(key), key.size(), key + ", " + param);
}

// (F)GMRES is the engine's own method (gmres_method.h) on the CUDA backend:
// full cycles, restarts every 8 steps, a truncated FGMRES window, the L1
// norm (the residual carried by its recurrence), a transposed solve and a
// float32 solve each take the host's iterations.
TEST(CudaSolver, GmresAndFgmresMatchCpu) {
  REQUIRE_GPU();
  const auto A = testing::convection_diffusion2d<double>(40, 0.05);
  const std::string gmres = krylov_amg("GMRES", kClassicalCheby, 1e-8);
  const std::string fgmres = krylov_amg("FGMRES", kAggregationL1, 1e-8);
  expect_same(compare(gmres, A), 1e-8);
  expect_same(compare(gmres, A, true), 1e-8);
  expect_same(compare(fgmres, A, false, true), 1e-8);
  expect_same(compare(with_param(gmres, "\"gmres_n_restart\": 8"), A), 1e-8);
  expect_same(compare(with_param(fgmres, "\"gmres_krylov_dim\": 4"), A), 1e-8);
  std::string l1 = fgmres;
  l1.replace(l1.find("\"norm\": \"L2\""), 12, "\"norm\": \"L1\"");
  expect_same(compare(l1, A), 1e-8);
  const auto Af = testing::convection_diffusion2d<float>(32, 0.05);
  expect_same(compare(krylov_amg("FGMRES", kAggregationL1, 1e-5), Af), 1e-5);
}

// IDR(s) and IDRMSYNC are the engine's one method (idr_method.h) on the CUDA
// backend: s = 1 (BiCGStab's work), s = 4, 8 and 11 (the shadow products
// in two launches of the fused dots), the synchronised variant, a
// transposed solve, a guess, float32, a smoother preconditioner and a
// system with fewer rows than s (the shadow space capped at the rows) each
// take the host's iterations.
TEST(CudaSolver, IdrAndIdrmsyncMatchCpu) {
  REQUIRE_GPU();
  const auto A = testing::convection_diffusion2d<double>(40, 0.05);
  auto idr = [](const char* name, const char* amg, int s, double tol) {
    return with_param(krylov_amg(name, amg, tol), "\"subspace_dim_s\": " + std::to_string(s));
  };
  expect_same(compare(idr("IDR", kClassicalCheby, 1, 1e-8), A), 1e-8);
  expect_same(compare(idr("IDR", kClassicalCheby, 4, 1e-8), A, true), 1e-8);
  expect_same(compare(idr("IDRMSYNC", kAggregationL1, 8, 1e-8), A, false, true), 1e-8);
  expect_same(compare(idr("IDRMSYNC", kClassicalCheby, 4, 1e-8), A), 1e-8);
  expect_same(compare(idr("IDRMSYNC", kClassicalCheby, 11, 1e-8), A), 1e-8);
  expect_same(compare(idr("IDR", kClassicalCheby, 11, 1e-8), A), 1e-8);
  const auto Af = testing::convection_diffusion2d<float>(32, 0.05);
  expect_same(compare(idr("IDR", kAggregationL1, 4, 1e-5), Af), 1e-5);
  const std::string dilu = R"({"config_version": 2, "solver": {"scope": "main",
      "solver": "IDRMSYNC", "subspace_dim_s": 4, "max_iters": 400, "tolerance": 1e-8,
      "convergence": "RELATIVE_INI_CORE", "monitor_residual": 1, "store_res_history": 1,
      "preconditioner": {"scope": "p", "solver": "MULTICOLOR_DILU"}}})";
  expect_same(compare(dilu, A), 1e-8);
  expect_same(compare(idr("IDR", kAggregationL1, 8, 1e-8), testing::poisson2d<double>(2)), 1e-8);
}

TEST(CudaSolver, AmgAsOuterSolver) {
  REQUIRE_GPU();
  const auto A = testing::poisson2d<double>(48);
  const std::string cfg = R"({"config_version": 2, "solver": {"scope": "main", "solver": "AMG",
      "max_iters": 100, "tolerance": 1e-8, "convergence": "RELATIVE_INI_CORE",
      "monitor_residual": 1, "store_res_history": 1, )" + std::string(kClassicalCheby) + "}}";
  expect_same(compare(cfg, A), 1e-8);
}

TEST(CudaSolver, NotConvergedWithinMaxIters) {
  REQUIRE_GPU();
  const auto A = testing::poisson3d<double>(16);
  std::string cfg = krylov_amg("PCG", kAggregationL1, 1e-12);
  cfg.replace(cfg.find("\"max_iters\": 200"), 16, "\"max_iters\": 3");
  const auto c = compare(cfg, A);
  EXPECT_EQ(c.cpu.status, Status::kNotConverged);
  EXPECT_EQ(c.gpu.status, Status::kNotConverged);
  EXPECT_EQ(c.gpu.iterations, 3);
}

// A residual that grows past rel_div_tolerance times the initial one is
// DIVERGED at the same step on the device as on the host: CG's first step on
// a diagonal matrix with 1s and one M = 49 / delta^2, b = 1 but delta at M,
// multiplies the residual by about 3.5 / delta. Small systems run the fused
// CG kernel, large ones the device loop.
TEST(CudaSolver, GrowingResidualIsDivergedAsOnTheHost) {
  REQUIRE_GPU();
  const double delta = 1e-3;
  for (const Index n : {50, 300000}) {
    CsrMatrix<double> A;
    A.nrows = A.ncols = n;
    A.row_ptr.resize(n + 1);
    A.col.resize(n);
    A.val.assign(n, 1.0);
    for (Index i = 0; i <= n; ++i) A.row_ptr[i] = i;
    for (Index i = 0; i < n; ++i) A.col[i] = i;
    const Index big = n / 3;
    A.val[big] = static_cast<double>(n - 1) / (delta * delta);
    std::vector<double> b(n, 1.0);
    b[big] = delta;
    const std::string cfg = R"({"config_version": 2, "solver": {"scope": "main", "solver": "CG",
        "max_iters": 50, "tolerance": 1e-10, "convergence": "RELATIVE_INI",
        "monitor_residual": 1, "store_res_history": 1, "rel_div_tolerance": 1e3}})";
    LinearSolver<double> s(cfg);
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
    std::vector<double> x_cpu(n, 0.0);
    const SolveResult cpu = s.solve(b.data(), x_cpu.data(), n, false);
    ASSERT_EQ(cuda::DeviceSolver<double>::unsupported(s.solver()), "");
    cuda::DeviceSolver<double> dev(s.solver());
    cuda::DeviceArray<double> db, dx;
    db.assign(b);
    dx.assign(std::vector<double>(n, 0.0));
    const SolveResult gpu = dev.solve(db.data(), dx.data(), false, nullptr);
    EXPECT_EQ(cpu.status, Status::kDiverged) << n;
    EXPECT_EQ(gpu.status, Status::kDiverged) << n;
    EXPECT_EQ(cpu.iterations, 1) << n;
    EXPECT_EQ(gpu.iterations, 1) << n;
    EXPECT_NEAR(gpu.residual, cpu.residual, 1e-9 * cpu.residual) << n;
    EXPECT_GT(gpu.residual, 1e3 * std::sqrt(static_cast<double>(n - 1))) << n;
  }
}

// A float32 hierarchy inside the float64 solve (x_amg_precision FLOAT,
// DeviceMixedAmg): the CPU's iterations and a float64 tolerance, for PCG,
// the transposed PBICGSTAB and AMG as the solver (refinement steps).
TEST(CudaSolver, Float32HierarchyInFloat64Solve) {
  REQUIRE_GPU();
  const std::string lo = std::string(kClassicalCheby) + R"(, "x_amg_precision": "FLOAT")";
  expect_same(compare(krylov_amg("PCG", lo, 1e-10), testing::jump3d<double>(20, 1e3)), 1e-10);
  const auto C = testing::convection_diffusion2d<double>(40, 0.05);
  expect_same(compare(krylov_amg("PBICGSTAB", lo, 1e-10), C, true), 1e-10);
  const std::string amg = R"({"config_version": 2, "solver": {"scope": "main", "solver": "AMG",
      "max_iters": 100, "tolerance": 1e-10, "convergence": "RELATIVE_INI_CORE",
      "monitor_residual": 1, "store_res_history": 1, )" + lo + "}}";
  expect_same(compare(amg, testing::poisson2d<double>(48)), 1e-10);
}

// The same config with the AMG scope's cycle replaced.
std::string with_cycle(std::string cfg, const std::string& cycle) {
  const std::string v = R"("cycle": "V")";
  return cfg.replace(cfg.find(v), v.size(), R"("cycle": ")" + cycle + "\"");
}

// K-cycles and error scaling run the engine's one cycle (amg/cycle.h) on the
// device as on the host: the CPU's iterations and solution. Both make the
// preconditioner nonlinear, so the outer method is flexible.
TEST(CudaSolver, KCyclesAndErrorScalingMatchCpu) {
  REQUIRE_GPU();
  const auto A = testing::jump3d<double>(16, 1e2);
  const std::string kcycle = std::string(kAggregationL1) + R"(, "cycle_iters": 2)";
  expect_same(compare(with_cycle(krylov_amg("PCGF", kcycle, 1e-8), "CG"), A), 1e-8);
  expect_same(compare(with_cycle(krylov_amg("PCGF", kcycle, 1e-8), "CGF"), A), 1e-8);
  const std::string scaled2 = std::string(kClassicalCheby) + R"(, "error_scaling": 2)";
  expect_same(compare(with_cycle(krylov_amg("PCGF", scaled2, 1e-8), "W"), A), 1e-8);
  const std::string scaled3 = std::string(kAggregationL1) +
                              R"(, "error_scaling": 3, "scaling_smoother_steps": 1)";
  expect_same(compare(krylov_amg("PCGF", scaled3, 1e-8), A, false, true), 1e-8);
}

// The multicolour smoothers run multicolor_methods.h on the CUDA backend
// with the host's colouring and factors: the CPU's iterations and solution.
TEST(CudaSolver, MulticolorSmoothersMatchCpu) {
  REQUIRE_GPU();
  const std::string gs = R"("algorithm": "AGGREGATION", "selector": "SIZE_4",
      "presweeps": 1, "postsweeps": 1, "coarse_solver": "DENSE_LU_SOLVER",
      "smoother": {"scope": "gs", "solver": "MULTICOLOR_GS", "symmetric_GS": 1,
        "relaxation_factor": 0.9})";
  const std::string dilu = R"("algorithm": "AGGREGATION", "selector": "SIZE_8",
      "presweeps": 1, "postsweeps": 1, "coarse_solver": "DENSE_LU_SOLVER",
      "smoother": {"scope": "dilu", "solver": "MULTICOLOR_DILU", "relaxation_factor": 1.0})";
  const std::string classical_gs = R"("algorithm": "CLASSICAL", "presweeps": 2,
      "postsweeps": 1, "coarse_solver": "NOSOLVER", "coarsest_sweeps": 4,
      "smoother": {"scope": "gs", "solver": "MULTICOLOR_GS", "symmetric_GS": 0})";
  expect_same(compare(krylov_amg("PCG", gs, 1e-8), testing::poisson3d<double>(20)), 1e-8);
  expect_same(compare(krylov_amg("FGMRES", dilu, 1e-8), testing::jump3d<double>(16, 1e2)), 1e-8);
  const auto cd = testing::convection_diffusion2d<double>(40, 0.05);
  expect_same(compare(krylov_amg("PBICGSTAB", classical_gs, 1e-8), cd), 1e-8);
  expect_same(compare(krylov_amg("PBICGSTAB", dilu, 1e-8), cd, true), 1e-8);
  expect_same(compare(krylov_amg("PCG", dilu, 1e-5), testing::poisson3d<float>(16)), 1e-5);
  const std::string ilu = R"("algorithm": "AGGREGATION", "selector": "SIZE_4",
      "presweeps": 1, "postsweeps": 1, "coarse_solver": "DENSE_LU_SOLVER",
      "smoother": {"scope": "ilu", "solver": "MULTICOLOR_ILU", "relaxation_factor": 0.9})";
  expect_same(compare(krylov_amg("FGMRES", ilu, 1e-8), cd), 1e-8);
  expect_same(compare(krylov_amg("FGMRES", ilu, 1e-8), cd, true), 1e-8);
}

// The block smoothers (block_dim 2 and 3): multicolour Gauss-Seidel and
// block Jacobi, a thread per node.
TEST(CudaSolver, BlockSmoothersMatchCpu) {
  REQUIRE_GPU();
  const std::string gs = R"("algorithm": "AGGREGATION", "selector": "SIZE_2",
      "presweeps": 1, "postsweeps": 1, "coarse_solver": "DENSE_LU_SOLVER",
      "smoother": {"scope": "gs", "solver": "MULTICOLOR_GS", "relaxation_factor": 0.8})";
  const std::string bj = R"("algorithm": "AGGREGATION", "selector": "SIZE_2",
      "presweeps": 2, "postsweeps": 2, "coarse_solver": "DENSE_LU_SOLVER",
      "smoother": {"scope": "bj", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.7})";
  const auto P = testing::poisson2d<double>(24);
  for (Index k : {2, 3}) {
    const auto A = testing::random_block_matrix(P, k, 5 + k);
    expect_same(compare(krylov_amg("PBICGSTAB", gs, 1e-8), A, false, false, k), 1e-8);
    expect_same(compare(krylov_amg("PBICGSTAB", bj, 1e-8), A, false, false, k), 1e-8);
    expect_same(compare(krylov_amg("FGMRES", bj, 1e-8), A, true, false, k), 1e-8);
  }
}

// A smoother as the Krylov method's preconditioner (JAX-AMG's MPI demos use
// MULTICOLOR_DILU so): a one-level device hierarchy running its sweeps.
TEST(CudaSolver, SmootherPreconditionersMatchCpu) {
  REQUIRE_GPU();
  auto krylov_smoother = [](const std::string& krylov, const std::string& smoother) {
    return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + krylov +
           R"(", "max_iters": 400, "tolerance": 1e-8, "convergence": "RELATIVE_INI_CORE",
           "monitor_residual": 1, "store_res_history": 1, "preconditioner": )" + smoother +
           "}}";
  };
  const auto A = testing::poisson2d<double>(32);
  const auto cd = testing::convection_diffusion2d<double>(32, 0.05);
  expect_same(compare(krylov_smoother("PCG", R"({"scope": "p", "solver": "MULTICOLOR_DILU"})"), A),
              1e-8);
  expect_same(compare(krylov_smoother("PCG", R"({"scope": "p", "solver": "MULTICOLOR_GS",
      "symmetric_GS": 1, "max_iters": 2})"), A), 1e-8);
  expect_same(compare(krylov_smoother("PBICGSTAB", R"({"scope": "p", "solver": "BLOCK_JACOBI",
      "relaxation_factor": 0.8})"), cd), 1e-8);
  expect_same(compare(krylov_smoother("FGMRES", R"({"scope": "p", "solver": "JACOBI_L1"})"), cd,
                      true), 1e-8);
  expect_same(compare(krylov_smoother("PBICGSTAB", R"({"scope": "p", "solver": "MULTICOLOR_ILU"})"),
                      cd), 1e-8);
}

TEST(CudaSolver, UnsupportedSmootherIsReportedNotRun) {
  // No GPU needed: the check reads the host tree only.
  const auto A = testing::poisson2d<double>(40);
  const std::string cfg = krylov_amg("PCG", R"("algorithm": "AGGREGATION",
      "selector": "SIZE_2", "smoother": {"scope": "gs", "solver": "GS"})", 1e-8);
  LinearSolver<double> s(cfg);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const std::string why = cuda::DeviceSolver<double>::unsupported(s.solver());
  EXPECT_NE(why.find("smoother GS"), std::string::npos) << why;
}

// The reasons a smoother preconditioner stays on the host, word for word
// (no GPU needed: the check reads the host tree only).
TEST(CudaSolver, SmootherPreconditionerReasonsAreExact) {
  auto reason = [](const std::string& preconditioner, const CsrMatrix<double>& A, Index k) {
    LinearSolver<double> s(R"({"config_version": 2, "solver": {"scope": "main",
        "solver": "PBICGSTAB", "max_iters": 50, "preconditioner": )" + preconditioner + "}}");
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz(), k);
    return cuda::DeviceSolver<double>::unsupported(s.solver());
  };
  const auto P = testing::poisson2d<double>(6);
  EXPECT_EQ(reason(R"({"scope": "p", "solver": "MULTICOLOR_DILU", "monitor_residual": 1})", P, 1),
            "a smoother preconditioner that monitors its residual");
  EXPECT_EQ(reason(R"({"scope": "p", "solver": "MULTICOLOR_GS"})",
                   testing::random_block_matrix(P, 9, 3), 9),
            "preconditioner MULTICOLOR_GS of PBICGSTAB (MULTICOLOR_GS with block_dim 9 > 8 "
            "(level 0))");
  EXPECT_EQ(reason(R"({"scope": "p", "solver": "MULTICOLOR_DILU"})", P, 1), "");
}

// IDR and IDRMSYNC solve on the device (no GPU needed: the check reads the
// host tree only).
TEST(CudaSolver, IdrIsADeviceMethod) {
  const auto A = testing::convection_diffusion2d<double>(12, 0.05);
  for (const char* name : {"IDR", "IDRMSYNC"}) {
    LinearSolver<double> s(krylov_amg(name, kAggregationL1, 1e-8));
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
    EXPECT_EQ(cuda::DeviceSolver<double>::unsupported(s.solver()), "") << name;
  }
}

}  // namespace
}  // namespace jaxamg
