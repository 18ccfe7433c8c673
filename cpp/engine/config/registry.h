// The typed parameter registry: every name AmgX registers (core.cu), its
// type, its code default and, for enumerations, the valid values.
#pragma once
#include <string>
#include <vector>

namespace jaxamg {

struct ParamSpec {
  enum Type { kInt, kDouble, kString, kSolver } type;
  const char* name;
  int int_default;
  double double_default;
  const char* string_default;              // also the default solver name
  std::vector<std::string> allowed;        // empty: any value
};

// nullptr if `name` is not registered.
const ParamSpec* find_param(const std::string& name);
const std::vector<ParamSpec>& all_params();
// Comma-separated list of a spec's allowed values (for error messages).
std::string join_allowed(const ParamSpec& spec);

}  // namespace jaxamg
