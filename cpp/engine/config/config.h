// AmgX-compatible configuration: a registry of typed parameters with AmgX's
// code defaults, values stored per (scope, name), and solver-typed keys that
// open nested scopes. See docs/config.md and AmgX's amg_config.cu semantics:
//   * lookup is exact: (scope, name) if set, else the registered default —
//     no inheritance from a parent scope or from "default";
//   * a nested JSON object opens scope `scope` or "<parent>_sub_<key>";
//   * a solver given as a string lives in scope "default".
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace jaxamg {

// A solver named by a config key, and the scope it reads its parameters from.
struct SolverRef {
  std::string name;   // "PCG", "AMG", "BLOCK_JACOBI", ...
  std::string scope;  // "main", "default", "default_sub_solver", ...
};

class Config {
 public:
  Config();  // nothing set: every lookup gives the registered default

  // Parses AmgX JSON (tried first) or the legacy "name=value, scope:name=value,
  // name(new_scope)=SOLVER" text. Throws ConfigError naming the key, the value
  // and the valid choices.
  static Config parse(const std::string& text);
  static Config from_file(const std::string& path);
  // The legacy text form alone (config/legacy_parser.cc).
  static Config parse_legacy(const std::string& text);

  // Typed lookups. Throw ConfigError if `name` is not a registered parameter
  // or has another type.
  int get_int(const std::string& name, const std::string& scope) const;
  double get_double(const std::string& name, const std::string& scope) const;
  std::string get_string(const std::string& name, const std::string& scope) const;
  // The solver that a solver-typed key (solver, preconditioner, smoother,
  // coarse_solver, ...) names in `scope`, with the scope it reads from.
  SolverRef get_solver(const std::string& key, const std::string& scope) const;
  // The outermost solver: get_solver("solver", "default").
  SolverRef top_solver() const { return get_solver("solver", "default"); }

  bool is_set(const std::string& name, const std::string& scope) const;
  // Programmatic overrides (AmgX resets print flags of inner default-scope
  // solvers; the Python layer injects monitor_residual/store_res_history).
  void set_int(const std::string& name, const std::string& scope, int value);
  void set_double(const std::string& name, const std::string& scope, double value);
  void set_string(const std::string& name, const std::string& scope, const std::string& value);

  // Applies JSON or legacy text on top of this config, for per-solve
  // overrides (AmgX issue #116). In JSON, a nested object without "solver"
  // patches the solver that key already names: {"solver": {"tolerance": 1e-9}}
  // changes the top solver's scope. With "solver" it (re)defines that key's
  // solver, keeping the existing scope when the name is unchanged and no
  // "scope" is given. Scope names may be reused, as with
  // AMGX_config_add_parameters. Throws ConfigError as parse() does.
  void merge_patch(const std::string& json_or_legacy);

  // Deterministic text for cache keys: sorted "scope:name=value" entries.
  std::string canonical() const;
  // Parameters set in a scope where no solver of the resolved tree reads them
  // (e.g. relaxation_factor in an AMG scope whose smoother is a string).
  std::vector<std::string> unused_parameter_warnings() const;

  // Implementation detail, public for the parser files: a stored value.
  struct Value {
    enum Kind { kInt, kDouble, kString, kSolver } kind = kInt;
    int i = 0;
    double d = 0.0;
    std::string s;        // string value, or solver name for kSolver
    std::string scope;    // for kSolver: the scope the solver reads from
  };
  using Key = std::pair<std::string, std::string>;  // (scope, name)
  std::map<Key, Value>& values() { return values_; }
  const std::map<Key, Value>& values() const { return values_; }
  // Entries the readers accepted but ignored, as AmgX does (a JSON boolean,
  // null or array); reported by unused_parameter_warnings().
  std::vector<std::string>& reader_notes() { return notes_; }
  const std::vector<std::string>& reader_notes() const { return notes_; }

 private:
  std::map<Key, Value> values_;
  std::vector<std::string> notes_;
};

}  // namespace jaxamg
