// Wall-clock timing shared by the CUDA setup perf drivers: each run is
// bracketed by device synchronisations, the best of `runs` is reported.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

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

// A driver's main: run_size(n) for every grid size n on the command line
// (128 and 256 by default); nothing to time, and exit 0, without a GPU.
template <class RunSize>
int run_sizes(int argc, char** argv, RunSize&& run_size) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {128, 256};
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: nothing to time\n");
    return 0;
  }
  for (int n : sizes) run_size(n);
  return 0;
}

}  // namespace jaxamg::perf
