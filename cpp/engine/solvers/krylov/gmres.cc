// Restarted GMRES(m), right preconditioned (AmgX's GMRES): the basis spans
// A M^{-1}; the correction M^{-1} V y is formed once per restart, which costs
// one extra preconditioner application per cycle but stores only V. A fixed
// (linear) preconditioner is required; FGMRES is the method for variable ones.
// The method is gmres_method.h, run on the CPU backend by gmres_cycle.h.
#include "solvers/krylov/gmres_cycle.h"

namespace jaxamg {

template <class T>
std::unique_ptr<Solver<T>> make_gmres(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<krylov::GmresCycle<T>>(ctx, scope, "GMRES", /*flexible=*/false);
}

template std::unique_ptr<Solver<float>> make_gmres<float>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<double>> make_gmres<double>(SolverContext&, const std::string&);

}  // namespace jaxamg
