// Registers the smoothers family with the solver factory.
#include "solvers/factory.h"
#include "solvers/smoothers/block_jacobi.h"
#include "solvers/smoothers/chebyshev.h"
#include "solvers/smoothers/gauss_seidel.h"
#include "solvers/smoothers/jacobi_l1.h"
#include "solvers/smoothers/kaczmarz.h"
#include "solvers/smoothers/kpz_polynomial.h"
#include "solvers/smoothers/multicolor_dilu.h"
#include "solvers/smoothers/multicolor_gs.h"
#include "solvers/smoothers/multicolor_ilu.h"
#include "solvers/smoothers/nosolver.h"

namespace jaxamg {

namespace {

template <class S, class T>
std::unique_ptr<Solver<T>> make(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<S>(ctx, scope);
}

template <class T>
std::unique_ptr<Solver<T>> make_chebyshev(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<ChebyshevSolver<T>>(ctx, scope, false);
}

template <class T>
std::unique_ptr<Solver<T>> make_chebyshev_poly(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<ChebyshevSolver<T>>(ctx, scope, true);
}

template <class T>
std::unique_ptr<Solver<T>> make_kpz_polynomial(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<KpzPolynomialSolver<T>>(ctx, scope, false);
}

template <class T>
std::unique_ptr<Solver<T>> make_polynomial(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<KpzPolynomialSolver<T>>(ctx, scope, true);
}

}  // namespace

template <class T>
void register_smoothers(SolverRegistry<T>& registry) {
  registry["BLOCK_JACOBI"] = &make<BlockJacobiSolver<T>, T>;
  registry["NOSOLVER"] = &make<NoSolver<T>, T>;
  registry["JACOBI_L1"] = &make<JacobiL1Solver<T>, T>;
  registry["GS"] = &make<GaussSeidelSolver<T>, T>;
  registry["MULTICOLOR_GS"] = &make<MulticolorGSSolver<T>, T>;
  registry["MULTICOLOR_DILU"] = &make<MulticolorDILUSolver<T>, T>;
  registry["MULTICOLOR_ILU"] = &make<MulticolorILUSolver<T>, T>;
  registry["KACZMARZ"] = &make<KaczmarzSolver<T>, T>;
  registry["CHEBYSHEV"] = &make_chebyshev<T>;
  registry["CHEBYSHEV_POLY"] = &make_chebyshev_poly<T>;
  registry["KPZ_POLYNOMIAL"] = &make_kpz_polynomial<T>;
  registry["POLYNOMIAL"] = &make_polynomial<T>;
}

template void register_smoothers<float>(SolverRegistry<float>&);
template void register_smoothers<double>(SolverRegistry<double>&);

}  // namespace jaxamg
