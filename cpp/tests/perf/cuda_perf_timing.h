// Wall-clock timing shared by the CUDA setup perf drivers: each run is
// bracketed by device synchronisations, the best of `runs` is reported.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>

#include "backend/cuda/cuda_check.h"

namespace jaxamg::perf {

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Milliseconds of the fastest of `runs` calls of f.
template <class F>
double best_ms(int runs, F&& f) {
  double best = 1e300;
  for (int r = 0; r < runs; ++r) {
    cuda::check(cudaDeviceSynchronize(), "sync");
    const double t0 = now();
    f();
    cuda::check(cudaDeviceSynchronize(), "sync");
    best = std::min(best, now() - t0);
  }
  return 1e3 * best;
}

}  // namespace jaxamg::perf
