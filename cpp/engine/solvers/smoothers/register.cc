// Registers the smoothers family with the solver factory.
#include "solvers/factory.h"

namespace jaxamg {

template <class T>
void register_smoothers(SolverRegistry<T>& registry) {
  (void)registry;
}

template void register_smoothers<float>(SolverRegistry<float>&);
template void register_smoothers<double>(SolverRegistry<double>&);

}  // namespace jaxamg
