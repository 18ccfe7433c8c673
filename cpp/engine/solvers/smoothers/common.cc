#include "solvers/smoothers/common.h"

#include <cmath>

#include "core/error.h"
#include "core/format.h"

namespace jaxamg::smoothers {

template <class T>
void require_diag_index(const CsrMatrix<T>& A, const std::string& who) {
  if (static_cast<Index>(A.diag_pos.size()) != A.nrows) {
    throw InvalidInput(who + ": the matrix has " + std::to_string(A.nrows) +
                       " rows but a diagonal index of " + std::to_string(A.diag_pos.size()) +
                       " entries; build it with make_csr/canonicalize or call find_diagonal()");
  }
}

template <class T>
void inverse_diagonal(const CsrMatrix<T>& A, const std::string& who, std::vector<T>& inv) {
  require_diag_index(A, who);
  require_nonzero_diagonal(A, who);
  inv.resize(A.nrows);
  const Index* dp = A.diag_pos.data();
  const T* v = A.val.data();
#pragma omp parallel for schedule(static) if (A.nrows > kParallelRows)
  for (Index i = 0; i < A.nrows; ++i) inv[i] = T(1) / v[dp[i]];
}

template <class T>
void diagonal_sweep(const CsrMatrix<T>& A, const T* dw, const T* b, T* x, T* tmp, bool x_is_zero) {
  const Index n = A.nrows;
  if (x_is_zero) {
#pragma omp parallel for schedule(static) if (n > kParallelRows)
    for (Index i = 0; i < n; ++i) x[i] = dw[i] * b[i];
    return;
  }
  if (A.dist) {
    A.dist->residual(A, x, b, tmp);
#pragma omp parallel for schedule(static) if (n > kParallelRows)
    for (Index i = 0; i < n; ++i) x[i] += dw[i] * tmp[i];
    return;
  }
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
#pragma omp parallel if (n > kParallelRows)
  {
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      T r = b[i];
      for (Index k = rp[i]; k < rp[i + 1]; ++k) r -= v[k] * x[ci[k]];
      tmp[i] = x[i] + dw[i] * r;
    }
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) x[i] = tmp[i];
  }
}

double read_relaxation_factor(double w, const std::string& who, const std::string& scope) {
  // AmgX's Jacobi smoothers read 0 as "no damping".
  if (w == 0.0) return 1.0;
  if (!(w > 0.0 && w <= 2.0)) {
    throw ConfigError(who + ": relaxation_factor = " + format_number(w) + " in scope '" + scope +
                      "' is outside (0, 2], where the sweep cannot converge; use e.g. 0.9 "
                      "(AmgX's default) or 1.0");
  }
  return w;
}

template <class T>
CsrMatrix<T> owned_block(const CsrMatrix<T>& A) {
  const Index n = A.nrows;
  CsrMatrix<T> own(n, n);
  own.block_dim = A.block_dim;
  for (Index i = 0; i < n; ++i) {
    // Columns are [owned | ghost] and sorted: the owned ones come first.
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1] && A.col[k] < n; ++k) {
      own.col.push_back(A.col[k]);
      own.val.push_back(A.val[k]);
    }
    own.row_ptr[i + 1] = own.nnz();
  }
  own.find_diagonal();
  return own;
}

template CsrMatrix<float> owned_block(const CsrMatrix<float>&);
template CsrMatrix<double> owned_block(const CsrMatrix<double>&);
template void diagonal_sweep(const CsrMatrix<float>&, const float*, const float*, float*, float*,
                             bool);
template void diagonal_sweep(const CsrMatrix<double>&, const double*, const double*, double*,
                             double*, bool);
template void require_diag_index(const CsrMatrix<float>&, const std::string&);
template void require_diag_index(const CsrMatrix<double>&, const std::string&);
template void inverse_diagonal(const CsrMatrix<float>&, const std::string&, std::vector<float>&);
template void inverse_diagonal(const CsrMatrix<double>&, const std::string&, std::vector<double>&);

}  // namespace jaxamg::smoothers
