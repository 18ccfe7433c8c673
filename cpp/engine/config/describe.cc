// The registry as JSON text, the counterpart of AmgX's
// AMGX_write_parameters_description: for each parameter its type, default,
// allowed values, scope rules and readers.
#include <nlohmann/json.hpp>

#include "config/internal.h"
#include "config/registry.h"
#include "config/usage.h"

namespace jaxamg {

namespace {

using json = nlohmann::ordered_json;

const char* type_text(ParamSpec::Type t) {
  switch (t) {
    case ParamSpec::kInt: return "int";
    case ParamSpec::kDouble: return "double";
    case ParamSpec::kString: return "string";
    case ParamSpec::kSolver: return "solver";
  }
  return "?";
}

json readers_json(const ParamReaders& r) {
  switch (r.use) {
    case ParamReaders::kEverySolver: return "every solver";
    case ParamReaders::kDefaultOnly: return "engine (default scope)";
    case ParamReaders::kEigen: return "eigensolvers";
    case ParamReaders::kSolvers: return r.solvers;
  }
  return nullptr;
}

}  // namespace

std::string describe_parameters() {
  json params = json::object();
  for (const ParamSpec& p : all_params()) {
    json e = json::object();
    e["type"] = type_text(p.type);
    switch (p.type) {
      case ParamSpec::kInt: e["default"] = p.int_default; break;
      case ParamSpec::kDouble: e["default"] = p.double_default; break;
      case ParamSpec::kString:
      case ParamSpec::kSolver: e["default"] = p.string_default; break;
    }
    if (p.type == ParamSpec::kSolver && std::string(p.name) != "eig_solver") {
      e["allowed"] = amgx_solver_names();
    } else if (!p.allowed.empty()) {
      e["allowed"] = p.allowed;
    }
    if (config_internal::opens_scope(p.name)) e["opens_scope"] = true;
    if (default_scope_only(p.name)) e["default_scope_only"] = true;
    e["read_by"] = readers_json(param_readers(p.name));
    params[p.name] = std::move(e);
  }
  json doc = json::object();
  doc["config_version"] = 2;
  doc["parameters"] = std::move(params);
  return doc.dump(2);
}

}  // namespace jaxamg
