// The cycle parameters of an AMG scope, read and checked once for the
// serial hierarchy (AmgSolver) and the distributed one (dist::DistAmg).
#include "amg/amg_level.h"
#include "core/error.h"
#include "core/format.h"

namespace jaxamg {

namespace {

CycleType parse_cycle(const std::string& s, const std::string& scope) {
  if (s == "V") return CycleType::kV;
  if (s == "W") return CycleType::kW;
  if (s == "F") return CycleType::kF;
  if (s == "CG") return CycleType::kCG;
  if (s == "CGF") return CycleType::kCGF;
  throw ConfigError("cycle: unknown value '" + s + "' (scope '" + scope +
                    "'); valid: V, W, F, CG, CGF");
}

}  // namespace

void require_amg_param(bool ok, const std::string& scope, const std::string& name, double value,
                       const std::string& fix) {
  if (ok) return;
  throw ConfigError("AMG (scope '" + scope + "'): " + name + " = " + format_number(value) +
                    " is invalid; " + fix);
}

CycleParams read_cycle_params(const Config& config, const std::string& s) {
  CycleParams c;
  c.type = parse_cycle(config.get_string("cycle", s), s);
  c.presweeps = config.get_int("presweeps", s);
  c.postsweeps = config.get_int("postsweeps", s);
  c.finest_sweeps = config.get_int("finest_sweeps", s);
  c.coarsest_sweeps = config.get_int("coarsest_sweeps", s);
  c.intensive_smoothing = config.get_int("intensive_smoothing", s) != 0;
  c.cycle_iters = config.get_int("cycle_iters", s);
  c.error_scaling = config.get_int("error_scaling", s);
  c.reuse_scale = config.get_int("reuse_scale", s);
  c.scaling_smoother_steps = config.get_int("scaling_smoother_steps", s);
  require_amg_param(c.presweeps >= 0, s, "presweeps", c.presweeps, "use 0 or more sweeps");
  require_amg_param(c.postsweeps >= 0, s, "postsweeps", c.postsweeps, "use 0 or more sweeps");
  require_amg_param(c.finest_sweeps >= -1, s, "finest_sweeps", c.finest_sweeps,
                    "use -1 (off) or 0 or more sweeps");
  require_amg_param(c.coarsest_sweeps >= 0, s, "coarsest_sweeps", c.coarsest_sweeps,
                    "use 0 or more sweeps");
  require_amg_param(c.cycle_iters >= 1, s, "cycle_iters", c.cycle_iters,
                    "use 1 or more CG steps per coarse level");
  require_amg_param(
      c.error_scaling == 0 || c.error_scaling == 2 || c.error_scaling == 3, s, "error_scaling",
      c.error_scaling,
      "use 0 (off), 2 (minimise the residual 2-norm) or 3 (minimise the A-norm of the error); 1 "
      "is deprecated in AmgX");
  require_amg_param(c.reuse_scale >= 0, s, "reuse_scale", c.reuse_scale, "use 0 or more cycles");
  require_amg_param(c.scaling_smoother_steps >= 0, s, "scaling_smoother_steps",
                    c.scaling_smoother_steps, "use 0 or more sweeps");
  return c;
}

}  // namespace jaxamg
