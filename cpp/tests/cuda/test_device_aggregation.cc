// The aggregation AMG setup built on the device (device/setup) against
// the host's AmgSolver with the same configuration: the same number of
// levels, exactly the same aggregates on every level, the same coarse
// patterns and coarse values to rounding; resetup against the host's resetup
// with structure reuse, and its determinism; a PCG solve preconditioned by
// the device-built hierarchy against the host-built one. Random-valued
// matrices: 3D Poisson and 2D anisotropic with random positive
// perturbations, and a random nonsymmetric pattern with a dominant diagonal.
// Every test skips where no GPU is present.
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "amg/aggregation/aggregation_coarsening.h"
#include "amg/amg_solver.h"
#include "api/linear_solver.h"
#include "backend/cuda/kernels.h"
#include "cuda/device_setup_testing.h"
#include "cuda/gpu_testing.h"
#include "device/device_amg.h"
#include "device/setup/device_aggregation_setup.h"
#include "problems.h"

namespace jaxamg {
namespace {

using cuda::DeviceAggregationParams;
using cuda::DeviceAggregationSetup;
using cuda::DeviceArray;
using testing::DeviceMatrix;
using testing::perturbed;
using testing::random_nonsymmetric;

// New random values on the same pattern.
template <class T>
CsrMatrix<T> revalued(const CsrMatrix<T>& A, int kind, unsigned seed) {
  if (kind == 1) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> u(-1, 1), d(0.5, 1.5);
    CsrMatrix<T> B = A;
    for (Index i = 0; i < B.nrows; ++i) {
      double off = 0;
      Index diag = -1;
      for (Index k = B.row_ptr[i]; k < B.row_ptr[i + 1]; ++k) {
        if (B.col[k] == i) {
          diag = k;
          continue;
        }
        B.val[k] = static_cast<T>(u(gen));
        off += std::abs(static_cast<double>(B.val[k]));
      }
      B.val[diag] = static_cast<T>(off + d(gen));
    }
    return B;
  }
  return perturbed(A, seed);
}

// kind 0: 3D Poisson, 1: random nonsymmetric, 2: 2D anisotropic.
template <class T>
CsrMatrix<T> problem(int kind) {
  switch (kind) {
    case 0: return perturbed(testing::poisson3d<T>(18), 1);
    case 1: return random_nonsymmetric<T>(6000, 5, 2);
    default: return perturbed(testing::anisotropic2d<T>(72, 0.01), 3);
  }
}

std::string config(const std::string& selector, int weight_formula) {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG",
    "max_iters": 300, "tolerance": 1e-8, "convergence": "RELATIVE_INI_CORE", "norm": "L2",
    "monitor_residual": 1, "preconditioner": {"scope": "amg", "solver": "AMG", "max_iters": 1,
    "cycle": "V", "algorithm": "AGGREGATION", "selector": ")" + selector +
         R"(", "aggregation_passes": 3, "weight_formula": )" + std::to_string(weight_formula) +
         R"(, "presweeps": 1, "postsweeps": 1, "max_levels": 20, "structure_reuse_levels": -1,
    "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 64,
    "smoother": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 0.9}}}})";
}

template <class T>
std::unique_ptr<AmgSolver<T>> host_amg(SolverContext& ctx, const CsrMatrix<T>& A) {
  auto amg = std::make_unique<AmgSolver<T>>(ctx, "amg");
  amg->setup(std::make_shared<CsrMatrix<T>>(A));
  return amg;
}

double max_relative_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double diff = 0, scale = 0;
  for (std::size_t k = 0; k < a.size(); ++k) {
    diff = std::max(diff, std::abs(a[k] - b[k]));
    scale = std::max(scale, std::abs(a[k]));
  }
  return scale > 0 ? diff / scale : diff;
}

template <class Array>
std::vector<double> widened(const Array& v) {
  return std::vector<double>(v.begin(), v.end());
}

// A CSR array as a std::vector, for gtest's comparisons and messages.
template <class Array>
auto vec(const Array& a) {
  return std::vector<std::decay_t<decltype(*a.begin())>>(a.begin(), a.end());
}

// Same levels, aggregates, coarse patterns; coarse values within tol.
// `fresh`: the hierarchy was built for its current values, so its aggregates
// are also select_aggregates() of each level (after a resetup they are the
// aggregates of the values of the setup).
template <class T>
void expect_same_hierarchy(const AmgSolver<T>& host, const DeviceAggregationSetup<T>& dev,
                           double tol, const std::string& what, bool fresh = true) {
  ASSERT_EQ(dev.num_levels(), host.num_levels()) << what;
  ASSERT_GT(host.num_levels(), 1) << what << ": the problem must be coarsened";
  std::size_t bitwise = 0, values = 0;
  for (int l = 0; l < host.num_levels(); ++l) {
    if (l + 1 < host.num_levels()) {
      const auto* c = dynamic_cast<const aggregation::AggregationCoarsening<T>*>(
          host.levels()[l].coarsening.get());
      ASSERT_NE(c, nullptr) << what;
      const std::vector<Index> of = dev.download_aggregates(l);
      EXPECT_EQ(of, c->aggregates().of) << what << " level " << l;
      // And select_aggregates itself on the host's matrix of this level.
      if (fresh) {
        EXPECT_EQ(of,
                  aggregation::select_aggregates(host.level_matrix(l), dev.params().aggregation).of)
            << what << " level " << l;
      }
    }
    if (l == 0) continue;
    const CsrMatrix<T>& h = host.level_matrix(l);
    const CsrMatrix<T> d = dev.download_matrix(l);
    ASSERT_EQ(vec(d.row_ptr), vec(h.row_ptr)) << what << " level " << l;
    ASSERT_EQ(vec(d.col), vec(h.col)) << what << " level " << l;
    EXPECT_LE(max_relative_difference(widened(h.val), widened(d.val)), tol)
        << what << " level " << l;
    for (std::size_t k = 0; k < h.val.size(); ++k) bitwise += h.val[k] == d.val[k];
    values += h.val.size();
  }
  // The sums run in the host's order, so they are expected to be bitwise equal.
  std::printf("  %s: %d levels, %zu of %zu coarse values bitwise equal\n", what.c_str(),
              host.num_levels(), bitwise, values);
}

template <class T>
void check_selectors(double tol) {
  for (int kind = 0; kind < 3; ++kind) {
    const CsrMatrix<T> A = problem<T>(kind);
    const DeviceMatrix<T> dA(A);
    for (const char* selector : {"SIZE_2", "SIZE_4", "SIZE_8", "MULTI_PAIRWISE"}) {
      for (int wf = 0; wf < 2; ++wf) {
        const std::string what = "problem " + std::to_string(kind) + " " + selector +
                                 " weight_formula " + std::to_string(wf);
        SolverContext ctx;
        ctx.config = Config::parse(config(selector, wf));
        const auto host = host_amg(ctx, A);
        DeviceAggregationSetup<T> dev(DeviceAggregationParams::from_config(ctx.config, "amg"));
        dev.setup(dA.view());
        expect_same_hierarchy(*host, dev, tol, what);
      }
    }
  }
}

TEST(DeviceAggregation, SameHierarchyAsHostFloat64) {
  REQUIRE_GPU();
  check_selectors<double>(1e-12);
}

TEST(DeviceAggregation, SameHierarchyAsHostFloat32) {
  REQUIRE_GPU();
  check_selectors<float>(1e-5);
}

template <class T>
void check_resetup(double tol) {
  for (int kind = 0; kind < 3; ++kind) {
    const CsrMatrix<T> A = problem<T>(kind);
    const CsrMatrix<T> B = revalued(A, kind, 100 + kind);
    const DeviceMatrix<T> dA(A), dB(B);
    const std::string what = "resetup problem " + std::to_string(kind);
    SolverContext ctx;
    ctx.config = Config::parse(config("SIZE_8", 0));
    const auto params = DeviceAggregationParams::from_config(ctx.config, "amg");

    DeviceAggregationSetup<T> fresh(params);
    fresh.setup(dA.view());
    std::vector<CsrMatrix<T>> fresh_levels;
    for (int l = 1; l < fresh.num_levels(); ++l) fresh_levels.push_back(fresh.download_matrix(l));

    // Host: setup on A, then a resetup on B keeping every level's structure.
    auto host = host_amg(ctx, A);
    host->setup(std::make_shared<CsrMatrix<T>>(B), true);
    DeviceAggregationSetup<T> dev(params);
    dev.setup(dA.view());
    dev.resetup(dB.view());
    expect_same_hierarchy(*host, dev, tol, what, /*fresh=*/false);

    // Deterministic: another object through the same steps gives the same bits,
    // and a resetup back to A's values gives the fresh setup's bits.
    DeviceAggregationSetup<T> again(params);
    again.setup(dA.view());
    again.resetup(dB.view());
    ASSERT_EQ(again.num_levels(), dev.num_levels());
    for (int l = 1; l < dev.num_levels(); ++l) {
      EXPECT_EQ(vec(again.download_matrix(l).val), vec(dev.download_matrix(l).val))
          << what << " level " << l;
    }
    dev.resetup(dA.view());
    for (int l = 1; l < dev.num_levels(); ++l) {
      EXPECT_EQ(vec(dev.download_matrix(l).val), vec(fresh_levels[l - 1].val))
          << what << " level " << l;
    }
  }
}

TEST(DeviceAggregation, ResetupMatchesHostFloat64) {
  REQUIRE_GPU();
  check_resetup<double>(1e-12);
}

TEST(DeviceAggregation, ResetupMatchesHostFloat32) {
  REQUIRE_GPU();
  check_resetup<float>(1e-5);
}

TEST(DeviceAggregation, ResetupRejectsAnotherPattern) {
  REQUIRE_GPU();
  const CsrMatrix<double> A = problem<double>(0), B = problem<double>(2);
  const DeviceMatrix<double> dA(A), dB(B);
  SolverContext ctx;
  ctx.config = Config::parse(config("SIZE_4", 0));
  DeviceAggregationSetup<double> dev(DeviceAggregationParams::from_config(ctx.config, "amg"));
  dev.setup(dA.view());
  EXPECT_THROW(dev.resetup(dB.view()), InvalidInput);
}

// PCG on the device with the RELATIVE_INI_CORE test in the L2 norm; returns
// the iterations, or -1 without convergence in max_iters.
template <class T>
int device_pcg(cusparseHandle_t handle, cuda::DeviceAmg<T>& M, const std::vector<T>& b_host,
               double tol, int max_iters, std::vector<T>& x_host) {
  const cuda::DeviceCsr<T>& A = M.fine_matrix();
  const std::size_t n = A.rows();
  DeviceArray<T> b, x(n), r(n), z(n), p(n), q(n);
  b.assign(b_host);
  DeviceArray<double> work(cuda::kReduceBlocks), scal(cuda::kNumSlots);
  auto dot = [&](const T* u, const T* v) {
    cuda::reduce<T>(cuda::Reduce::kDot, n, u, v, work.data(), scal.data(), cuda::kScratch,
                    nullptr);
    double d = 0;
    cuda::check(
        cudaMemcpy(&d, scal.data() + cuda::kScratch, sizeof d, cudaMemcpyDeviceToHost), "dot");
    return d;
  };
  auto copy = [&](T* to, const T* from) {
    cuda::check(cudaMemcpy(to, from, n * sizeof(T), cudaMemcpyDeviceToDevice), "copy");
  };
  cuda::fill<T>(n, T(0), x.data(), nullptr);
  copy(r.data(), b.data());
  const double r0 = std::sqrt(dot(r.data(), r.data()));
  M.precondition(r.data(), z.data(), nullptr);
  copy(p.data(), z.data());
  double rz = dot(r.data(), z.data());
  int iterations = -1;
  for (int it = 1; it <= max_iters; ++it) {
    A.spmv(handle, T(1), p.data(), T(0), q.data());
    const double alpha = rz / dot(p.data(), q.data());
    cuda::axpby<T>(n, static_cast<T>(alpha), p.data(), T(1), x.data(), nullptr);
    cuda::axpby<T>(n, static_cast<T>(-alpha), q.data(), T(1), r.data(), nullptr);
    if (std::sqrt(dot(r.data(), r.data())) <= tol * r0) {
      iterations = it;
      break;
    }
    M.precondition(r.data(), z.data(), nullptr);
    const double rz_new = dot(r.data(), z.data());
    cuda::axpby<T>(n, T(1), z.data(), static_cast<T>(rz_new / rz), p.data(), nullptr);
    rz = rz_new;
  }
  x_host.resize(n);
  cuda::check(cudaMemcpy(x_host.data(), x.data(), n * sizeof(T), cudaMemcpyDeviceToHost), "x");
  return iterations;
}

TEST(DeviceAggregation, PcgWithDeviceBuiltHierarchy) {
  REQUIRE_GPU();
  const CsrMatrix<double> A = perturbed(testing::poisson3d<double>(40), 7);
  const std::vector<double> b = testing::random_vector<double>(A.nrows, 5);
  const std::string text = config("SIZE_8", 0);

  // The engine's CPU solve with the host-built hierarchy.
  LinearSolver<double> cpu(text);
  cpu.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  std::vector<double> x_cpu(A.nrows, 0.0);
  const SolveResult res = cpu.solve(b.data(), x_cpu.data(), A.nrows, false, false);
  ASSERT_EQ(res.status, Status::kSuccess);

  SolverContext ctx;
  ctx.config = Config::parse(text);
  const auto host = host_amg(ctx, A);
  const DeviceMatrix<double> dA(A);
  DeviceAggregationSetup<double> dev(DeviceAggregationParams::from_config(ctx.config, "amg"));
  dev.setup(dA.view());

  cusparseHandle_t handle = nullptr;
  cuda::check(cusparseCreate(&handle), "cusparseCreate");
  std::vector<double> x_dev, x_host_built;
  int it_dev = 0, it_host_built = 0;
  {
    cuda::DeviceAmg<double> from_device(handle, dev, ctx, "amg");
    cuda::DeviceAmg<double> from_host(handle, *host);
    EXPECT_EQ(from_device.num_levels(), from_host.num_levels());
    it_dev = device_pcg(handle, from_device, b, 1e-8, 300, x_dev);
    it_host_built = device_pcg(handle, from_host, b, 1e-8, 300, x_host_built);
  }
  cusparseDestroy(handle);
  std::printf("  PCG iterations: CPU %d, GPU host-built %d, GPU device-built %d\n",
              res.iterations, it_host_built, it_dev);
  ASSERT_GT(it_dev, 0) << "no convergence with the device-built hierarchy";
  EXPECT_EQ(it_dev, it_host_built);
  EXPECT_LE(std::abs(it_dev - res.iterations), 1);
  EXPECT_LT(testing::relative_residual(A, x_dev, b), 1.01e-8);
}

TEST(DeviceAggregation, UnsupportedConfigsAreNamed) {
  Config cfg = Config::parse(R"({"config_version": 2, "solver": {"scope": "amg",
      "solver": "AMG", "algorithm": "CLASSICAL"}})");
  EXPECT_THROW(DeviceAggregationParams::from_config(cfg, "amg"), NotSupported);
  cfg = Config::parse(R"({"config_version": 2, "solver": {"scope": "amg", "solver": "AMG",
      "algorithm": "AGGREGATION", "selector": "SIZE_2", "x_smoothed_aggregation": 1}})");
  EXPECT_THROW(DeviceAggregationParams::from_config(cfg, "amg"), NotSupported);

  // The cycle on a device-built hierarchy: JACOBI_L1, a dense LU and the
  // K-cycle run; CHEBYSHEV without configured bounds and a reused error
  // scale are named.
  SolverContext ok;
  ok.config = Config::parse(config("SIZE_8", 0));
  EXPECT_EQ(cuda::DeviceAmg<double>::unsupported(ok, "amg"), "");
  SolverContext cheby;
  cheby.config = Config::parse(R"({"config_version": 2, "solver": {"scope": "amg",
      "solver": "AMG", "algorithm": "AGGREGATION", "selector": "SIZE_2",
      "smoother": {"scope": "c", "solver": "CHEBYSHEV"}}})");
  EXPECT_NE(cuda::DeviceAmg<double>::unsupported(cheby, "amg").find("CHEBYSHEV"),
            std::string::npos);
  SolverContext kcycle;
  kcycle.config = Config::parse(R"({"config_version": 2, "solver": {"scope": "amg",
      "solver": "AMG", "algorithm": "AGGREGATION", "selector": "SIZE_2", "cycle": "CG",
      "smoother": {"scope": "j", "solver": "JACOBI_L1"}}})");
  EXPECT_EQ(cuda::DeviceAmg<double>::unsupported(kcycle, "amg"), "");
  SolverContext reused;
  reused.config = Config::parse(R"({"config_version": 2, "solver": {"scope": "amg",
      "solver": "AMG", "algorithm": "AGGREGATION", "selector": "SIZE_2", "error_scaling": 2,
      "reuse_scale": 3, "smoother": {"scope": "j", "solver": "JACOBI_L1"}}})");
  EXPECT_NE(cuda::DeviceAmg<double>::unsupported(reused, "amg").find("reuse_scale"),
            std::string::npos);
}

}  // namespace
}  // namespace jaxamg
