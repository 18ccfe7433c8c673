// The unused-parameter pass: every value set in a scope where no solver of
// the resolved tree reads it, with the reason. The classic case is a
// smoother given as a plain name ("smoother": "BLOCK_JACOBI"): it reads the
// default scope, so a relaxation_factor written next to it, in the AMG's
// scope, changes nothing (AmgX's AGGREGATION_JACOBI.json).
#include <algorithm>
#include <map>
#include <sstream>

#include "config/config.h"
#include "config/internal.h"
#include "config/registry.h"
#include "config/usage.h"

namespace jaxamg {

namespace {

std::string number_text(double d) {
  // The shortest text that reads back as the same double (0.75, not
  // 0.75000000000000000).
  for (int p = 6; p <= 17; ++p) {
    std::ostringstream os;
    os.precision(p);
    os << d;
    if (std::stod(os.str()) == d) return os.str();
  }
  return std::to_string(d);
}

// The value as it would be written in JSON.
std::string value_text(const Config::Value& v) {
  switch (v.kind) {
    case Config::Value::kInt: return std::to_string(v.i);
    case Config::Value::kDouble: return number_text(v.d);
    case Config::Value::kString: return "\"" + v.s + "\"";
    case Config::Value::kSolver:
      return "\"" + v.s + "\"" + (v.scope == "default" ? "" : " (scope '" + v.scope + "')");
  }
  return "";
}

// What a solver reading `scope` sees for `name`.
std::string effective_text(const Config& cfg, const std::string& name, const std::string& scope) {
  const ParamSpec* spec = find_param(name);
  switch (spec->type) {
    case ParamSpec::kInt: return std::to_string(cfg.get_int(name, scope));
    case ParamSpec::kDouble: return number_text(cfg.get_double(name, scope));
    case ParamSpec::kString: return "\"" + cfg.get_string(name, scope) + "\"";
    case ParamSpec::kSolver: return "\"" + cfg.get_solver(name, scope).name + "\"";
  }
  return "";
}

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

bool contains(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

using Live = std::map<std::string, std::vector<std::string>>;  // scope -> solver names

// Why nothing reads `scope`: the solver declared with it is never created,
// or the scope name matches no solver at all.
std::string dead_scope_reason(const Config& cfg, const Live& live, const std::string& scope) {
  std::string why = "no solver of the resolved tree reads scope '" + scope + "'";
  if (scope == "default") {
    return why + "; every solver of the tree has a scope of its own, so top-level values "
                 "reach none of them";
  }
  for (const auto& [key, v] : cfg.values()) {
    if (v.kind != Config::Value::kSolver || v.scope != scope) continue;
    const std::string& parent_scope = key.first;
    const std::string& role = key.second;
    const std::string decl = "the " + role + " '" + v.s + "' declared in scope '" + parent_scope + "'";
    if (v.s == "NOSOLVER") return why + "; it belongs to " + decl + ", which reads no parameters";
    auto it = live.find(parent_scope);
    if (it == live.end()) {
      return why + "; it belongs to " + decl + ", and no solver reads scope '" + parent_scope +
             "' either";
    }
    for (const std::string& parent : it->second) {
      if (contains(child_keys(parent), role)) return why + "; " + decl + " is not created";
    }
    return why + "; " + decl + " is never created: " + join(it->second) + " takes no " + role;
  }
  std::vector<std::string> scopes;
  for (const auto& [s, solvers] : live) scopes.push_back(s);
  const std::string hint = config_internal::did_you_mean(scope, scopes);
  return why + "; no solver is declared with this scope" + (hint.empty() ? "" : ";" + hint);
}

// Why the solvers living in `scope` do not read `name`, and where the value
// would have to go.
std::string not_read_reason(const Config& cfg, const std::string& scope, const std::string& name,
                            const Config::Value& value, const std::vector<std::string>& solvers,
                            const std::vector<std::string>& readers) {
  std::string why = join(solvers) + " in scope '" + scope + "' " +
                    (solvers.size() == 1 ? "does" : "do") + " not read it (" +
                    (readers.empty() ? std::string("no solver reads it")
                                     : "read by " + join(readers)) +
                    ")";
  for (const std::string& s : solvers) {
    for (const std::string& role : child_keys(s)) {
      const SolverRef child = cfg.get_solver(role, scope);
      if (!contains(readers, child.name)) continue;
      if (child.scope == "default") {
        return why + "; the " + role + " '" + child.name + "' of scope '" + scope +
               "' is given as a plain name, so it reads scope 'default' and sees " + name +
               " = " + effective_text(cfg, name, "default") + "; declare it as an object, \"" +
               role + "\": {\"solver\": \"" + child.name + "\", \"" + name + "\": " +
               value_text(value) + "}, to give it this value";
      }
      return why + "; the " + role + " '" + child.name + "' reads scope '" + child.scope +
             "': set it there";
    }
  }
  return why;
}

}  // namespace

std::vector<std::string> Config::unused_parameter_warnings() const {
  const std::vector<SolverNode> tree = solver_tree(*this);
  Live live;
  for (const SolverNode& n : tree) {
    std::vector<std::string>& here = live[n.ref.scope];
    if (!contains(here, n.ref.name)) here.push_back(n.ref.name);
  }
  std::vector<std::string> out;
  for (const auto& [key, value] : values_) {
    const std::string& scope = key.first;
    const std::string& name = key.second;
    const ParamReaders r = param_readers(name);
    if (r.use == ParamReaders::kEigen) continue;  // no eigensolver is built
    const std::string head = "parameter '" + name + "' = " + value_text(value) + " in scope '" +
                             scope + "' is never read: ";
    if (r.use == ParamReaders::kDefaultOnly) {
      if (scope != "default") {
        out.push_back(head + "it is read only from the default scope; move it to the outermost "
                             "object of the config");
      }
      continue;
    }
    auto it = live.find(scope);
    if (it == live.end()) {
      out.push_back(head + dead_scope_reason(*this, live, scope));
      continue;
    }
    if (r.use == ParamReaders::kEverySolver) continue;
    bool read = false;
    for (const std::string& s : it->second) read = read || contains(r.solvers, s);
    if (!read) out.push_back(head + not_read_reason(*this, scope, name, value, it->second, r.solvers));
  }
  out.insert(out.end(), notes_.begin(), notes_.end());
  return out;
}

}  // namespace jaxamg
