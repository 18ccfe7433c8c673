// Registers the direct family with the solver factory.
#include "solvers/direct/dense_lu.h"
#include "solvers/factory.h"

namespace jaxamg {

namespace {

template <class T>
std::unique_ptr<Solver<T>> make_dense_lu(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<DenseLUSolver<T>>(ctx, scope);
}

}  // namespace

template <class T>
void register_direct_solvers(SolverRegistry<T>& registry) {
  registry["DENSE_LU_SOLVER"] = &make_dense_lu<T>;
}

template void register_direct_solvers<float>(SolverRegistry<float>&);
template void register_direct_solvers<double>(SolverRegistry<double>&);

}  // namespace jaxamg
