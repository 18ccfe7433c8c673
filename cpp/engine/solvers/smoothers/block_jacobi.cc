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
  backend_.reset();
  k_ = std::max<Index>(A.block_dim, 1);
  if (k_ == 1) {
    binv_.clear();
    Vector<T>().swap(next_);
    smoothers::inverse_diagonal(A, "BLOCK_JACOBI smoother", dinv_);
    for (T& d : dinv_) d *= w_;
    backend_ = std::make_unique<Backend>(static_cast<std::size_t>(A.nrows), 1, nullptr);
    sweep_ = std::make_unique<DiagonalSweepMethod<Backend>>(*backend_, A, dinv_.data());
    return;
  }
  next_.resize(A.nrows);
  smoothers::inverse_block_diagonal(A, k_, w_, "BLOCK_JACOBI smoother", binv_);
  dinv_.assign(A.nrows, T(0));
  for (Index i = 0; i < A.nrows; ++i) dinv_[i] = binv_[(i / k_) * k_ * k_ + (i % k_) * (k_ + 1)];
}

template <class T>
void BlockJacobiSolver<T>::block_sweep(const T* b, T* x, bool x_is_zero) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  const Index k = k_;
  const Index nb = n / k;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  T* r = next_.data();
  const T* bi = binv_.data();
  // A distributed matrix forms the residual with its halo exchange first.
  const bool have_residual = !x_is_zero && A.dist;
  if (have_residual) A.dist->residual(A, x, b, r);
#pragma omp parallel if (n > smoothers::kParallelRows)
  {
    if (x_is_zero) {
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) r[i] = b[i];
    } else if (!have_residual) {
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        T s = b[i];
        for (Index p = rp[i]; p < rp[i + 1]; ++p) s -= v[p] * x[ci[p]];
        r[i] = s;
      }
    }
#pragma omp for schedule(static)
    for (Index I = 0; I < nb; ++I) {
      smoothers::apply_block(bi + I * k * k, r + I * k, x + I * k, k, !x_is_zero);
    }
  }
}

template <class T>
IterationResult BlockJacobiSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  if (k_ > 1) {
    block_sweep(b, x, x_is_zero);
  } else {
    sweep_->iteration(b, x, x_is_zero);
  }
  return IterationResult::kContinue;
}

template class BlockJacobiSolver<float>;
template class BlockJacobiSolver<double>;

}  // namespace jaxamg
