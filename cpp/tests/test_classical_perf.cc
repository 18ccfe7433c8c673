// Timings of classical coarsening on the finest level of 3D Poisson
// (disabled by default: run with --gtest_also_run_disabled_tests
// --gtest_filter='*ClassicalPerf*'; sizes from JAXAMG_PERF_SIZES, e.g. "64,100").
#include <gtest/gtest.h>
#include <omp.h>

#include <cstdlib>
#include <ctime>
#include <sstream>

#include "amg/classical/classical_coarsening.h"
#include "problems.h"

namespace jaxamg {
namespace {

using namespace classical;

TEST(ClassicalPerf, DISABLED_Poisson3dFinestLevel) {
  std::vector<int> sizes{64, 100};
  if (const char* env = std::getenv("JAXAMG_PERF_SIZES")) {
    sizes.clear();
    std::stringstream ss(env);
    for (std::string s; std::getline(ss, s, ',');) sizes.push_back(std::stoi(s));
  }
  const int saved = omp_get_max_threads();
  for (int n : sizes) {
    const auto A = testing::poisson3d<double>(n);
    for (int threads : {1, 2}) {
      for (Selector sel : {Selector::kPmis, Selector::kHmis}) {
        omp_set_num_threads(threads);
        ClassicalParams p;
        p.selector = sel;
        p.interpolator = Interpolator::kD2;
        p.truncation.max_elements = 4;
        ClassicalCoarsening<double> c(p);
        TransferOperators<double> ops;
        ClassicalTimings best{1e9, 1e9, 1e9, 1e9};
        double best_rebuild = 1e9, best_cpu = 1e9;
        for (int rep = 0; rep < 3; ++rep) {
          // Process CPU time as well: on a loaded machine it is the steadier
          // measure of the work done.
          const std::clock_t c0 = std::clock();
          c.build(A, ops);
          best_cpu = std::min(best_cpu, double(std::clock() - c0) / CLOCKS_PER_SEC);
          const auto& t = c.timings();
          best.strength = std::min(best.strength, t.strength);
          best.selection = std::min(best.selection, t.selection);
          best.interpolation = std::min(best.interpolation, t.interpolation);
          best.transpose = std::min(best.transpose, t.transpose);
          const double r0 = omp_get_wtime();
          c.rebuild(A, ops);
          best_rebuild = std::min(best_rebuild, omp_get_wtime() - r0);
        }
        std::printf(
            "%d^3 %s D2(4) threads %d: strength %.3f  select %.3f  interp %.3f  transpose %.3f  "
            "total %.3f s (cpu %.3f s) | rebuild %.3f s | coarse %d (%.3f) P nnz/row %.2f\n",
            n, sel == Selector::kPmis ? "PMIS" : "HMIS", threads, best.strength, best.selection,
            best.interpolation, best.transpose,
            best.strength + best.selection + best.interpolation + best.transpose, best_cpu,
            best_rebuild,
            c.num_coarse(), double(c.num_coarse()) / A.nrows, double(ops.P.nnz()) / A.nrows);
      }
    }
  }
  omp_set_num_threads(saved);
}

}  // namespace
}  // namespace jaxamg
