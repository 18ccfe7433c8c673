// Name checks shared by the config readers: parameter and solver names with
// spelling suggestions, and the definition of nested solver scopes.
#include <algorithm>
#include <cctype>
#include <climits>

#include "config/internal.h"
#include "core/error.h"

namespace jaxamg::config_internal {

namespace {

std::string lower(const std::string& s) {
  std::string r = s;
  for (char& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return r;
}

// Optimal-string-alignment distance: insertions, deletions, substitutions and
// swaps of adjacent characters each cost 1 (so 'max_itres' is 1 from
// 'max_iters').
int edit_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[n][m];
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) s += i + 1 == names.size() ? " or " : ", ";
    s += "'" + names[i] + "'";
  }
  return s;
}

const char* const kScopeKeys[] = {"solver", "preconditioner", "smoother", "coarse_solver",
                                  "cpr_first_stage_preconditioner",
                                  "cpr_second_stage_preconditioner"};

}  // namespace

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  if (word.empty()) return "";
  const std::string w = lower(word);
  // A typo budget that grows with the length of the word: short names must be
  // nearly exact to be suggested.
  const int budget = w.size() <= 4 ? 1 : w.size() <= 8 ? 2 : 3;
  int best = INT_MAX;
  std::vector<std::string> close;
  for (const std::string& c : candidates) {
    const int d = edit_distance(w, lower(c));
    // A suggestion must keep part of the word: 'X' is not a typo of 'V'.
    if (d > budget || d > best || d >= static_cast<int>(w.size())) continue;
    if (d < best) close.clear();
    best = d;
    close.push_back(c);
  }
  bool case_only = best == 0;
  if (close.empty() && w.size() >= 4) {
    // A fragment of a longer name ('relaxation' for 'relaxation_factor'), or
    // a longer word that begins with most of a name ('max_iterations' for
    // 'max_iters').
    for (const std::string& c : candidates) {
      const std::string lc = lower(c);
      size_t common = 0;
      while (common < lc.size() && common < w.size() && lc[common] == w[common]) ++common;
      if (lc.find(w) != std::string::npos || (common >= 5 && 4 * common >= 3 * lc.size())) {
        close.push_back(c);
      }
    }
    std::stable_sort(close.begin(), close.end(), [](const std::string& a, const std::string& b) {
      return a.size() < b.size();
    });
  }
  if (close.empty()) return "";
  if (close.size() > 3) close.resize(3);
  return " did you mean " + quoted_list(close) + (case_only ? " (names are case-sensitive)?" : "?");
}

const ParamSpec& require_param(const std::string& name, const std::string& scope) {
  if (const ParamSpec* spec = find_param(name)) return *spec;
  std::string hint;
  if (name == "smoother_weight" || name == "min_block_rows") {
    hint = " '" + name + "' is the version-1 name of '" +
           (name == "smoother_weight" ? "relaxation_factor" : "min_coarse_rows") +
           "'; use that name (legacy text without config_version=2 converts it).";
  } else {
    static const std::vector<std::string> names = [] {
      std::vector<std::string> v;
      for (const ParamSpec& p : all_params()) v.push_back(p.name);
      return v;
    }();
    hint = did_you_mean(name, names);
    if (hint.empty()) hint = " it is not an AmgX parameter (describe_parameters() lists them all)";
  }
  throw ConfigError("unknown parameter '" + name + "' (scope '" + scope + "');" + hint);
}

void check_solver_name(const std::string& key, const std::string& scope,
                       const std::string& solver) {
  const std::vector<std::string>& names = amgx_solver_names();
  if (std::find(names.begin(), names.end(), solver) != names.end()) {
    if (const char* advice = refused_amgx_solver(solver)) {
      throw ConfigError("solver '" + solver + "' for '" + key + "' (scope '" + scope +
                        "') is an AmgX solver that jaxamg does not implement: " + advice);
    }
    return;
  }
  std::string hint;
  if (solver == "JACOBI" || solver == "JACOBI_NO_CUSP") {
    hint = " '" + solver + "' is the version-1 name of 'BLOCK_JACOBI';";
  } else {
    hint = did_you_mean(solver, names);
  }
  std::string valid;
  for (const std::string& n : names) valid += (valid.empty() ? "" : ", ") + n;
  throw ConfigError("unknown solver '" + solver + "' for '" + key + "' (scope '" + scope + "');" +
                    hint + " valid AmgX solvers: " + valid);
}

bool opens_scope(const std::string& key) {
  for (const char* k : kScopeKeys) {
    if (key == k) return true;
  }
  return false;
}

std::string scope_opening_keys() {
  std::string s;
  for (const char* k : kScopeKeys) s += (s.empty() ? "" : ", ") + std::string(k);
  return s;
}

void define_solver_scope(Config& cfg, const std::string& scope, const std::string& key,
                         const std::string& solver, const std::string& new_scope,
                         bool allow_redefine) {
  const std::string where = "'" + key + "' (scope '" + scope + "')";
  if (!opens_scope(key)) {
    throw ConfigError(where + " cannot open a nested solver scope; only " + scope_opening_keys() +
                      " can");
  }
  if (new_scope.empty()) {
    throw ConfigError("the scope name for " + where + " is empty; give a non-empty name");
  }
  if (new_scope == "default") {
    throw ConfigError("'default' cannot be used as a new scope name (for " + where +
                      "); choose another name, or give the solver as a plain string to have it "
                      "read the default scope");
  }
  if (new_scope == scope) {
    throw ConfigError("the " + key + " of scope '" + scope + "' cannot read its parent's scope '" +
                      scope + "'; give it a scope name of its own");
  }
  check_solver_name(key, scope, solver);
  if (!allow_redefine) {
    for (const auto& [k, v] : cfg.values()) {
      if (v.kind == Config::Value::kSolver && v.scope == new_scope) {
        throw ConfigError("scope '" + new_scope + "' for " + where + " is already defined (by '" +
                          k.second + "' in scope '" + k.first +
                          "'; AmgX: new scope already defined); give each nested solver its own "
                          "scope name");
      }
    }
  }
  Config::Value v;
  v.kind = Config::Value::kSolver;
  v.s = solver;
  v.scope = new_scope;
  cfg.values()[{scope, key}] = v;
}

void throw_type_error(const ParamSpec& spec, const std::string& scope, const std::string& seen) {
  const std::string head = "parameter '" + std::string(spec.name) + "' (scope '" + scope + "') ";
  const bool seen_string = seen.rfind("the string", 0) == 0;
  switch (spec.type) {
    case ParamSpec::kInt:
      throw ConfigError(head + "takes an integer, got " + seen +
                        (seen_string ? "; write the number without quotes" : "; give a whole number"));
    case ParamSpec::kDouble:
      throw ConfigError(head + "takes a number, got " + seen +
                        (seen_string ? "; write the number without quotes" : ""));
    case ParamSpec::kString:
      throw ConfigError(head + "takes a string, got " + seen + "; give " +
                        (spec.allowed.empty() ? std::string("a quoted string")
                                              : "one of: " + join_allowed(spec)));
    case ParamSpec::kSolver:
      break;
  }
  throw ConfigError(head + "names a solver, got " + seen + "; give a solver name such as \"" +
                    spec.string_default + "\"" +
                    (opens_scope(spec.name) ? " or an object with a \"solver\" entry" : ""));
}

void throw_out_of_range(const ParamSpec& spec, const std::string& scope, const std::string& seen) {
  throw ConfigError("parameter '" + std::string(spec.name) + "' (scope '" + scope + "'): " + seen +
                    " does not fit a 32-bit integer; give a value in [" +
                    std::to_string(INT_MIN) + ", " + std::to_string(INT_MAX) + "]");
}

void set_integer(Config& cfg, const std::string& name, const std::string& scope, long long value) {
  const ParamSpec& spec = require_param(name, scope);
  if (spec.type == ParamSpec::kString || spec.type == ParamSpec::kSolver) {
    throw_type_error(spec, scope, "the number " + std::to_string(value));
  }
  if (spec.type == ParamSpec::kDouble) {
    cfg.set_double(name, scope, static_cast<double>(value));
    return;
  }
  if (spec.type == ParamSpec::kInt && (value < INT_MIN || value > INT_MAX)) {
    throw_out_of_range(spec, scope, std::to_string(value));
  }
  cfg.set_int(name, scope, static_cast<int>(value));
}

}  // namespace jaxamg::config_internal
