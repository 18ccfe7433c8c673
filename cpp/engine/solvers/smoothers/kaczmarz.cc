#include "solvers/smoothers/kaczmarz.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "solvers/smoothers/common.h"

namespace jaxamg {

template <class T>
KaczmarzSolver<T>::KaczmarzSolver(SolverContext& ctx, const std::string& scope)
    : Solver<T>(ctx, scope, "KACZMARZ") {
  w_ = static_cast<T>(smoothers::read_relaxation_factor(this->param_double("relaxation_factor"),
                                                        "KACZMARZ", scope));
  const int coloring = this->param_int("kaczmarz_coloring_needed");
  if (coloring != 0 && coloring != 1) {
    throw ConfigError("kaczmarz_coloring_needed = " + std::to_string(coloring) +
                      " (scope '" + scope + "') must be 0 or 1");
  }
}

template <class T>
void KaczmarzSolver<T>::solver_setup(bool /*reuse_structure*/) {
  const CsrMatrix<T>& A = *this->A_;
  w_over_row_norm2_.assign(static_cast<std::size_t>(A.nrows), T(0));
  for (Index i = 0; i < A.nrows; ++i) {
    double norm2 = 0;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      norm2 += static_cast<double>(A.val[k]) * static_cast<double>(A.val[k]);
    }
    if (!(norm2 > 0)) {
      throw InvalidInput("KACZMARZ smoother: row " + std::to_string(i) +
                         " of the matrix is zero; every row needs a nonzero entry");
    }
    w_over_row_norm2_[i] = static_cast<T>(static_cast<double>(w_) / norm2);
  }
}

template <class T>
IterationResult KaczmarzSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  if (x_is_zero) std::fill(x, x + n, T(0));
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  const T* scale = w_over_row_norm2_.data();
  for (Index i = 0; i < n; ++i) {
    T r = b[i];
    for (Index k = rp[i]; k < rp[i + 1]; ++k) r -= v[k] * x[ci[k]];
    const T step = scale[i] * r;
    for (Index k = rp[i]; k < rp[i + 1]; ++k) x[ci[k]] += step * v[k];
  }
  return IterationResult::kContinue;
}

template class KaczmarzSolver<float>;
template class KaczmarzSolver<double>;

}  // namespace jaxamg
