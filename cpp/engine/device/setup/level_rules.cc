#include "device/setup/level_rules.h"

#include <chrono>

#include "core/error.h"
#include "core/format.h"

namespace jaxamg::cuda {

LevelRules LevelRules::from_config(const Config& cfg, const std::string& scope) {
  LevelRules r;
  r.max_levels = cfg.get_int("max_levels", scope);
  const bool dense_lu = cfg.get_solver("coarse_solver", scope).name == "DENSE_LU_SOLVER";
  r.min_rows = dense_lu ? cfg.get_int("dense_lu_num_rows", scope)
                        : cfg.get_int("min_coarse_rows", scope);
  r.coarsen_threshold = cfg.get_double("coarsen_threshold", scope);
  // AmgSolver's checks of the same parameters.
  if (r.max_levels < 1) {
    throw ConfigError("AMG (scope '" + scope + "'): max_levels = " + std::to_string(r.max_levels) +
                      " is invalid; use 1 or more levels");
  }
  if (r.min_rows < 0) {
    throw ConfigError("AMG (scope '" + scope + "'): " +
                      (dense_lu ? "dense_lu_num_rows" : "min_coarse_rows") + " = " +
                      std::to_string(r.min_rows) + " is invalid; use 0 or more rows");
  }
  if (!(r.coarsen_threshold > 0)) {
    throw ConfigError("AMG (scope '" + scope + "'): coarsen_threshold = " +
                      format_number(r.coarsen_threshold) +
                      " is invalid; use a positive ratio (1.0 stops when a level is not smaller)");
  }
  return r;
}

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

void PhaseClock::lap(double& phase) {
  if (!on) return;
  check(cudaDeviceSynchronize(), "device setup (timing)");
  const double t = now_seconds();
  phase += t - last;
  last = t;
}

}  // namespace jaxamg::cuda
