#include "solvers/factory.h"

#include "config/registry.h"
#include "core/error.h"

namespace jaxamg {

namespace {

template <class T>
const SolverRegistry<T>& registry() {
  static const SolverRegistry<T> reg = [] {
    SolverRegistry<T> r;
    register_krylov_solvers<T>(r);
    register_smoothers<T>(r);
    register_direct_solvers<T>(r);
    register_amg_solvers<T>(r);
    return r;
  }();
  return reg;
}

}  // namespace

template <class T>
std::string implemented_solver_names() {
  std::string names;
  for (const auto& [name, creator] : registry<T>()) {
    if (!names.empty()) names += ", ";
    names += name;
  }
  return names;
}

template <class T>
std::unique_ptr<Solver<T>> create_solver(SolverContext& ctx, const SolverRef& ref) {
  const auto& reg = registry<T>();
  auto it = reg.find(ref.name);
  if (it != reg.end()) return it->second(ctx, ref.scope);
  // The config checks refuse these names first; a solver tree built without
  // them (C++ callers) gets the same message here.
  if (const char* advice = refused_amgx_solver(ref.name)) {
    throw ConfigError("solver '" + ref.name + "' (scope '" + ref.scope +
                      "') is an AmgX solver that jaxamg does not implement: " + advice);
  }
  throw ConfigError("unknown solver '" + ref.name + "' (scope '" + ref.scope +
                    "'); valid: " + implemented_solver_names<T>());
}

template std::unique_ptr<Solver<float>> create_solver(SolverContext&, const SolverRef&);
template std::unique_ptr<Solver<double>> create_solver(SolverContext&, const SolverRef&);
template std::string implemented_solver_names<float>();
template std::string implemented_solver_names<double>();

}  // namespace jaxamg
