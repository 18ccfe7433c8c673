// Times the aggregation AMG setup built on the device (device/setup)
// against the host setup of the same configuration, on 3D Poisson:
//   jaxamg_cuda_aggregation_perf [n ...]      (default: 128 256)
// For each n^3 grid: host setup and host resetup (structure reuse on every
// level), device setup and device resetup (best of several runs, the device
// synchronised around each), and the DeviceAmg built from the device
// hierarchy (smoother data and the dense coarse LU). The host times include
// its smoother and coarse LU setups (printed apart); the device setup's
// counterpart of those is the DeviceAmg line. Checks that the
// finest level's aggregates and the level count agree with the host.
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "amg/aggregation/aggregation_coarsening.h"
#include "amg/amg_solver.h"
#include "device/device_amg.h"
#include "device/setup/device_aggregation_setup.h"
#include "perf/cuda_perf_timing.h"
#include "problems.h"

using namespace jaxamg;
using perf::best_ms;
using perf::now;

namespace {

const char* kConfig = R"({"config_version": 2, "solver": {"scope": "amg", "solver": "AMG",
  "max_iters": 1, "cycle": "V", "algorithm": "AGGREGATION", "selector": "SIZE_8",
  "weight_formula": 0, "presweeps": 1, "postsweeps": 1, "max_levels": 20,
  "structure_reuse_levels": -1, "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 64,
  "smoother": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 0.9}}})";

void run(int n) {
  const CsrMatrix<double> A = testing::poisson3d<double>(n);
  CsrMatrix<double> B = A;  // new values, same pattern
  for (std::size_t k = 0; k < B.val.size(); ++k) B.val[k] *= 1.0 + 1e-3 * static_cast<double>(k % 7);

  SolverContext ctx;
  ctx.config = Config::parse(kConfig);
  AmgSolver<double> host(ctx, "amg");
  double t0 = now();
  host.setup(std::make_shared<CsrMatrix<double>>(A));
  const double host_setup = 1e3 * (now() - t0);
  const AmgSetupTimings host_phases = host.setup_timings();
  t0 = now();
  host.setup(std::make_shared<CsrMatrix<double>>(B), true);
  const double host_resetup = 1e3 * (now() - t0);

  cuda::DeviceArray<Index> ptr, col;
  cuda::DeviceArray<double> val, val_b;
  ptr.assign(A.row_ptr);
  col.assign(A.col);
  val.assign(A.val);
  val_b.assign(B.val);
  const cuda::DeviceCsrView<double> va{A.nrows, A.nnz(), ptr.data(), col.data(), val.data()};
  const cuda::DeviceCsrView<double> vb{A.nrows, A.nnz(), ptr.data(), col.data(), val_b.data()};
  cuda::DeviceAggregationSetup<double> dev(
      cuda::DeviceAggregationParams::from_config(ctx.config, "amg"));
  dev.setup(va);  // warm-up: module load, allocator
  const double dev_setup = best_ms(3, [&] { dev.setup(va); });
  const double dev_resetup = best_ms(5, [&] { dev.resetup(vb); });
  // One more setup, synchronised after each phase to see where the time goes.
  dev.set_timing(true);
  dev.setup(va);
  const cuda::DeviceSetupTimings phases = dev.timings();
  dev.set_timing(false);

  cusparseHandle_t handle = nullptr;
  cuda::check(cusparseCreate(&handle), "cusparseCreate");
  double dev_amg = 0;
  {
    std::unique_ptr<cuda::DeviceAmg<double>> amg;
    dev_amg = best_ms(3, [&] {
      amg.reset();
      amg = std::make_unique<cuda::DeviceAmg<double>>(handle, dev, ctx, "amg");
    });
  }
  cusparseDestroy(handle);

  // The finest aggregates must be the host's (the host resetup kept them).
  dev.setup(va);
  const auto* c = dynamic_cast<const aggregation::AggregationCoarsening<double>*>(
      host.levels()[0].coarsening.get());
  const bool same = c && dev.download_aggregates(0) == c->aggregates().of &&
                    dev.num_levels() == host.num_levels();
  std::printf("poisson3d n=%d rows=%d nnz=%d levels host=%d device=%d same_aggregates=%s\n", n,
              A.nrows, A.nnz(), host.num_levels(), dev.num_levels(), same ? "yes" : "NO");
  std::printf("  host   setup %9.1f ms   resetup %9.1f ms\n", host_setup, host_resetup);
  std::printf("  device setup %9.1f ms   resetup %9.1f ms   DeviceAmg from it %7.1f ms\n",
              dev_setup, dev_resetup, dev_amg);
  std::printf("  device phases (synchronised run, ms): weights %.1f  matching %.1f  "
              "coarse graphs %.1f  galerkin+transfer %.1f  total %.1f\n",
              1e3 * phases.weights, 1e3 * phases.matching, 1e3 * phases.coarse_graphs,
              1e3 * phases.galerkin, 1e3 * phases.total);
  const AmgSetupTimings& hr = host.setup_timings();  // of the host resetup
  std::printf("  host phases (ms): setup: coarsening %.1f galerkin %.1f smoothers+coarse %.1f; "
              "resetup: coarsening %.1f galerkin %.1f smoothers+coarse %.1f\n",
              1e3 * host_phases.coarsening, 1e3 * host_phases.galerkin,
              1e3 * host_phases.smoothers, 1e3 * hr.coarsening, 1e3 * hr.galerkin,
              1e3 * hr.smoothers);
  std::printf("  speedup setup %.1fx  resetup %.1fx\n", host_setup / dev_setup,
              host_resetup / dev_resetup);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  return jaxamg::perf::run_sizes(argc, argv, [](int n) { run(n); });
}
