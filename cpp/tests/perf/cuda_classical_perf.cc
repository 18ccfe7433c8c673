// Times the classical AMG setup built on the device (device/setup)
// against the host setup of the same configuration, on 3D Poisson:
//   jaxamg_cuda_classical_perf [n ...]      (default: 128 256)
// Two configurations: PMIS + D2 (Pmax 4, theta 0.25), and the same with one
// aggressive level and two-stage interpolation. For each: the host setup
// (its coarsening and Galerkin phases), the device setup (best of 3, the
// device synchronised around each) and its phases from a synchronised run;
// the level sizes and whether the finest splitting is the host's.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "amg/amg_solver.h"
#include "amg/classical/classical_coarsening.h"
#include "device/setup/device_classical.h"
#include "device/setup/device_classical_setup.h"
#include "perf/cuda_perf_timing.h"
#include "problems.h"

using namespace jaxamg;
using perf::best_ms;
using perf::now;

namespace {

std::string config(const std::string& extra) {
  return R"({"config_version": 2, "solver": {"scope": "amg", "solver": "AMG",
  "max_iters": 1, "cycle": "V", "algorithm": "CLASSICAL", "selector": "PMIS",
  "strength_threshold": 0.25, "interpolator": "D2", "interp_max_elements": 4)" + extra + R"(,
  "presweeps": 1, "postsweeps": 1, "max_levels": 25, "coarse_solver": "DENSE_LU_SOLVER",
  "dense_lu_num_rows": 32, "smoother": {"scope": "l1", "solver": "JACOBI_L1"}}})";
}

// The finest level's steps one by one (best of 3 each), for the
// aggressive two-stage configuration.
void finest_level_steps(const cuda::DeviceCsrView<double>& A,
                        const cuda::DeviceClassicalParams& params) {
  const classical::ClassicalParams p = params.level(0);
  cuda::DeviceStrength S;
  const double strength = best_ms(3, [&] { S = cuda::device_strength(A, p.strength); });
  cuda::DeviceSplitting first, split;
  const double selection = best_ms(3, [&] {
    split = cuda::device_aggressive_pmis(A, S, p.seed, &first);
  });
  cuda::DeviceArray<Index> ptr, col;
  cuda::DeviceArray<double> val;
  const double p1 = best_ms(3, [&] {
    cuda::device_interpolation<double, double>(A, S, first, classical::Interpolator::kD2,
                                               p.truncation, ptr, col, val);
  });
  const double two_stage = best_ms(3, [&] {
    cuda::device_two_stage_interpolation(A, S, first, split, p.truncation, ptr, col, val);
  });
  std::printf("  finest level (ms): strength %.1f, aggressive PMIS %.1f, P1 (extended+i to the "
              "first-stage C points) %.1f, two-stage P in all %.1f\n",
              strength, selection, p1, two_stage);
}

void run(int n, const std::string& name, const std::string& extra) {
  const CsrMatrix<double> A = testing::poisson3d<double>(n);
  SolverContext ctx;
  ctx.config = Config::parse(config(extra));
  AmgSolver<double> host(ctx, "amg");
  const double t0 = now();
  host.setup(std::make_shared<CsrMatrix<double>>(A));
  const double host_setup = 1e3 * (now() - t0);
  const AmgSetupTimings hp = host.setup_timings();

  cuda::DeviceArray<Index> ptr, col;
  cuda::DeviceArray<double> val;
  ptr.assign(A.row_ptr);
  col.assign(A.col);
  val.assign(A.val);
  const cuda::DeviceCsrView<double> va{A.nrows, A.nnz(), ptr.data(), col.data(), val.data()};
  cuda::DeviceClassicalSetup<double> dev(
      cuda::DeviceClassicalParams::from_config(ctx.config, "amg"));
  dev.setup(va);  // warm-up: module load, allocator, cuSPARSE handle
  const double dev_setup = best_ms(3, [&] { dev.setup(va); });
  dev.set_timing(true);
  dev.setup(va);
  const cuda::DeviceClassicalTimings ph = dev.timings();
  dev.set_timing(false);

  const auto* c =
      dynamic_cast<const classical::ClassicalCoarsening<double>*>(host.levels()[0].coarsening.get());
  const bool same = c && dev.download_splitting(0) == c->splitting();
  std::printf("poisson3d n=%d %s: levels host=%d device=%d same_finest_splitting=%s\n", n,
              name.c_str(), host.num_levels(), dev.num_levels(), same ? "yes" : "NO");
  double nnz = 0;
  std::printf("  device level rows:");
  for (int l = 0; l < dev.num_levels(); ++l) {
    std::printf(" %d", dev.matrix(l).rows);
    nnz += dev.matrix(l).nnz;
  }
  std::printf("  (operator complexity %.2f)\n", nnz / A.nnz());
  std::printf("  host   setup %9.1f ms (coarsening %.1f, galerkin %.1f, smoothers+coarse %.1f)\n",
              host_setup, 1e3 * hp.coarsening, 1e3 * hp.galerkin, 1e3 * hp.smoothers);
  std::printf("  device setup %9.1f ms (synchronised phases: strength %.1f, selection %.1f, "
              "interpolation %.1f, galerkin %.1f)  speedup %.1fx\n",
              dev_setup, 1e3 * ph.strength, 1e3 * ph.selection, 1e3 * ph.interpolation,
              1e3 * ph.galerkin, host_setup / dev_setup);
  if (dev.params().aggressive_levels > 0) finest_level_steps(va, dev.params());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  return jaxamg::perf::run_sizes(argc, argv, [](int n) {
    run(n, "PMIS D2", "");
    run(n, "aggressive PMIS, D2_TWO_STAGE", R"(, "aggressive_levels": 1,
        "aggressive_interpolator": "D2_TWO_STAGE")");
  });
}
