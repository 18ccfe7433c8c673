// Registers the krylov family with the solver factory.
#include "solvers/factory.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg {

template <class T>
void register_krylov_solvers(SolverRegistry<T>& registry) {
  registry["CG"] = &make_cg<T>;
  registry["PCG"] = &make_pcg<T>;
  registry["PCGF"] = &make_pcgf<T>;
  registry["BICGSTAB"] = &make_bicgstab<T>;
  registry["PBICGSTAB"] = &make_pbicgstab<T>;
  registry["GMRES"] = &make_gmres<T>;
  registry["FGMRES"] = &make_fgmres<T>;
  registry["IDR"] = &make_idr<T>;
  registry["IDRMSYNC"] = &make_idrmsync<T>;
}

template void register_krylov_solvers<float>(SolverRegistry<float>&);
template void register_krylov_solvers<double>(SolverRegistry<double>&);

}  // namespace jaxamg
