// Registers the direct family with the solver factory.
#include "solvers/factory.h"

namespace jaxamg {

template <class T>
void register_direct_solvers(SolverRegistry<T>& registry) {
  (void)registry;
}

template void register_direct_solvers<float>(SolverRegistry<float>&);
template void register_direct_solvers<double>(SolverRegistry<double>&);

}  // namespace jaxamg
