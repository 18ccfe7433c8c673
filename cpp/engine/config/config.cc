// Typed access to a Config: lookups with AmgX's exact (scope, name) rule,
// validated setters, and the canonical text used in cache keys. The readers
// live in json_reader.cc and legacy_parser.cc.
#include "config/config.h"

#include <climits>
#include <cmath>
#include <sstream>

#include "config/internal.h"
#include "config/registry.h"
#include "core/error.h"
#include "core/format.h"

namespace jaxamg {

namespace {

using config_internal::require_param;
using config_internal::throw_type_error;

const char* type_name(ParamSpec::Type t) {
  switch (t) {
    case ParamSpec::kInt: return "an integer";
    case ParamSpec::kDouble: return "a number";
    case ParamSpec::kString: return "a string";
    case ParamSpec::kSolver: return "a solver name";
  }
  return "?";
}

// Lookup with the wrong accessor is a programming error in the caller, but it
// still says which accessor fits.
void check_type(const ParamSpec& spec, ParamSpec::Type wanted, const char* accessor) {
  if (spec.type == wanted) return;
  throw ConfigError(std::string(accessor) + ": parameter '" + spec.name + "' holds " +
                    type_name(spec.type) + ", not " + type_name(wanted) + "; use " +
                    (spec.type == ParamSpec::kInt      ? "get_int"
                     : spec.type == ParamSpec::kDouble ? "get_double"
                     : spec.type == ParamSpec::kString ? "get_string"
                                                       : "get_solver"));
}

void check_scope(const ParamSpec& spec, const std::string& scope) {
  if (scope == "default" || !default_scope_only(spec.name)) return;
  throw ConfigError("parameter '" + std::string(spec.name) + "' may only be set in the default " +
                    "(top-level) scope, found in scope '" + scope +
                    "'; move it to the outermost object of the config");
}

void check_allowed(const ParamSpec& spec, const std::string& scope, const std::string& value) {
  if (spec.allowed.empty()) return;
  for (const std::string& v : spec.allowed) {
    if (v == value) return;
  }
  throw ConfigError("parameter '" + std::string(spec.name) + "' (scope '" + scope +
                    "'): unknown value '" + value + "';" +
                    config_internal::did_you_mean(value, spec.allowed) +
                    " valid: " + join_allowed(spec));
}

}  // namespace

Config::Config() = default;

bool Config::is_set(const std::string& name, const std::string& scope) const {
  return values_.count({scope, name}) != 0;
}

int Config::get_int(const std::string& name, const std::string& scope) const {
  const ParamSpec& spec = require_param(name, scope);
  check_type(spec, ParamSpec::kInt, "get_int");
  auto it = values_.find({scope, name});
  return it == values_.end() ? spec.int_default : it->second.i;
}

double Config::get_double(const std::string& name, const std::string& scope) const {
  const ParamSpec& spec = require_param(name, scope);
  check_type(spec, ParamSpec::kDouble, "get_double");
  auto it = values_.find({scope, name});
  return it == values_.end() ? spec.double_default : it->second.d;
}

std::string Config::get_string(const std::string& name, const std::string& scope) const {
  const ParamSpec& spec = require_param(name, scope);
  check_type(spec, ParamSpec::kString, "get_string");
  auto it = values_.find({scope, name});
  return it == values_.end() ? std::string(spec.string_default) : it->second.s;
}

SolverRef Config::get_solver(const std::string& key, const std::string& scope) const {
  const ParamSpec& spec = require_param(key, scope);
  check_type(spec, ParamSpec::kSolver, "get_solver");
  auto it = values_.find({scope, key});
  // An unset key names the registered default, which, like any solver given
  // as a plain name, reads the default scope.
  if (it == values_.end()) return {spec.string_default, "default"};
  return {it->second.s, it->second.kind == Value::kSolver ? it->second.scope : "default"};
}

void Config::set_int(const std::string& name, const std::string& scope, int value) {
  const ParamSpec& spec = require_param(name, scope);
  if (spec.type == ParamSpec::kDouble) return set_double(name, scope, value);
  if (spec.type != ParamSpec::kInt) throw_type_error(spec, scope, "the number " + std::to_string(value));
  check_scope(spec, scope);
  Value v;
  v.kind = Value::kInt;
  v.i = value;
  values_[{scope, name}] = v;
}

void Config::set_double(const std::string& name, const std::string& scope, double value) {
  const ParamSpec& spec = require_param(name, scope);
  if (spec.type == ParamSpec::kString || spec.type == ParamSpec::kSolver) {
    throw_type_error(spec, scope, "the number " + format_number(value));
  }
  if (!std::isfinite(value)) {
    throw ConfigError("parameter '" + name + "' (scope '" + scope + "') got " +
                      format_number(value) + "; give a finite number");
  }
  if (spec.type == ParamSpec::kInt) {
    // AmgX accepts a JSON double for an integer parameter; one with a
    // fractional part would be truncated silently, so it is refused.
    if (value != std::floor(value)) throw_type_error(spec, scope, "the number " + format_number(value));
    if (value < INT_MIN || value > INT_MAX) {
      config_internal::throw_out_of_range(spec, scope, format_number(value));
    }
    return set_int(name, scope, static_cast<int>(value));
  }
  check_scope(spec, scope);
  Value v;
  v.kind = Value::kDouble;
  v.d = value;
  values_[{scope, name}] = v;
}

void Config::set_string(const std::string& name, const std::string& scope,
                        const std::string& value) {
  const ParamSpec& spec = require_param(name, scope);
  if (spec.type == ParamSpec::kInt || spec.type == ParamSpec::kDouble) {
    throw_type_error(spec, scope, "the string \"" + value + "\"");
  }
  check_scope(spec, scope);
  // eig_solver names an eigensolver, which is checked only when one is built.
  if (spec.type == ParamSpec::kSolver && name != "eig_solver") {
    config_internal::check_solver_name(name, scope, value);
  }
  check_allowed(spec, scope, value);
  Value v;
  v.kind = spec.type == ParamSpec::kSolver ? Value::kSolver : Value::kString;
  v.s = value;
  v.scope = "default";  // a solver given by name reads the default scope
  values_[{scope, name}] = v;
}

std::string Config::canonical() const {
  std::ostringstream os;
  os.precision(17);
  for (const auto& [key, v] : values_) {
    os << key.first << ':' << key.second << '=';
    switch (v.kind) {
      case Value::kInt: os << v.i; break;
      case Value::kDouble: os << v.d; break;
      case Value::kString: os << v.s; break;
      case Value::kSolver: os << v.s << '(' << v.scope << ')'; break;
    }
    os << ';';
  }
  return os.str();
}

}  // namespace jaxamg
