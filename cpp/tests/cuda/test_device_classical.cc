// The classical AMG setup built on the device (device/setup) against
// the host's: on every level the device's strength, PMIS splitting and
// interpolation are those of the host's ClassicalCoarsening run on the same
// level matrix (the splitting equal, P equal bit for bit; two-stage P to
// rounding), and the whole
// hierarchy agrees with the host's AmgSolver (same levels, the same first
// coarse matrix to rounding: the Galerkin sums are cuSPARSE's). Random
// values on 3D Poisson, 2D anisotropic and a random nonsymmetric pattern;
// D1, D2 and aggressive levels with D2 and D2_TWO_STAGE, AHAT and ALL,
// several truncations. Every test skips where no
// GPU is present.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "amg/amg_solver.h"
#include "amg/classical/classical_coarsening.h"
#include "core/error.h"
#include "cuda/device_setup_testing.h"
#include "cuda/gpu_testing.h"
#include "device/setup/device_classical_setup.h"
#include "problems.h"

namespace jaxamg {
namespace {

using cuda::DeviceClassicalParams;
using cuda::DeviceClassicalSetup;
using testing::DeviceMatrix;

// kind 0: 3D Poisson, 1: random nonsymmetric, 2: 2D anisotropic (all random values).
template <class T>
CsrMatrix<T> problem(int kind) {
  switch (kind) {
    case 0: return testing::perturbed(testing::poisson3d<T>(16), 11);
    case 1: return testing::random_nonsymmetric<T>(5000, 6, 12);
    default: return testing::perturbed(testing::anisotropic2d<T>(64, 0.01), 13);
  }
}

std::string config(const std::string& classical, const std::string& selector = "PMIS") {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG",
    "max_iters": 300, "tolerance": 1e-8, "convergence": "RELATIVE_INI_CORE", "norm": "L2",
    "monitor_residual": 1, "preconditioner": {"scope": "amg", "solver": "AMG", "max_iters": 1,
    "cycle": "V", "algorithm": "CLASSICAL", "selector": ")" + selector + R"(", )" + classical + R"(,
    "presweeps": 1, "postsweeps": 1, "max_levels": 20,
    "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 48,
    "smoother": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 1.0}}}})";
}

// The variants checked: interpolator, strength, truncation.
const char* const kVariants[] = {
    R"("interpolator": "D2", "strength_threshold": 0.25, "interp_max_elements": 4)",
    R"("interpolator": "D2", "strength_threshold": 0.5, "interp_truncation_factor": 0.2)",
    R"("interpolator": "D2", "strength": "ALL", "interp_max_elements": 12)",
    R"("interpolator": "D1", "strength_threshold": 0.25)",
    R"("interpolator": "D1", "strength_threshold": 0.25, "interp_max_elements": 2)",
    R"("interpolator": "D2", "strength_threshold": 0.25, "max_row_sum": 0.95)",
    R"("interpolator": "D2", "strength_threshold": 0.25, "interp_max_elements": 4,
       "aggressive_levels": 1, "aggressive_interpolator": "D2_TWO_STAGE")",
    R"("interpolator": "D2", "strength_threshold": 0.25, "interp_max_elements": 4,
       "aggressive_levels": 2, "aggressive_interpolator": "D2")",
};

template <class Array>
auto vec(const Array& a) {
  return std::vector<std::decay_t<decltype(*a.begin())>>(a.begin(), a.end());
}

// max |a - b| over the union of the patterns, relative to max |a|.
template <class T>
double matrix_difference(const CsrMatrix<T>& a, const CsrMatrix<T>& b) {
  std::map<std::pair<Index, Index>, double> d;
  double scale = 0;
  for (Index i = 0; i < a.nrows; ++i) {
    for (Index k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      d[{i, a.col[k]}] += static_cast<double>(a.val[k]);
      scale = std::max(scale, std::abs(static_cast<double>(a.val[k])));
    }
  }
  for (Index i = 0; i < b.nrows; ++i) {
    for (Index k = b.row_ptr[i]; k < b.row_ptr[i + 1]; ++k) {
      d[{i, b.col[k]}] -= static_cast<double>(b.val[k]);
    }
  }
  double diff = 0;
  for (const auto& e : d) diff = std::max(diff, std::abs(e.second));
  return scale > 0 ? diff / scale : diff;
}

// Every level of `dev` against the host coarsening of the device's own level
// matrix: exact (two-stage P: the same pattern, values to `tol`).
template <class T>
void expect_levels_match_host(const DeviceClassicalSetup<T>& dev, const Config& cfg,
                              const std::string& what, double tol) {
  for (int l = 0; l + 1 < dev.num_levels(); ++l) {
    const bool two_stage = dev.params().level(l).interpolator ==
                               classical::Interpolator::kTwoStageD2 &&
                           l < dev.params().aggressive_levels;
    const CsrMatrix<T> A = dev.download_matrix(l);
    classical::ClassicalCoarsening<T> host(classical::classical_params(cfg, "amg", l));
    TransferOperators<T> ops;
    host.build(A, ops);
    const std::vector<int8_t> cf = dev.download_splitting(l);
    ASSERT_EQ(cf, host.splitting()) << what << " level " << l;
    const CsrMatrix<T> P = dev.download_prolongation(l);
    ASSERT_EQ(P.ncols, ops.P.ncols) << what << " level " << l;
    EXPECT_EQ(vec(P.row_ptr), vec(ops.P.row_ptr)) << what << " level " << l;
    EXPECT_EQ(vec(P.col), vec(ops.P.col)) << what << " level " << l;
    if (two_stage) {
      EXPECT_LE(matrix_difference(ops.P, P), tol) << what << " level " << l;
    } else {
      EXPECT_EQ(vec(P.val), vec(ops.P.val)) << what << " level " << l;
    }
  }
}

template <class T>
void check_against_host(double tol) {
  for (int kind = 0; kind < 3; ++kind) {
    const CsrMatrix<T> A = problem<T>(kind);
    const DeviceMatrix<T> dA(A);
    for (const char* variant : kVariants) {
      const std::string what = "problem " + std::to_string(kind) + " " + variant;
      SolverContext ctx;
      ctx.config = Config::parse(config(variant));
      DeviceClassicalSetup<T> dev(DeviceClassicalParams::from_config(ctx.config, "amg"));
      dev.setup(dA.view());
      ASSERT_GE(dev.num_levels(), 2) << what << ": the problem must be coarsened";
      expect_levels_match_host(dev, ctx.config, what, tol);

      // The host's whole hierarchy: the levels it keeps, and the first
      // coarse matrix (built from the same P) to rounding.
      AmgSolver<T> amg(ctx, "amg");
      amg.setup(std::make_shared<CsrMatrix<T>>(A));
      EXPECT_EQ(dev.num_levels(), amg.num_levels()) << what;
      EXPECT_LE(matrix_difference(amg.level_matrix(1), dev.download_matrix(1)), tol) << what;
      std::printf("  %s: %d levels, rows", what.c_str(), dev.num_levels());
      for (int l = 0; l < dev.num_levels(); ++l) std::printf(" %d", dev.matrix(l).rows);
      std::printf("\n");
    }
  }
}

TEST(DeviceClassical, SameLevelsAsHostFloat64) {
  REQUIRE_GPU();
  check_against_host<double>(1e-13);
}

TEST(DeviceClassical, SameLevelsAsHostFloat32) {
  REQUIRE_GPU();
  check_against_host<float>(1e-5);
}

// Two setups of one matrix give the same bits (deterministic kernels and
// SpGEMM), and the transposed hierarchy holds the exact transposes.
TEST(DeviceClassical, DeterministicAndTransposed) {
  REQUIRE_GPU();
  const CsrMatrix<double> A = problem<double>(1);
  const DeviceMatrix<double> dA(A);
  SolverContext ctx;
  ctx.config = Config::parse(config(kVariants[0]));
  const auto params = DeviceClassicalParams::from_config(ctx.config, "amg");
  DeviceClassicalSetup<double> one(params), two(params);
  one.setup(dA.view());
  two.setup(dA.view());
  ASSERT_EQ(one.num_levels(), two.num_levels());
  const auto t = one.make_transposed(dA.view());
  ASSERT_EQ(t->num_levels(), one.num_levels());
  for (int l = 0; l < one.num_levels(); ++l) {
    const CsrMatrix<double> a = one.download_matrix(l), b = two.download_matrix(l);
    EXPECT_EQ(vec(a.col), vec(b.col)) << "level " << l;
    EXPECT_EQ(vec(a.val), vec(b.val)) << "level " << l;
    const CsrMatrix<double> at = transpose(a), got = t->download_matrix(l);
    EXPECT_EQ(vec(got.row_ptr), vec(at.row_ptr)) << "level " << l;
    EXPECT_EQ(vec(got.col), vec(at.col)) << "level " << l;
    EXPECT_EQ(vec(got.val), vec(at.val)) << "level " << l;
  }
}

// What the device does not build is refused by name (the caller then sets up
// on the host); invalid values get the host's ConfigError.
TEST(DeviceClassical, UnsupportedAndInvalidParameters) {
  auto params = [](const std::string& keys, const std::string& selector = "PMIS") {
    SolverContext ctx;
    ctx.config = Config::parse(config(keys, selector));
    return DeviceClassicalParams::from_config(ctx.config, "amg");
  };
  // The message of what `keys` throws as E ("" if nothing).
  auto message = [&](auto tag, const std::string& keys, const std::string& selector = "PMIS") {
    try {
      params(keys, selector);
    } catch (const decltype(tag)& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NO_THROW(params(R"("interpolator": "D2")"));
  EXPECT_NO_THROW(params(R"("interpolator": "D2", "aggressive_levels": 1,
                            "aggressive_interpolator": "D2_TWO_STAGE")"));
  // MULTIPASS, the default aggressive interpolator, is set up on the host.
  EXPECT_EQ(message(NotSupported(""), R"("interpolator": "D2", "aggressive_levels": 1)"),
            "aggressive_interpolator MULTIPASS (scope 'amg') is not built on the GPU (D2 and "
            "D2_TWO_STAGE are)");
  EXPECT_EQ(message(NotSupported(""), R"("interpolator": "D2")", "HMIS"),
            "classical selector HMIS (scope 'amg') is not built on the GPU (PMIS is)");
  EXPECT_EQ(message(NotSupported(""), R"("interpolator": "MULTIPASS")"),
            "interpolator MULTIPASS (scope 'amg') is not built on the GPU (D1 and D2 are)");
  EXPECT_EQ(message(ConfigError(""), R"("interpolator": "D2", "strength_threshold": 1.5)"),
            "strength_threshold (scope 'amg') must lie in [0, 1], got 1.5; use e.g. 0.25 (2D) or "
            "0.5 (3D)");
  EXPECT_EQ(message(ConfigError(""), R"("interpolator": "D2", "coarsen_threshold": -1)"),
            "AMG (scope 'amg'): coarsen_threshold = -1 is invalid; use a positive ratio "
            "(1.0 stops when a level is not smaller)");
}

}  // namespace
}  // namespace jaxamg
