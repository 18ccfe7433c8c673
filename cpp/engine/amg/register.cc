// Registers AMG with the solver factory.
#include <type_traits>

#include "amg/amg_solver.h"
#include "amg/mixed_precision_amg.h"
#include "solvers/factory.h"

namespace jaxamg {

template <class T>
void register_amg_solvers(SolverRegistry<T>& registry) {
  registry["AMG"] = [](SolverContext& ctx, const std::string& scope) -> std::unique_ptr<Solver<T>> {
    // x_amg_precision FLOAT: a float32 hierarchy in a float64 solve; a
    // float32 solve has one already.
    if constexpr (std::is_same<T, double>::value) {
      if (float_hierarchy_requested(ctx.config, scope)) {
        return std::make_unique<MixedPrecisionAmg>(ctx, scope);
      }
    }
    return std::make_unique<AmgSolver<T>>(ctx, scope);
  };
}

template void register_amg_solvers<float>(SolverRegistry<float>&);
template void register_amg_solvers<double>(SolverRegistry<double>&);

}  // namespace jaxamg
