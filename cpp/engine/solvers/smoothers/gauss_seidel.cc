#include "solvers/smoothers/gauss_seidel.h"

#include "solvers/smoothers/common.h"

namespace jaxamg {

template <class T>
GaussSeidelSolver<T>::GaussSeidelSolver(SolverContext& ctx, const std::string& scope)
    : Solver<T>(ctx, scope, "GS") {
  w_ = static_cast<T>(
      smoothers::read_relaxation_factor(this->param_double("relaxation_factor"), "GS", scope));
}

template <class T>
void GaussSeidelSolver<T>::solver_setup(bool /*reuse_structure*/) {
  smoothers::inverse_diagonal(*this->A_, "GS smoother", wdinv_);
  for (T& d : wdinv_) d *= w_;
}

template <class T>
IterationResult GaussSeidelSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const Index* dp = A.diag_pos.data();
  const T* v = A.val.data();
  const T* dw = wdinv_.data();
  if (x_is_zero) {
    // Entries right of the diagonal multiply unvisited zeros: visit only the
    // strictly lower part (columns are sorted, so it ends at diag_pos).
    for (Index i = 0; i < n; ++i) {
      T r = b[i];
      for (Index k = rp[i]; k < dp[i]; ++k) r -= v[k] * x[ci[k]];
      x[i] = dw[i] * r;
    }
    return IterationResult::kContinue;
  }
  if (A.dist) {
    const T* ghost = A.dist->ghost_values(x);  // ghost column c reads ghost[c - n]
    for (Index i = 0; i < n; ++i) {
      T r = b[i];
      for (Index k = rp[i]; k < rp[i + 1]; ++k) {
        const Index c = ci[k];
        r -= v[k] * (c < n ? x[c] : ghost[c - n]);
      }
      x[i] += dw[i] * r;
    }
    return IterationResult::kContinue;
  }
  for (Index i = 0; i < n; ++i) {
    T r = b[i];
    for (Index k = rp[i]; k < rp[i + 1]; ++k) r -= v[k] * x[ci[k]];
    x[i] += dw[i] * r;
  }
  return IterationResult::kContinue;
}

template class GaussSeidelSolver<float>;
template class GaussSeidelSolver<double>;

}  // namespace jaxamg
