// The device solve's iteration graph (IterationGraph) against its
// per-iteration host loop (JAXAMG_CUDA_GRAPHS=0) on one DeviceSolver: the
// same kernels in the same order, so the same bits -- solution, status,
// iteration count, residual history and traffic -- for every outer method,
// stopping rule and precision, for repeated solves on one capture and for
// an initial guess. Every test skips where no GPU is present.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "backend/cuda/device_array.h"
#include "cuda/gpu_testing.h"
#include "device/device_solver.h"
#include "problems.h"

namespace jaxamg {
namespace {

template <class T>
struct Run {
  SolveResult result;
  std::vector<T> x;
  double bytes = 0;
};

// Two solves (right-hand sides seeded 7 and 8; the second from the first's
// solution when use_x0) on one DeviceSolver with the graph on or off.
template <class T>
std::vector<Run<T>> solve_twice(const Solver<T>& tree, bool graphs, bool use_x0) {
  setenv("JAXAMG_CUDA_GRAPHS", graphs ? "1" : "0", 1);
  // Small CG systems would otherwise take the fused kernel (SmallCg).
  setenv("JAXAMG_SMALL_CG", "0", 1);
  cuda::DeviceSolver<T> dev(tree);
  const Index n = tree.matrix().nrows;
  cuda::DeviceArray<T> db, dx;
  dx.assign(testing::random_vector<T>(n, 11));
  std::vector<Run<T>> runs;
  for (unsigned seed : {7u, 8u}) {
    db.assign(testing::random_vector<T>(n, seed));
    Run<T> r;
    r.result = dev.solve(db.data(), dx.data(), use_x0, nullptr);
    r.x.resize(n);
    cuda::check(cudaMemcpy(r.x.data(), dx.data(), n * sizeof(T), cudaMemcpyDeviceToHost),
                "copy");
    r.bytes = dev.last_solve_bytes();
    runs.push_back(std::move(r));
  }
  unsetenv("JAXAMG_CUDA_GRAPHS");
  unsetenv("JAXAMG_SMALL_CG");
  return runs;
}

template <class T>
void expect_graph_equals_host_loop(const std::string& config, const CsrMatrix<T>& A,
                                   bool use_x0 = false) {
  LinearSolver<T> s(config);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  ASSERT_EQ(cuda::DeviceSolver<T>::unsupported(s.solver()), "");
  const auto host = solve_twice(s.solver(), false, use_x0);
  const auto graph = solve_twice(s.solver(), true, use_x0);
  // Every kernel of a solve is deterministic, so the graph must give the
  // host loop's bits, in float64 and in float32.
  for (std::size_t k = 0; k < host.size(); ++k) {
    SCOPED_TRACE("solve " + std::to_string(k));
    const SolveResult& h = host[k].result;
    const SolveResult& g = graph[k].result;
    EXPECT_GT(h.iterations, 1);  // the graph ran some iterations
    EXPECT_EQ(g.status, h.status);
    // An unmonitored solve keeps no history.
    ASSERT_EQ(g.history.empty(), h.history.empty());
    EXPECT_EQ(g.iterations, h.iterations);
    EXPECT_EQ(g.residual, h.residual);
    EXPECT_EQ(g.history, h.history);
    EXPECT_EQ(graph[k].x, host[k].x);
    EXPECT_DOUBLE_EQ(graph[k].bytes, host[k].bytes);
  }
}

std::string outer(const std::string& solver, const std::string& rest) {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + solver +
         R"(", "norm": "L2", )" + rest + "}}";
}

const char* kAmgPreconditioner = R"("preconditioner": {"scope": "amg", "solver": "AMG",
    "max_iters": 1, "algorithm": "CLASSICAL", "selector": "PMIS", "interpolator": "D2",
    "presweeps": 1, "postsweeps": 1, "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32,
    "smoother": {"scope": "cheby", "solver": "CHEBYSHEV", "chebyshev_polynomial_order": 2,
      "preconditioner": {"scope": "l1", "solver": "JACOBI_L1"}}})";

TEST(IterationGraph, PcgWithAmgRelativeIniAndHistory) {
  REQUIRE_GPU();
  expect_graph_equals_host_loop(
      outer("PCG", R"("max_iters": 100, "tolerance": 1e-9, "convergence": "RELATIVE_INI_CORE",
          "monitor_residual": 1, "store_res_history": 1, )" + std::string(kAmgPreconditioner)),
      testing::jump3d<double>(16, 1e3));
}

TEST(IterationGraph, PbicgstabRelativeMaxWithGuess) {
  REQUIRE_GPU();
  expect_graph_equals_host_loop(
      outer("PBICGSTAB", R"("max_iters": 100, "tolerance": 1e-8, "convergence": "RELATIVE_MAX",
          "monitor_residual": 1, "store_res_history": 1, )" + std::string(kAmgPreconditioner)),
      testing::convection_diffusion2d<double>(40, 0.05), true);
}

TEST(IterationGraph, AmgAsSolverAbsolute) {
  REQUIRE_GPU();
  const std::string amg = kAmgPreconditioner;
  // The preconditioner's body as the outer AMG, monitored.
  const std::string body = amg.substr(amg.find("\"max_iters\": 1,") + 15);
  expect_graph_equals_host_loop(
      outer("AMG", R"("max_iters": 60, "tolerance": 1e-7, "convergence": "ABSOLUTE",
          "monitor_residual": 1, "store_res_history": 1, )" + body.substr(0, body.size() - 1)),
      testing::poisson2d<double>(48));
}

TEST(IterationGraph, UnmonitoredCgRunsMaxIters) {
  REQUIRE_GPU();
  expect_graph_equals_host_loop(outer("CG", R"("max_iters": 40, "monitor_residual": 0)"),
                                testing::poisson2d<double>(64));
}

TEST(IterationGraph, NotConvergedAndCombinedRule) {
  REQUIRE_GPU();
  const auto A = testing::poisson3d<double>(14);
  expect_graph_equals_host_loop(
      outer("CG", R"("max_iters": 7, "tolerance": 1e-12, "monitor_residual": 1,
          "store_res_history": 1)"), A);
  expect_graph_equals_host_loop(
      outer("PCGF", R"("max_iters": 100, "tolerance": 1e-30, "alt_rel_tolerance": 1e-7,
          "convergence": "COMBINED_REL_INI_ABS", "monitor_residual": 1, "store_res_history": 1, )" +
                    std::string(kAmgPreconditioner)),
      A);
}

TEST(IterationGraph, Float32AndFloat32Hierarchy) {
  REQUIRE_GPU();
  expect_graph_equals_host_loop(
      outer("PCG", R"("max_iters": 100, "tolerance": 1e-5, "monitor_residual": 1,
          "store_res_history": 1, )" + std::string(kAmgPreconditioner)),
      testing::poisson3d<float>(16));
  std::string lo = kAmgPreconditioner;
  lo.insert(lo.rfind('}'), R"(, "x_amg_precision": "FLOAT")");
  expect_graph_equals_host_loop(
      outer("PCG", R"("max_iters": 100, "tolerance": 1e-10, "monitor_residual": 1,
          "store_res_history": 1, )" + lo),
      testing::jump3d<double>(16, 1e3));
}

}  // namespace
}  // namespace jaxamg
