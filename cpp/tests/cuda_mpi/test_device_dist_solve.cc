// The device-resident distributed solve (cuda::DeviceSolver on a
// distributed solver tree) against the host's distributed solve of the same
// setup, on 2 and 3 processes sharing one GPU: the Krylov method and the
// cycles on the device, halo exchanges staged through host buffers, inner
// products summed over processes. Each case checks the status, the
// iteration count (the same within one) and the solution (equal to the
// host's up to the rounding of the stopping test), and that the true
// residual meets the tolerance. Unsupported configurations are refused
// with their reason. Skips without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cuda/gpu_testing.h"
#include "device/device_solver.h"
#include "dist/dist_linear_solver.h"
#include "mpi/mpi_test_util.h"
#include "problems.h"

namespace jaxamg {
namespace {

using namespace mpitest;

std::string config(const std::string& solver, const std::string& precond) {
  const std::string p = precond.empty() ? "" : ", \"preconditioner\": " + precond;
  return R"({"config_version": 2, "solver": {"solver": ")" + solver +
         R"(", "scope": "main", "max_iters": 300, "tolerance": 1e-8, "monitor_residual": 1,
             "convergence": "RELATIVE_INI", "gmres_n_restart": 20, "subspace_dim_s": 4)" +
         p + "}}";
}

std::string amg(const std::string& algorithm, const std::string& smoother,
                const std::string& extra = "") {
  return R"({"solver": "AMG", "scope": "amg", "algorithm": ")" + algorithm + R"(", "selector": ")" +
         (algorithm == "AGGREGATION" ? "SIZE_2" : "PMIS") +
         R"(", "max_iters": 1, "presweeps": 1, "postsweeps": 1, "max_levels": 10,
             "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32, "min_coarse_rows": 8,
             "smoother": )" +
         smoother + extra + "}";
}

const std::string kJacobiL1 = R"({"solver": "JACOBI_L1", "scope": "jac"})";
const std::string kBlockJacobi = R"({"solver": "BLOCK_JACOBI", "scope": "bj"})";
const std::string kMcGs = R"({"solver": "MULTICOLOR_GS", "scope": "mcgs"})";
const std::string kCheby = R"({"solver": "CHEBYSHEV", "scope": "cheb",
    "chebyshev_polynomial_order": 2, "preconditioner": {"solver": "JACOBI_L1", "scope": "cj"}})";

struct Run {
  SolveResult res;
  std::vector<double> x;
};

double global_norm(const std::vector<double>& v) {
  double s = 0;
  for (double e : v) s += e * e;
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return std::sqrt(s);
}

// Sets up `cfg` on this process's rows of A, solves on the host and on the
// device from the same setup, and compares.
void expect_device_equals_host(const CsrMatrix<double>& A, const std::string& cfg,
                               bool transpose = false) {
  const int64_t n = A.nrows;
  const std::vector<int64_t> starts = partition_starts(n, size(), true);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  const Index nl = static_cast<Index>(hi - lo);
  const LocalRows<double> rows = take_rows(A, lo, hi);
  dist::DistLinearSolver<double> s(cfg, MPI_COMM_WORLD);
  s.setup(lo, n, nl, rows.row_ptr.data(), rows.col.data(), rows.val.data(),
          static_cast<int64_t>(rows.val.size()));
  const std::vector<double> all_b = random_vector(static_cast<int>(n), 7);
  const std::vector<double> b(all_b.begin() + lo, all_b.begin() + hi);

  Run host;
  host.x.assign(nl, 0.0);
  host.res = s.solve(b.data(), host.x.data(), nl, false, transpose);

  const Solver<double>& tree = s.tree(transpose);
  const std::string why = cuda::DeviceSolver<double>::unsupported(tree);
  ASSERT_EQ(why, "") << cfg;
  Run dev;
  dev.x.assign(nl, 0.0);
  {
    cuda::DeviceSolver<double> d(tree);
    double *db = nullptr, *dx = nullptr;
    ASSERT_EQ(cudaMalloc(&db, (nl + 1) * sizeof(double)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&dx, (nl + 1) * sizeof(double)), cudaSuccess);
    cudaMemcpy(db, b.data(), nl * sizeof(double), cudaMemcpyHostToDevice);
    dev.res = d.solve(db, dx, false, nullptr);
    cudaMemcpy(dev.x.data(), dx, nl * sizeof(double), cudaMemcpyDeviceToHost);
    cudaFree(db);
    cudaFree(dx);
  }
  EXPECT_EQ(host.res.status, Status::kSuccess) << cfg;
  EXPECT_EQ(dev.res.status, Status::kSuccess) << cfg;
  EXPECT_NEAR(dev.res.iterations, host.res.iterations, 1) << cfg;
  std::vector<double> diff(nl);
  for (Index i = 0; i < nl; ++i) diff[i] = dev.x[i] - host.x[i];
  EXPECT_LE(global_norm(diff), 1e-6 * global_norm(host.x)) << cfg;
  // The device answer's true residual, by the host's distributed product
  // (with A^T for a transposed solve).
  std::vector<double> r(nl);
  const CsrMatrix<double>& M = tree.matrix();
  M.dist->residual(M, dev.x.data(), b.data(), r.data());
  EXPECT_LE(global_norm(r), 1e-7 * global_norm(b)) << cfg;
}

TEST(DeviceDistSolve, KrylovWithAggregationAmg) {
  REQUIRE_GPU();
  const auto A = testing::poisson3d<double>(14);
  expect_device_equals_host(A, config("PCG", amg("AGGREGATION", kJacobiL1)));
  expect_device_equals_host(A, config("FGMRES", amg("AGGREGATION", kBlockJacobi)));
  expect_device_equals_host(A, config("PBICGSTAB", amg("AGGREGATION", kCheby)));
  expect_device_equals_host(A, config("IDRMSYNC", amg("AGGREGATION", kJacobiL1)));
}

TEST(DeviceDistSolve, ClassicalAcrossProcesses) {
  REQUIRE_GPU();
  // P has ghost coarse columns: prolongation and restriction exchange.
  const auto A = testing::poisson3d<double>(14);
  expect_device_equals_host(A, config("PCG", amg("CLASSICAL", kJacobiL1)));
  expect_device_equals_host(A, config("PBICGSTAB", amg("CLASSICAL", kBlockJacobi)));
  expect_device_equals_host(A, config("PCG", amg("CLASSICAL", kMcGs)));
  expect_device_equals_host(A, config("FGMRES", amg("CLASSICAL", kJacobiL1, R"(, "cycle": "W")")));
}

TEST(DeviceDistSolve, NonsymmetricAndUnpreconditioned) {
  REQUIRE_GPU();
  const auto A = random_matrix<double>(900, 5, false, 41);
  expect_device_equals_host(A, config("BICGSTAB", ""));
  expect_device_equals_host(A, config("GMRES", amg("AGGREGATION", kJacobiL1)));
  // The adjoint's solve: A^T on the transposed hierarchy (classical: P
  // with ghost columns).
  expect_device_equals_host(A, config("PBICGSTAB", amg("CLASSICAL", kJacobiL1)), true);
  const auto S = random_matrix<double>(900, 5, true, 43);
  expect_device_equals_host(S, config("CG", ""));
}

TEST(DeviceDistSolve, AmgAsTheSolver) {
  REQUIRE_GPU();
  const auto A = testing::poisson3d<double>(12);
  std::string outer = amg("CLASSICAL", kJacobiL1);
  outer.insert(outer.size() - 1, R"(, "tolerance": 1e-8, "monitor_residual": 1,
      "convergence": "RELATIVE_INI", "max_iters": 100)");
  outer.replace(outer.find(R"("max_iters": 1,)"), 15, "");
  expect_device_equals_host(A, R"({"config_version": 2, "solver": )" + outer + "}");
}

TEST(DeviceDistSolve, RefusesWhatItCannotRunWithTheReason) {
  REQUIRE_GPU();
  const auto A = testing::poisson3d<double>(10);
  const int64_t n = A.nrows;
  const std::vector<int64_t> starts = partition_starts(n, size(), false);
  const int64_t lo = starts[rank()], hi = starts[rank() + 1];
  const LocalRows<double> rows = take_rows(A, lo, hi);
  const std::string dilu = R"({"solver": "MULTICOLOR_DILU", "scope": "dilu"})";
  dist::DistLinearSolver<double> s(config("PCG", amg("AGGREGATION", dilu)), MPI_COMM_WORLD);
  s.setup(lo, n, static_cast<Index>(hi - lo), rows.row_ptr.data(), rows.col.data(), rows.val.data(),
          static_cast<int64_t>(rows.val.size()));
  const std::string why = cuda::DeviceSolver<double>::unsupported(s.tree(false));
  EXPECT_NE(why.find("MULTICOLOR_DILU on a distributed matrix"), std::string::npos) << why;
}

}  // namespace
}  // namespace jaxamg
