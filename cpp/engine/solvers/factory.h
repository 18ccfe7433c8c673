// Solver factory: maps AmgX solver names to constructors. Each family file
// (krylov/, smoothers/, direct/, amg/) provides one registration function,
// called once from factory.cc.
#pragma once
#include <map>
#include <memory>
#include <string>

#include "solvers/solver.h"

namespace jaxamg {

template <class T>
using SolverCreator = std::unique_ptr<Solver<T>> (*)(SolverContext& ctx, const std::string& scope);

template <class T>
using SolverRegistry = std::map<std::string, SolverCreator<T>>;

// Creates the solver `ref.name` reading scope `ref.scope`. Throws ConfigError
// for an unknown name, NotSupported for an AmgX name we do not implement.
template <class T>
std::unique_ptr<Solver<T>> create_solver(SolverContext& ctx, const SolverRef& ref);

// Names of the solvers this build implements (for error messages and docs).
template <class T>
std::string implemented_solver_names();

// One per family; each adds its names to the registry.
template <class T> void register_krylov_solvers(SolverRegistry<T>& registry);
template <class T> void register_smoothers(SolverRegistry<T>& registry);
template <class T> void register_direct_solvers(SolverRegistry<T>& registry);
template <class T> void register_amg_solvers(SolverRegistry<T>& registry);

}  // namespace jaxamg
