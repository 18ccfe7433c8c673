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
template void require_diag_index(const CsrMatrix<float>&, const std::string&);
template void require_diag_index(const CsrMatrix<double>&, const std::string&);
template void inverse_diagonal(const CsrMatrix<float>&, const std::string&, std::vector<float>&);
template void inverse_diagonal(const CsrMatrix<double>&, const std::string&, std::vector<double>&);

}  // namespace jaxamg::smoothers
