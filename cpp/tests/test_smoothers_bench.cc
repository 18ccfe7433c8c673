// Timing of one sweep of each smoother on 3D Poisson 64^3 (262144 rows,
// 1.8M nonzeros). Disabled by default; run with
//   jaxamg_tests --gtest_also_run_disabled_tests --gtest_filter='*SmootherBench*'
// under OMP_NUM_THREADS=1 and 2.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <time.h>

#include <chrono>
#include <cstdio>

#include "test_smoothers_util.h"

namespace jaxamg {
namespace {

using testing::build_solver;
using testing::solver_json;

// Evicts the caches: in a V-cycle the other levels' work runs between two
// sweeps of one level, so a sweep streams its matrix from memory. (64^3
// fits in the last-level cache of many CPUs, which hot timings would show.)
void flush_caches() {
  static std::vector<char> junk(256 << 20);
  for (size_t i = 0; i < junk.size(); i += 64) junk[i] = static_cast<char>(junk[i] + 1);
}

// CPU seconds of the whole process (all threads): on a shared machine wall
// time also counts the time the process waited for a core.
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

template <class T>
void bench(const char* type) {
  auto A = std::make_shared<CsrMatrix<T>>(testing::poisson3d<T>(64));
  const int n = A->nrows;
  const auto b = testing::random_vector<T>(n, 1);
  const char* configs[][2] = {
      {"BLOCK_JACOBI", ""},
      {"JACOBI_L1", ""},
      {"GS", ""},
      {"MULTICOLOR_GS", ""},
      {"MULTICOLOR_GS", "\"symmetric_GS\": 1"},
      {"MULTICOLOR_DILU", ""},
      {"MULTICOLOR_ILU", ""},
      {"CHEBYSHEV", "\"chebyshev_polynomial_order\": 2, \"preconditioner\": {\"solver\": "
                    "\"JACOBI_L1\"}, \"chebyshev_lambda_estimate_mode\": 2"},
      {"CHEBYSHEV", "\"chebyshev_polynomial_order\": 3, \"preconditioner\": {\"solver\": "
                    "\"BLOCK_JACOBI\"}, \"chebyshev_lambda_estimate_mode\": 1"},
  };
  std::vector<T> r(n);
  double spmv = 1e9;
  for (int k = 0; k < 15; ++k) {
    flush_caches();
    const auto t0 = std::chrono::steady_clock::now();
    cpu::residual(*A, b.data(), b.data(), r.data());
    spmv = std::min(spmv,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("[%s, %d threads] residual b - A x: %.2f ms\n", type, omp_get_max_threads(),
              spmv * 1e3);
  for (const auto& c : configs) {
    const auto t0 = std::chrono::steady_clock::now();
    auto s = build_solver<T>(solver_json(c[0], c[1]), A);
    const double setup =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::vector<T> x(n, T(0));
    s->apply(b.data(), x.data(), true, 1);  // warm up
    // The fastest of 15 single cold-cache sweeps: the machine may be shared.
    double sweep = 1e9, cpu = 1e9;
    for (int rep = 0; rep < 15; ++rep) {
      flush_caches();
      const double c1 = cpu_seconds();
      const auto t1 = std::chrono::steady_clock::now();
      s->apply(b.data(), x.data(), false, 1);
      sweep = std::min(
          sweep, std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count());
      cpu = std::min(cpu, cpu_seconds() - c1);
    }
    std::printf("[%s, %d threads] %-16s %-28.28s setup %7.2f ms  sweep %7.2f ms wall, %7.2f ms cpu\n",
                type, omp_get_max_threads(), c[0], c[1], setup * 1e3, sweep * 1e3, cpu * 1e3);
  }
}

TEST(SmootherBench, DISABLED_OneSweepPoisson3d64) {
  bench<double>("double");
  bench<float>("float");
}

}  // namespace
}  // namespace jaxamg
