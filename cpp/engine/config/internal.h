// Declarations shared by the files of config/ only: name checks with
// spelling suggestions, scope definitions, and the legacy-text reader entry
// used by both Config::parse_legacy and Config::merge_patch.
#pragma once
#include <string>
#include <vector>

#include "config/config.h"
#include "config/registry.h"

namespace jaxamg::config_internal {

// " did you mean 'a'?" / " did you mean 'a' or 'b'?" naming the candidates
// closest to `word` (case-insensitive edit distance, or containing `word`);
// "" when nothing is close.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

// The registered parameter `name`; throws ConfigError naming the scope and
// the closest registered names if there is none.
const ParamSpec& require_param(const std::string& name, const std::string& scope);

// Throws ConfigError unless `solver` is an AmgX solver name (case-sensitive),
// listing the valid names. `key` and `scope` say where it was given.
void check_solver_name(const std::string& key, const std::string& scope,
                       const std::string& solver);

// Solver-typed keys that take a nested scope (an object in JSON,
// key(new_scope)=SOLVER in legacy text).
bool opens_scope(const std::string& key);
std::string scope_opening_keys();  // "solver, preconditioner, ..." for messages

// Records (scope, key) -> SOLVER reading `new_scope`. Throws ConfigError if
// `new_scope` is "default" or empty, if `key` cannot open a scope, if the
// solver name is unknown, or (unless `allow_redefine`) if another solver
// already reads `new_scope`.
void define_solver_scope(Config& cfg, const std::string& scope, const std::string& key,
                         const std::string& solver, const std::string& new_scope,
                         bool allow_redefine);

// Throws ConfigError: parameter `spec` (in `scope`) got a value of the wrong
// type. `seen` describes it ("the string \"10\"", "the number 2.5").
[[noreturn]] void throw_type_error(const ParamSpec& spec, const std::string& scope,
                                   const std::string& seen);

// Throws ConfigError: integer parameter `spec` got `seen`, outside int range.
[[noreturn]] void throw_out_of_range(const ParamSpec& spec, const std::string& scope,
                                     const std::string& seen);

// Sets an integer given as a 64-bit value (JSON), rejecting values that do
// not fit an int; a double parameter receives it as a double.
void set_integer(Config& cfg, const std::string& name, const std::string& scope, long long value);

// Applies legacy text entries to `cfg` (config/legacy_parser.cc).
// `allow_redefine` permits re-using a scope name, as in a patch.
void apply_legacy_text(Config& cfg, const std::string& text, bool allow_redefine);

}  // namespace jaxamg::config_internal
