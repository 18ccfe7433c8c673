// Helpers for the configuration tests: catching a ConfigError's message and
// asserting one solver-typed key of a config.
#pragma once
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/config.h"
#include "config/usage.h"
#include "core/error.h"

namespace jaxamg::testing {

// The message of the ConfigError that `f` throws; a test failure (and "") if
// it throws nothing.
template <class F>
std::string config_error(F&& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a ConfigError";
  return "";
}

// The solver that `key` names in `scope`, as "NAME@scope".
inline std::string solver_at(const Config& cfg, const std::string& key, const std::string& scope) {
  const SolverRef ref = cfg.get_solver(key, scope);
  return ref.name + "@" + ref.scope;
}

// The resolved solver tree, one line per solver:
// "DEPTH ROLE NAME@SCOPE <- PARENT@PARENT_SCOPE".
inline std::vector<std::string> tree_text(const Config& cfg) {
  std::vector<std::string> out;
  for (const SolverNode& n : solver_tree(cfg)) {
    out.push_back(std::to_string(n.depth) + " " + n.role + " " + n.ref.name + "@" + n.ref.scope +
                  " <- " + (n.parent.empty() ? "-" : n.parent) + "@" + n.parent_scope);
  }
  return out;
}

inline bool has_substr(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace jaxamg::testing
