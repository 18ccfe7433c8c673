// Registers AMG with the solver factory.
#include "amg/amg_solver.h"
#include "solvers/factory.h"

namespace jaxamg {

template <class T>
void register_amg_solvers(SolverRegistry<T>& registry) {
  registry["AMG"] = [](SolverContext& ctx, const std::string& scope) -> std::unique_ptr<Solver<T>> {
    return std::make_unique<AmgSolver<T>>(ctx, scope);
  };
}

template void register_amg_solvers<float>(SolverRegistry<float>&);
template void register_amg_solvers<double>(SolverRegistry<double>&);

}  // namespace jaxamg
