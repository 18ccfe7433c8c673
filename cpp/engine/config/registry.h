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

// Every solver name AmgX's factory registers (core.cu), in its order. The
// solver-typed keys accept exactly these (eig_solver names an eigensolver
// and is not checked).
const std::vector<std::string>& amgx_solver_names();
// For an AmgX solver name that jaxamg does not implement: why, and the
// nearest choice it does implement; nullptr for any other name.
const char* refused_amgx_solver(const std::string& name);
// Parameters that AmgX accepts only in the "default" (top-level) scope.
bool default_scope_only(const std::string& name);

// The whole registry as JSON text, one entry per parameter: type, default,
// allowed values, whether it opens a scope or is top-level only, and which
// solvers read it (as AMGX_write_parameters_description; config/describe.cc).
std::string describe_parameters();

}  // namespace jaxamg
