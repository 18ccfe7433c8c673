#include "solvers/smoothers/jacobi_l1.h"

#include <cmath>

#include "core/error.h"

namespace jaxamg {

template <class T>
JacobiL1Solver<T>::JacobiL1Solver(SolverContext& ctx, const std::string& scope)
    : Solver<T>(ctx, scope, "JACOBI_L1") {
  w_ = static_cast<T>(smoothers::read_relaxation_factor(this->param_double("relaxation_factor"),
                                                        "JACOBI_L1", scope));
}

template <class T>
void JacobiL1Solver<T>::solver_setup(bool /*reuse_structure*/) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  // Dropped first: a setup that throws must not leave a sweep of the
  // previous matrix behind.
  sweep_.reset();
  backend_.reset();
  dinv_.resize(n);
  Index zero_row = -1;
#pragma omp parallel for schedule(static) if (n > smoothers::kParallelRows)
  for (Index i = 0; i < n; ++i) {
    // Accumulate in double: the norm of a float row loses nothing that way.
    double sum = 0;
    bool negative_diag = false;
    for (Index k = rp[i]; k < rp[i + 1]; ++k) {
      sum += std::abs(static_cast<double>(v[k]));
      if (ci[k] == i && v[k] < T(0)) negative_diag = true;
    }
    if (sum == 0) {
#pragma omp critical(jacobi_l1_zero_row)
      if (zero_row < 0 || i < zero_row) zero_row = i;
      dinv_[i] = T(0);
    } else {
      dinv_[i] = static_cast<T>(static_cast<double>(w_) / (negative_diag ? -sum : sum));
    }
  }
  if (zero_row >= 0) {
    throw InvalidInput("JACOBI_L1 smoother: row " + std::to_string(zero_row) +
                       " of the " + std::to_string(n) + "-row matrix is entirely zero (l1 norm "
                       "0), so the row cannot be relaxed; remove the empty row or put a nonzero "
                       "on its diagonal");
  }
  backend_ = std::make_unique<Backend>(static_cast<std::size_t>(n), 1, nullptr);
  sweep_ = std::make_unique<DiagonalSweepMethod<Backend>>(*backend_, A, dinv_.data());
}

template <class T>
IterationResult JacobiL1Solver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  sweep_->iteration(b, x, x_is_zero);
  return IterationResult::kContinue;
}

template class JacobiL1Solver<float>;
template class JacobiL1Solver<double>;

}  // namespace jaxamg
