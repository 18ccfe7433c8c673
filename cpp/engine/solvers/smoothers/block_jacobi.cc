#include "solvers/smoothers/block_jacobi.h"

#include "solvers/smoothers/common.h"

namespace jaxamg {

template <class T>
BlockJacobiSolver<T>::BlockJacobiSolver(SolverContext& ctx, const std::string& scope)
    : Solver<T>(ctx, scope, "BLOCK_JACOBI") {
  w_ = static_cast<T>(smoothers::read_relaxation_factor(this->param_double("relaxation_factor"),
                                                        "BLOCK_JACOBI", scope));
}

template <class T>
void BlockJacobiSolver<T>::solver_setup(bool /*reuse_structure*/) {
  const CsrMatrix<T>& A = *this->A_;
  smoothers::inverse_diagonal(A, "BLOCK_JACOBI smoother", dinv_);
  for (T& d : dinv_) d *= w_;
  next_.resize(A.nrows);
}

template <class T>
IterationResult BlockJacobiSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  smoothers::diagonal_sweep(*this->A_, dinv_.data(), b, x, next_.data(), x_is_zero);
  return IterationResult::kContinue;
}

template class BlockJacobiSolver<float>;
template class BlockJacobiSolver<double>;

}  // namespace jaxamg
