// Reads the classical-AMG parameters of an AMG scope (AmgX names and
// defaults) and builds the coarsening of one level.
#include <algorithm>
#include <sstream>

#include "amg/classical/classical_coarsening.h"
#include "amg/coarsening.h"
#include "core/error.h"

namespace jaxamg {

namespace {

using classical::ClassicalParams;
using classical::Interpolator;
using classical::Selector;
using classical::StrengthKind;

const char* kValidSelectors = "PMIS, HMIS, AGGRESSIVE_PMIS or AGGRESSIVE_HMIS";

bool is_aggregation_selector(const std::string& s) {
  static const char* names[] = {"SIZE_2", "SIZE_4", "SIZE_8", "MULTI_PAIRWISE", "GEO",
                                "PARALLEL_GREEDY_SELECTOR"};
  return std::find(std::begin(names), std::end(names), s) != std::end(names);
}

Selector parse_selector(const std::string& name, const std::string& key, const std::string& scope) {
  if (name == "PMIS") return Selector::kPmis;
  if (name == "HMIS") return Selector::kHmis;
  if (name == "AGGRESSIVE_PMIS") return Selector::kAggressivePmis;
  if (name == "AGGRESSIVE_HMIS") return Selector::kAggressiveHmis;
  std::ostringstream os;
  if (is_aggregation_selector(name)) {
    // AmgX fails the same way: the classical selector factory does not know
    // the aggregation selectors.
    os << "SelectorFactory '" << name << "' has not been registered: " << key << " '" << name
       << "' (scope '" << scope << "') is an aggregation selector but algorithm is CLASSICAL; use "
       << kValidSelectors << ", or set algorithm to AGGREGATION";
    throw ConfigError(os.str());
  }
  if (name == "CR") {
    // AmgX's compatible-relaxation selector runs only on its device, scalar
    // systems; PMIS is the independent-set selector closest to its result.
    os << key << " 'CR' (scope '" << scope
       << "'), AmgX's compatible-relaxation selector, is not implemented; use PMIS (the "
          "nearest), or one of "
       << kValidSelectors;
    throw ConfigError(os.str());
  }
  os << key << " '" << name << "' (scope '" << scope
     << "') is not implemented for algorithm CLASSICAL; use " << kValidSelectors;
  throw NotSupported(os.str());
}

Interpolator parse_interpolator(const std::string& name, const std::string& key,
                                const std::string& scope) {
  if (name == "D1") return Interpolator::kD1;
  if (name == "D2") return Interpolator::kD2;
  if (name == "MULTIPASS") return Interpolator::kMultipass;
  if (name == "D2_TWO_STAGE") return Interpolator::kTwoStageD2;
  std::ostringstream os;
  os << "InterpolatorFactory '" << name << "' has not been registered: " << key << " '" << name
     << "' (scope '" << scope
     << "') is not a classical interpolator; use D1, D2, MULTIPASS or D2_TWO_STAGE";
  throw ConfigError(os.str());
}

}  // namespace

namespace classical {

ClassicalParams classical_params(const Config& cfg, const std::string& scope, int level) {
  ClassicalParams p;
  const int aggressive_levels = cfg.get_int("aggressive_levels", scope);
  const std::string selector = cfg.get_string("selector", scope);
  if (level < aggressive_levels) {
    std::string agg = cfg.get_string("aggressive_selector", scope);
    if (agg == "DEFAULT") {
      // DEFAULT: the aggressive form of the level selector.
      if (selector == "PMIS" || selector == "AGGRESSIVE_PMIS") {
        agg = "AGGRESSIVE_PMIS";
      } else if (selector == "HMIS" || selector == "AGGRESSIVE_HMIS") {
        agg = "AGGRESSIVE_HMIS";
      } else {
        parse_selector(selector, "selector", scope);  // throws for the others
        agg = "AGGRESSIVE_PMIS";
      }
    }
    p.selector = parse_selector(agg, "aggressive_selector", scope);
    p.interpolator = parse_interpolator(cfg.get_string("aggressive_interpolator", scope),
                                        "aggressive_interpolator", scope);
  } else {
    p.selector = parse_selector(selector, "selector", scope);
    p.interpolator = parse_interpolator(cfg.get_string("interpolator", scope), "interpolator", scope);
  }

  const std::string strength = cfg.get_string("strength", scope);
  if (strength == "AHAT") {
    p.strength.kind = StrengthKind::kAhat;
  } else if (strength == "ALL") {
    p.strength.kind = StrengthKind::kAll;
  } else {
    throw NotSupported("strength '" + strength + "' (scope '" + scope +
                       "') is not implemented; use AHAT or ALL");
  }
  p.strength.theta = cfg.get_double("strength_threshold", scope);
  if (!(p.strength.theta >= 0.0 && p.strength.theta <= 1.0)) {
    std::ostringstream os;
    os << "strength_threshold (scope '" << scope << "') must lie in [0, 1], got "
       << p.strength.theta << "; use e.g. 0.25 (2D) or 0.5 (3D)";
    throw ConfigError(os.str());
  }
  p.strength.max_row_sum = cfg.get_double("max_row_sum", scope);
  if (!(p.strength.max_row_sum > 0.0)) {
    std::ostringstream os;
    os << "max_row_sum (scope '" << scope << "') must be positive, got "
       << p.strength.max_row_sum << "; use a value in (0, 1) (e.g. 0.9) to enable the test or "
       << "1.1 to disable it";
    throw ConfigError(os.str());
  }
  p.truncation.factor = cfg.get_double("interp_truncation_factor", scope);
  p.truncation.max_elements = cfg.get_int("interp_max_elements", scope);
  // Different levels get different tie-breaking streams.
  p.seed = 0x5eedull + static_cast<uint64_t>(level) * 0x10001ull;
  return p;
}

}  // namespace classical

template <class T>
std::unique_ptr<Coarsening<T>> make_classical_coarsening(const Config& cfg,
                                                         const std::string& scope, int level) {
  return std::make_unique<classical::ClassicalCoarsening<T>>(
      classical::classical_params(cfg, scope, level));
}

template std::unique_ptr<Coarsening<float>> make_classical_coarsening(const Config&,
                                                                      const std::string&, int);
template std::unique_ptr<Coarsening<double>> make_classical_coarsening(const Config&,
                                                                       const std::string&, int);

}  // namespace jaxamg
