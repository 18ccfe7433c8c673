#include "solvers/smoothers/block_jacobi.h"

#include <algorithm>
#include <string>
#include <vector>

#include "solvers/smoothers/block_diagonal.h"
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
  // Dropped first: a setup that throws must not leave a sweep of the
  // previous matrix behind.
  sweep_.reset();
  block_sweep_.reset();
  backend_.reset();
  k_ = std::max<Index>(A.block_dim, 1);
  if (k_ == 1) {
    binv_.clear();
    smoothers::inverse_diagonal(A, "BLOCK_JACOBI smoother", dinv_);
    for (T& d : dinv_) d *= w_;
    backend_ = std::make_unique<Backend>(static_cast<std::size_t>(A.nrows), 1, nullptr);
    sweep_ = std::make_unique<DiagonalSweepMethod<Backend>>(*backend_, A, dinv_.data());
    return;
  }
  smoothers::inverse_block_diagonal(A, k_, w_, "BLOCK_JACOBI smoother", binv_);
  dinv_.assign(A.nrows, T(0));
  for (Index i = 0; i < A.nrows; ++i) dinv_[i] = binv_[(i / k_) * k_ * k_ + (i % k_) * (k_ + 1)];
  backend_ = std::make_unique<Backend>(static_cast<std::size_t>(A.nrows), 1, nullptr);
  block_sweep_ = std::make_unique<BlockJacobiSweepMethod<Backend>>(
      *backend_, A, backend::BlockScale<T>{k_, binv_.data()});
}

template <class T>
IterationResult BlockJacobiSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  if (block_sweep_) {
    block_sweep_->iteration(b, x, x_is_zero);
  } else {
    sweep_->iteration(b, x, x_is_zero);
  }
  return IterationResult::kContinue;
}

template class BlockJacobiSolver<float>;
template class BlockJacobiSolver<double>;

}  // namespace jaxamg
