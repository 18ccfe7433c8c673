// Reads the AGGREGATION parameters of an AMG scope and validates them before
// any setup work, so a bad config fails with the parameter's name.
#include <cmath>
#include <memory>
#include <string>

#include "amg/aggregation/aggregation_coarsening.h"
#include "amg/aggregation/near_nullspace_aggregation.h"
#include "amg/aggregation/smoothed_aggregation.h"
#include "amg/coarsening.h"
#include "core/error.h"
#include "core/format.h"

namespace jaxamg {

namespace {

using aggregation::AggregationOptions;
using aggregation::SelectorKind;

std::string where(const std::string& scope) { return " (scope '" + scope + "')"; }

SelectorKind parse_selector(const std::string& s, const std::string& scope) {
  if (s == "SIZE_2") return SelectorKind::kSize2;
  if (s == "SIZE_4") return SelectorKind::kSize4;
  if (s == "SIZE_8") return SelectorKind::kSize8;
  if (s == "MULTI_PAIRWISE") return SelectorKind::kMultiPairwise;
  if (s == "DUMMY") return SelectorKind::kDummy;
  if (s == "GEO" || s == "PARALLEL_GREEDY_SELECTOR") {
    throw NotSupported("selector '" + s + "'" + where(scope) +
                       " is an AmgX aggregation selector this engine does not implement; use "
                       "SIZE_2, SIZE_4, SIZE_8 or MULTI_PAIRWISE");
  }
  // PMIS (the registry default), HMIS, AGGRESSIVE_*, CR, DEFAULT: AmgX has no
  // aggregation selector of that name and fails with "SelectorFactory 'PMIS'
  // has not been registered".
  throw ConfigError("selector '" + s + "'" + where(scope) +
                    " is not an aggregation selector (AmgX: SelectorFactory '" + s +
                    "' has not been registered); algorithm AGGREGATION needs selector SIZE_2, "
                    "SIZE_4, SIZE_8 or MULTI_PAIRWISE, or use algorithm CLASSICAL for '" + s +
                    "'");
}

int int_in(const Config& cfg, const std::string& name, const std::string& scope, int lo, int hi,
           const std::string& fix) {
  const int v = cfg.get_int(name, scope);
  if (v < lo || v > hi) {
    throw ConfigError(name + " = " + std::to_string(v) + where(scope) + " is out of range; " + fix);
  }
  return v;
}

// Matching variants AmgX offers that change which pairs form; running the
// plain handshake instead would silently give another hierarchy.
void reject_unimplemented(const Config& cfg, const std::string& scope) {
  for (const char* name : {"filter_weights", "notay_weights", "modified_handshake",
                           "serial_matching"}) {
    const int v = cfg.get_int(name, scope);
    if (v != 0) {
      throw NotSupported(std::string(name) + " = " + std::to_string(v) + where(scope) +
                         " is not implemented by this engine's aggregation; remove it or set 0");
    }
  }
}

// Smoothed aggregation's strength threshold on level 0, halved per level
// (AMGCL's defaults).
constexpr double kSmoothedStrength = 0.08;

const char* const kSmoothedFix =
    "use 2 for smoothed aggregation fitted to near-null-space vectors, 1 to smooth the "
    "aggregation prolongation with one damped Jacobi step, 0 for AmgX's piecewise-constant P";

// selector x_STANDARD: standard aggregation for near-null-space smoothed
// aggregation (x_smoothed_aggregation 2 only).
template <class T>
std::unique_ptr<Coarsening<T>> make_standard(const Config& cfg, const std::string& scope) {
  if (int_in(cfg, "x_smoothed_aggregation", scope, 0, 2, kSmoothedFix) != 2) {
    throw ConfigError("selector 'x_STANDARD'" + where(scope) +
                      " builds smoothed aggregation from near-null-space vectors; set "
                      "x_smoothed_aggregation to 2 in this scope, or use SIZE_2, SIZE_4, SIZE_8 "
                      "or MULTI_PAIRWISE");
  }
  const double theta = cfg.get_double("x_sa_strength_threshold", scope);
  if (!(theta >= 0.0 && theta < 1.0)) {
    throw ConfigError("x_sa_strength_threshold = " + format_number(theta) + where(scope) +
                      " is out of range; use a threshold in [0, 1) (default 0)");
  }
  aggregation::NearNullspaceOptions nns;
  nns.standard = true;
  nns.strength_threshold = theta;
  return std::make_unique<aggregation::NearNullspaceAggregation<T>>(nns);
}

template <class T>
std::unique_ptr<Coarsening<T>> finish(const Config& cfg, const std::string& scope, int level,
                                      const AggregationOptions& opt) {
  const int smoothed = int_in(cfg, "x_smoothed_aggregation", scope, 0, 2, kSmoothedFix);
  if (smoothed == 2) {
    aggregation::NearNullspaceOptions nns;
    nns.standard = false;
    nns.pairwise = opt;
    return std::make_unique<aggregation::NearNullspaceAggregation<T>>(nns);
  }
  if (smoothed == 1) {
    return std::make_unique<aggregation::SmoothedAggregationCoarsening<T>>(
        opt, kSmoothedStrength * std::ldexp(1.0, -level));
  }
  return std::make_unique<aggregation::AggregationCoarsening<T>>(opt);
}

}  // namespace

template <class T>
std::unique_ptr<Coarsening<T>> make_aggregation_coarsening(const Config& cfg,
                                                           const std::string& scope,
                                                           int level) {
  const std::string selector = cfg.get_string("selector", scope);
  if (selector == "x_STANDARD") return make_standard<T>(cfg, scope);
  AggregationOptions opt;
  opt.selector = parse_selector(selector, scope);
  switch (opt.selector) {
    case SelectorKind::kSize2: opt.passes = 1; break;
    case SelectorKind::kSize4: opt.passes = 2; break;
    case SelectorKind::kSize8: opt.passes = 3; break;
    case SelectorKind::kMultiPairwise:
      opt.passes = int_in(cfg, "aggregation_passes", scope, 1, 30,
                          "MULTI_PAIRWISE needs 1 or more pairwise passes (AmgX default 3)");
      break;
    case SelectorKind::kDummy:
      opt.dummy_size = int_in(cfg, "aggregate_size", scope, 1, 1 << 30,
                              "DUMMY needs aggregate_size >= 1 (AmgX default 2)");
      return finish<T>(cfg, scope, level, opt);
  }
  reject_unimplemented(cfg, scope);
  opt.weight_formula = int_in(cfg, "weight_formula", scope, 0, 1,
                              "use 0 (|a_ij| scaled by the larger diagonal) or 1 (-a_ij/a_ii)");
  opt.matching.max_iterations =
      int_in(cfg, "max_matching_iterations", scope, 1, 1 << 20,
             "use 1 or more matching rounds (AmgX default 15)");
  opt.matching.handshaking_phases = int_in(cfg, "handshaking_phases", scope, 1, 2,
                                           "use 1 or 2 handshakes per matching round");
  opt.matching.merge_singletons =
      int_in(cfg, "merge_singletons", scope, 0, 1,
             "use 1 to merge unmatched nodes into a neighbouring aggregate, 0 to keep them") == 1;
  const double pct = cfg.get_double("max_unassigned_percentage", scope);
  if (!(pct >= 0.0 && pct <= 1.0)) {
    throw ConfigError("max_unassigned_percentage = " + std::to_string(pct) + where(scope) +
                      " is out of range; it is a fraction in [0, 1] (AmgX default 0.05)");
  }
  opt.matching.max_unassigned_fraction = pct;
  return finish<T>(cfg, scope, level, opt);
}

template std::unique_ptr<Coarsening<float>> make_aggregation_coarsening(const Config&,
                                                                        const std::string&, int);
template std::unique_ptr<Coarsening<double>> make_aggregation_coarsening(const Config&,
                                                                         const std::string&, int);

}  // namespace jaxamg
