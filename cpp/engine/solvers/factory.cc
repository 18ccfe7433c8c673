#include "solvers/factory.h"

#include "core/error.h"

namespace jaxamg {

namespace {

// Every solver name AmgX registers (core.cu), so that a known-but-missing
// name gets "not implemented" rather than "unknown".
const char* const kAmgxSolverNames[] = {
    "AMG",         "CG",           "PCG",          "PCGF",         "BICGSTAB",
    "PBICGSTAB",   "GMRES",        "FGMRES",       "IDR",          "IDRMSYNC",
    "CHEBYSHEV",   "CHEBYSHEV_POLY", "POLYNOMIAL", "KPZ_POLYNOMIAL", "BLOCK_JACOBI",
    "JACOBI_L1",   "CF_JACOBI",    "GS",           "FIXCOLOR_GS",  "MULTICOLOR_GS",
    "MULTICOLOR_DILU", "MULTICOLOR_ILU", "KACZMARZ", "DENSE_LU_SOLVER", "NOSOLVER"};

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
  for (const char* known : kAmgxSolverNames) {
    if (ref.name == known) {
      throw NotSupported("solver '" + ref.name + "' (scope '" + ref.scope +
                         "') is an AmgX solver that jaxamg does not implement; use one of: " +
                         implemented_solver_names<T>());
    }
  }
  throw ConfigError("unknown solver '" + ref.name + "' (scope '" + ref.scope +
                    "'); valid: " + implemented_solver_names<T>());
}

template std::unique_ptr<Solver<float>> create_solver(SolverContext&, const SolverRef&);
template std::unique_ptr<Solver<double>> create_solver(SolverContext&, const SolverRef&);
template std::string implemented_solver_names<float>();
template std::string implemented_solver_names<double>();

}  // namespace jaxamg
