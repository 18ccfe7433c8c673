// The JSON reader (AmgX's AMG_Config::import_json_object), the entry points
// that try JSON first and fall back to legacy text, and the patch mode.
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.h"
#include "config/internal.h"
#include "core/error.h"

namespace jaxamg {

namespace {

using json = nlohmann::json;
using namespace config_internal;

// Text that starts like JSON is reported as broken JSON rather than handed
// to the legacy reader, whose complaint would be about '{'.
bool looks_like_json(const std::string& text) {
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    return c == '{' || c == '[';
  }
  return false;
}

// At most 40 characters of `v` as JSON text, for messages. dump() recurses
// once per nesting level, so a value nested deeper than a message needs
// shows as [...] or {...} ([[[[...]]]] a million deep would overflow the stack).
std::string preview(const json& v) {
  constexpr int kMaxDepth = 16;
  std::vector<std::pair<const json*, int>> todo{{&v, 0}};
  while (!todo.empty()) {
    const auto [node, depth] = todo.back();
    todo.pop_back();
    if (!node->is_structured()) continue;
    if (depth == kMaxDepth) {
      return std::string(v.is_array() ? "[...]" : "{...}") + " nested more than " +
             std::to_string(kMaxDepth) + " levels deep";
    }
    for (const json& child : *node) todo.emplace_back(&child, depth + 1);
  }
  return v.dump().substr(0, 40);
}

// Nested solver objects ({"preconditioner": {"solver": ..., "smoother":
// {...}}}) deeper than this are refused before the recursive walk below
// could overflow the stack.
constexpr int kMaxSolverNesting = 64;

// Reads `text` as one JSON object; returns false if it is not JSON at all.
bool read_json(const std::string& text, json& doc) {
  try {
    // nlohmann keeps the last of duplicate keys, which is AmgX's outcome
    // (its reader walks all of them and the last assignment stays).
    doc = json::parse(text);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number too large for a double
    // (1e999).
    if (looks_like_json(text)) {
      throw ConfigError(std::string("config is not valid JSON: ") + e.what() +
                        "; fix the JSON syntax (legacy name=value text does not start with '{')");
    }
    return false;
  }
  if (!doc.is_object()) {
    throw ConfigError("a JSON config must be an object {...}, got " +
                      std::string(doc.type_name()) + " " + preview(doc));
  }
  return true;
}

void store_value(Config& cfg, const std::string& scope, const std::string& key, const json& v) {
  if (v.is_boolean() || v.is_null() || v.is_array()) {
    // AmgX builds an error for these and never throws it; we keep the
    // behaviour and report it among the warnings.
    std::string note = "parameter '" + key + "' in scope '" + scope + "' is a JSON " +
                       v.type_name() + " (" + preview(v) +
                       ") and is ignored, as AmgX does; write " +
                       (v.is_boolean() ? "1 or 0" : "a number or a string");
    if (!find_param(key)) note += " (and '" + key + "' is not a registered parameter)";
    cfg.reader_notes().push_back(note);
    return;
  }
  if (v.is_string()) {
    cfg.set_string(key, scope, v.get<std::string>());
  } else if (v.is_number_unsigned()) {
    const auto u = v.get<unsigned long long>();
    if (u > static_cast<unsigned long long>(LLONG_MAX)) {
      throw ConfigError("parameter '" + key + "' (scope '" + scope + "'): " + v.dump() +
                        " is out of range; give a value that fits a 32-bit integer");
    }
    set_integer(cfg, key, scope, static_cast<long long>(u));
  } else if (v.is_number_integer()) {
    set_integer(cfg, key, scope, v.get<long long>());
  } else {
    cfg.set_double(key, scope, v.get<double>());
  }
}

void walk(Config& cfg, const json& obj, const std::string& scope, int depth, bool patch);

// `key` holds an object: a solver with its own scope, or (patch mode, no
// "solver" entry) new values for the solver `key` already names.
void open_child(Config& cfg, const std::string& scope, const std::string& key, const json& v,
                int depth, bool patch) {
  const std::string where = "'" + key + "' (scope '" + scope + "')";
  if (depth >= kMaxSolverNesting) {
    throw ConfigError("the object for " + where + " nests solvers more than " +
                      std::to_string(kMaxSolverNesting) + " levels deep; flatten the config");
  }
  if (!opens_scope(key)) {
    require_param(key, scope);  // an unknown name is the better message
    throw ConfigError("parameter " + where + " cannot hold an object; only " +
                      scope_opening_keys() + " open a nested solver scope");
  }
  const bool has_scope = v.contains("scope");
  if (has_scope && !v["scope"].is_string()) {
    throw ConfigError("\"scope\" in the object for " + where + " must be a string, got " +
                      preview(v["scope"]));
  }
  const std::string given_scope = has_scope ? v["scope"].get<std::string>() : "";
  const bool has_solver = v.contains("solver");
  if (has_solver && !v["solver"].is_string()) {
    throw ConfigError("\"solver\" in the object for " + where +
                      " must be a solver name string, got " + preview(v["solver"]));
  }
  std::string child_scope;
  if (!has_solver) {
    if (!patch) {
      throw ConfigError("the object for " + where + " has no \"solver\" entry; name the solver, "
                        "e.g. \"" + key + "\": {\"solver\": \"" +
                        find_param(key)->string_default + "\", ...}, or use "
                        "Config::merge_patch to change the solver already there");
    }
    const SolverRef ref = cfg.get_solver(key, scope);
    if (has_scope && given_scope != ref.scope) {
      throw ConfigError("patch: the " + key + " of scope '" + scope + "' (" + ref.name +
                        ") reads scope '" + ref.scope + "', not '" + given_scope +
                        "'; drop \"scope\", or add \"solver\" to define a new " + key);
    }
    child_scope = ref.scope;
  } else {
    const std::string name = v["solver"].get<std::string>();
    if (has_scope) {
      child_scope = given_scope;
    } else if (patch && cfg.is_set(key, scope) && cfg.get_solver(key, scope).name == name &&
               cfg.get_solver(key, scope).scope != "default") {
      child_scope = cfg.get_solver(key, scope).scope;  // same solver: patch it in place
    } else {
      child_scope = scope + "_sub_" + key;
    }
    define_solver_scope(cfg, scope, key, name, child_scope, patch);
  }
  walk(cfg, v, child_scope, depth + 1, patch);
}

// Walks one object whose values belong to `scope`.
// depth: 0 for the outermost object, else the number of enclosing solver objects.
void walk(Config& cfg, const json& obj, const std::string& scope, int depth, bool patch) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& key = it.key();
    if (key == "config_version" || key == "scope") continue;  // not parameters
    // Inside a nested object, "solver" is the type the parent already read.
    if (depth > 0 && (key == "solver" || key == "eig_solver")) continue;
    if (it.value().is_object()) {
      open_child(cfg, scope, key, it.value(), depth, patch);
    } else {
      store_value(cfg, scope, key, it.value());
    }
  }
}

}  // namespace

Config Config::parse(const std::string& text) {
  json doc;
  if (!read_json(text, doc)) return parse_legacy(text);
  Config cfg;
  walk(cfg, doc, "default", 0, false);
  return cfg;
}

Config Config::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    throw ConfigError("cannot open config file '" + path + "': " + std::strerror(errno) +
                      "; check the path");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  try {
    return parse(ss.str());
  } catch (const ConfigError& e) {
    throw ConfigError("config file '" + path + "': " + e.what());
  }
}

void Config::merge_patch(const std::string& json_or_legacy) {
  Config patched = *this;  // a failing patch leaves this config unchanged
  json doc;
  if (read_json(json_or_legacy, doc)) {
    walk(patched, doc, "default", 0, true);
  } else {
    config_internal::apply_legacy_text(patched, json_or_legacy, true);
  }
  *this = std::move(patched);
}

}  // namespace jaxamg
