#include "solvers/smoothers/gauss_seidel.h"

#include <algorithm>
#include <vector>

#include "solvers/smoothers/block_diagonal.h"
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
  const CsrMatrix<T>& A = *this->A_;
  k_ = std::max<Index>(A.block_dim, 1);
  if (k_ > 1) {
    wdinv_.clear();
    smoothers::inverse_block_diagonal(A, k_, w_, "GS smoother", binv_);
    return;
  }
  binv_.clear();
  smoothers::inverse_diagonal(A, "GS smoother", wdinv_);
  for (T& d : wdinv_) d *= w_;
}

template <class T>
void GaussSeidelSolver<T>::block_sweep(const T* b, T* x, bool x_is_zero) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  const Index k = k_;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  // Ghost column c (>= n) reads ghost[c - n]; a zero guess has zero ghosts.
  const T* ghost = (A.dist && !x_is_zero) ? A.dist->ghost_values(x) : nullptr;
  std::vector<T> r(static_cast<std::size_t>(k));
  for (Index I = 0; I < n / k; ++I) {
    const Index first = I * k;
    for (Index c = 0; c < k; ++c) {
      const Index i = first + c;
      T s = b[i];
      for (Index p = rp[i]; p < rp[i + 1]; ++p) {
        const Index j = ci[p];
        // From a zero guess only the nodes already visited are nonzero
        // (columns are sorted, so the rest of the row reads zeros).
        if (x_is_zero && j >= first) break;
        s -= v[p] * (j < n ? x[j] : ghost[j - n]);
      }
      r[c] = s;
    }
    smoothers::apply_block(binv_.data() + I * k * k, r.data(), x + first, k, !x_is_zero);
  }
}

template <class T>
IterationResult GaussSeidelSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  if (k_ > 1) {
    block_sweep(b, x, x_is_zero);
    return IterationResult::kContinue;
  }
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
