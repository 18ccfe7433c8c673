// NOSOLVER: the identity. As a preconditioner it is normally elided by
// Solver::create_child (which returns nullptr); as a solver it leaves x as
// given, or zero when x_is_zero, like AmgX's Dummy_Solver.
#pragma once
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class NoSolver : public Solver<T> {
 public:
  NoSolver(SolverContext& ctx, const std::string& scope) : Solver<T>(ctx, scope, "NOSOLVER") {}

 protected:
  void solver_setup(bool /*reuse_structure*/) override {}
  IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) override;
  bool supports_distribution() const override { return true; }  // touches no operator
};

}  // namespace jaxamg
