// Shared by the device hierarchies (DeviceAggregationSetup,
// DeviceClassicalSetup): AmgSolver::build_levels' rules for when a level is
// the coarsest and when a coarse level is kept, read from an AMG scope as
// the host reads them; the phase clock of their timed setups; a device copy
// of an array.
#pragma once
#include <string>

#include "backend/cuda/device_array.h"
#include "config/config.h"
#include "core/types.h"

namespace jaxamg::cuda {

struct LevelRules {
  int max_levels = 100;
  Index min_rows = 2;  // min_coarse_rows, or dense_lu_num_rows under a dense LU coarse solver
  double coarsen_threshold = 1.0;

  // Throws ConfigError for values AmgSolver rejects.
  static LevelRules from_config(const Config& cfg, const std::string& scope);

  // Level l of n rows is not coarsened.
  bool coarsest(int l, Index n) const { return l + 1 >= max_levels || n <= min_rows; }
  // A coarse level of nc rows below one of n rows is kept: smaller, not
  // above coarsen_threshold times n, at least min_rows rows.
  bool keeps(Index n, Index nc) const {
    return nc > 0 && nc < n && nc <= coarsen_threshold * n && nc >= min_rows;
  }
};

double now_seconds();

// Wall-clock phases of a setup: with timing on, lap() synchronises the
// device and adds the seconds since the last lap to `phase`.
struct PhaseClock {
  bool on = false;
  double last = 0;
  // Starts the clock; returns the start time.
  double start() { return last = now_seconds(); }
  void lap(double& phase);
};

// to = a device copy of from (default stream).
template <class X>
void copy_device_array(const DeviceArray<X>& from, DeviceArray<X>& to) {
  to.resize(from.size());
  if (from.size() > 0) {
    check(cudaMemcpyAsync(to.data(), from.data(), from.size() * sizeof(X),
                          cudaMemcpyDeviceToDevice),
          "cudaMemcpyAsync (hierarchy copy)");
  }
}

}  // namespace jaxamg::cuda
