#include "config/config.h"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "config/registry.h"
#include "core/error.h"

namespace jaxamg {

namespace {

using json = nlohmann::json;

const ParamSpec& require_param(const std::string& name) {
  const ParamSpec* spec = find_param(name);
  if (!spec) {
    throw ConfigError("unknown parameter '" + name +
                      "' (AmgX: \"Variable '" + name + "' not registered\"); check its spelling "
                      "against the AmgX parameter list");
  }
  return *spec;
}

void check_allowed(const ParamSpec& spec, const std::string& scope, const std::string& value) {
  if (spec.allowed.empty()) return;
  for (const std::string& v : spec.allowed) {
    if (v == value) return;
  }
  throw ConfigError("parameter '" + std::string(spec.name) + "' (scope '" + scope +
                    "'): unknown value '" + value + "'; valid: " + join_allowed(spec));
}

const char* kSolverKeys[] = {"solver", "preconditioner", "smoother", "coarse_solver",
                             "cpr_first_stage_preconditioner", "cpr_second_stage_preconditioner"};

bool opens_scope(const std::string& key) {
  for (const char* k : kSolverKeys) {
    if (key == k) return true;
  }
  return false;
}

// Walks one JSON object whose parameters belong to `scope` (AmgX's
// import_json_object).
void import_object(Config& cfg, const json& obj, const std::string& scope, bool nested) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& key = it.key();
    const json& v = it.value();
    if (key == "config_version" || key == "scope") continue;
    if (nested && (key == "solver" || key == "eig_solver")) continue;  // consumed by the parent
    if (v.is_object()) {
      if (!opens_scope(key)) {
        throw ConfigError("parameter '" + key + "' (scope '" + scope +
                          "') cannot hold an object; only solver, preconditioner, smoother, "
                          "coarse_solver open a nested solver scope");
      }
      if (!v.contains("solver") || !v["solver"].is_string()) {
        throw ConfigError("the object given for '" + key + "' (scope '" + scope +
                          "') needs a string \"solver\" entry naming the solver");
      }
      const std::string new_scope =
          v.contains("scope") && v["scope"].is_string() ? v["scope"].get<std::string>()
                                                         : scope + "_sub_" + key;
      if (new_scope == "default") {
        throw ConfigError("'default' cannot be used as a new scope name (for '" + key + "')");
      }
      for (const auto& [k, val] : cfg.values()) {
        if (val.kind == Config::Value::kSolver && val.scope == new_scope) {
          throw ConfigError("scope '" + new_scope + "' is defined twice (new scope already "
                            "defined); give each nested solver its own \"scope\"");
        }
      }
      Config::Value sv;
      sv.kind = Config::Value::kSolver;
      sv.s = v["solver"].get<std::string>();
      sv.scope = new_scope;
      cfg.values()[{scope, key}] = sv;
      import_object(cfg, v, new_scope, true);
      continue;
    }
    if (v.is_boolean() || v.is_null() || v.is_array()) continue;  // AmgX ignores these
    const ParamSpec& spec = require_param(key);
    if (spec.type == ParamSpec::kSolver) {
      if (!v.is_string()) {
        throw ConfigError("parameter '" + key + "' (scope '" + scope +
                          "') names a solver: give a string or an object");
      }
      cfg.set_string(key, scope, v.get<std::string>());
    } else if (spec.type == ParamSpec::kString) {
      if (!v.is_string()) {
        throw ConfigError("parameter '" + key + "' (scope '" + scope + "') takes a string" +
                          (spec.allowed.empty() ? "" : " (one of " + join_allowed(spec) + ")"));
      }
      cfg.set_string(key, scope, v.get<std::string>());
    } else if (spec.type == ParamSpec::kInt) {
      if (!v.is_number()) {
        throw ConfigError("parameter '" + key + "' (scope '" + scope + "') takes an integer, got " +
                          v.dump());
      }
      cfg.set_int(key, scope, v.is_number_float() ? static_cast<int>(v.get<double>()) : v.get<int>());
    } else {
      if (!v.is_number()) {
        throw ConfigError("parameter '" + key + "' (scope '" + scope + "') takes a number, got " +
                          v.dump());
      }
      cfg.set_double(key, scope, v.get<double>());
    }
  }
}

}  // namespace

Config::Config() = default;

Config Config::parse(const std::string& text) {
  Config cfg;
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error&) {
    return parse_legacy(text);
  }
  if (!doc.is_object()) {
    throw ConfigError("a JSON config must be an object, got " + std::string(doc.type_name()));
  }
  import_object(cfg, doc, "default", false);
  return cfg;
}

Config Config::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError("cannot open config file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse(ss.str());
}

bool Config::is_set(const std::string& name, const std::string& scope) const {
  return values_.count({scope, name}) != 0;
}

int Config::get_int(const std::string& name, const std::string& scope) const {
  const ParamSpec& spec = require_param(name);
  if (spec.type != ParamSpec::kInt) throw ConfigError("parameter '" + name + "' is not an integer");
  auto it = values_.find({scope, name});
  return it == values_.end() ? spec.int_default : it->second.i;
}

double Config::get_double(const std::string& name, const std::string& scope) const {
  const ParamSpec& spec = require_param(name);
  if (spec.type != ParamSpec::kDouble) throw ConfigError("parameter '" + name + "' is not a number");
  auto it = values_.find({scope, name});
  return it == values_.end() ? spec.double_default : it->second.d;
}

std::string Config::get_string(const std::string& name, const std::string& scope) const {
  const ParamSpec& spec = require_param(name);
  if (spec.type != ParamSpec::kString) throw ConfigError("parameter '" + name + "' is not a string");
  auto it = values_.find({scope, name});
  return it == values_.end() ? std::string(spec.string_default) : it->second.s;
}

SolverRef Config::get_solver(const std::string& key, const std::string& scope) const {
  const ParamSpec& spec = require_param(key);
  if (spec.type != ParamSpec::kSolver) throw ConfigError("parameter '" + key + "' is not a solver");
  auto it = values_.find({scope, key});
  if (it == values_.end()) return {spec.string_default, "default"};
  return {it->second.s, it->second.kind == Value::kSolver ? it->second.scope : "default"};
}

void Config::set_int(const std::string& name, const std::string& scope, int value) {
  const ParamSpec& spec = require_param(name);
  if (spec.type != ParamSpec::kInt) {
    if (spec.type == ParamSpec::kDouble) return set_double(name, scope, value);
    throw ConfigError("parameter '" + name + "' (scope '" + scope + "') takes a " +
                      (spec.type == ParamSpec::kString ? "string" : "solver name") +
                      ", got the number " + std::to_string(value));
  }
  Value v;
  v.kind = Value::kInt;
  v.i = value;
  values_[{scope, name}] = v;
}

void Config::set_double(const std::string& name, const std::string& scope, double value) {
  const ParamSpec& spec = require_param(name);
  if (spec.type == ParamSpec::kInt) return set_int(name, scope, static_cast<int>(value));
  if (spec.type != ParamSpec::kDouble) {
    throw ConfigError("parameter '" + name + "' (scope '" + scope + "') takes a " +
                      (spec.type == ParamSpec::kString ? "string" : "solver name") +
                      ", got a number");
  }
  Value v;
  v.kind = Value::kDouble;
  v.d = value;
  values_[{scope, name}] = v;
}

void Config::set_string(const std::string& name, const std::string& scope,
                        const std::string& value) {
  const ParamSpec& spec = require_param(name);
  if (spec.type == ParamSpec::kInt || spec.type == ParamSpec::kDouble) {
    throw ConfigError("parameter '" + name + "' (scope '" + scope +
                      "') takes a number, got the string '" + value + "'");
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

std::vector<std::string> Config::unused_parameter_warnings() const { return {}; }

}  // namespace jaxamg
