// Registers AMG with the solver factory.
#include "solvers/factory.h"

namespace jaxamg {

template <class T>
void register_amg_solvers(SolverRegistry<T>& registry) {
  (void)registry;
}

template void register_amg_solvers<float>(SolverRegistry<float>&);
template void register_amg_solvers<double>(SolverRegistry<double>&);

}  // namespace jaxamg
