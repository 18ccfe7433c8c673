#include "amg/classical/transpose.h"

#include <omp.h>

#include <cstdint>

#include "amg/classical/strength.h"

namespace jaxamg::classical {

namespace {

// Each thread counts the columns of its own block of rows; a thread's
// entries then go after those of lower-numbered threads, so every row of
// the transpose comes out sorted without atomics or a final sort. With
// `scatter` null only the offsets are computed.
// `Offsets` is std::vector<Index> or CsrArray<Index> (a matrix's row_ptr).
template <class Offsets, class Scatter>
void transpose_impl(Index nrows, Index ncols, const Index* row_ptr, const Index* col,
                    Offsets& t_row_ptr, const Scatter* scatter) {
  t_row_ptr.assign(ncols + 1, 0);
  const int nt = nrows > kSerialBelow ? omp_get_max_threads() : 1;
  // Allocated by the calling thread (see assemble.h).
  std::vector<std::vector<Index>> count(nt, std::vector<Index>(ncols, 0));
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    const int nth = omp_get_num_threads();
    const Index lo = static_cast<Index>(static_cast<int64_t>(nrows) * t / nth);
    const Index hi = static_cast<Index>(static_cast<int64_t>(nrows) * (t + 1) / nth);
    std::vector<Index>& c = count[t];
    for (Index k = row_ptr[lo]; k < row_ptr[hi]; ++k) ++c[col[k]];
#pragma omp barrier
#pragma omp for schedule(static)
    for (Index j = 0; j < ncols; ++j) {
      Index s = 0;
      for (int u = 0; u < nth; ++u) s += count[u][j];
      t_row_ptr[j + 1] = s;
    }
#pragma omp single
    for (Index j = 0; j < ncols; ++j) t_row_ptr[j + 1] += t_row_ptr[j];
    if (scatter) {
#pragma omp for schedule(static)
      for (Index j = 0; j < ncols; ++j) {
        Index run = t_row_ptr[j];
        for (int u = 0; u < nth; ++u) {
          const Index cnt = count[u][j];
          count[u][j] = run;
          run += cnt;
        }
      }
      for (Index i = lo; i < hi; ++i)
        for (Index k = row_ptr[i]; k < row_ptr[i + 1]; ++k) (*scatter)(c[col[k]]++, i, k);
    }
  }
}

}  // namespace

void transpose_pattern(Index n, const std::vector<Index>& row_ptr, const std::vector<Index>& col,
                       std::vector<Index>& t_row_ptr, std::vector<Index>& t_col, bool columns) {
  t_col.assign(columns ? col.size() : 0, 0);
  auto put = [&t_col](Index dst, Index i, Index) { t_col[dst] = i; };
  transpose_impl(n, n, row_ptr.data(), col.data(), t_row_ptr, columns ? &put : nullptr);
}

template <class T>
CsrMatrix<T> parallel_transpose(const CsrMatrix<T>& A) {
  CsrMatrix<T> B(A.ncols, A.nrows);
  B.col.resize(A.nnz());
  B.val.resize(A.nnz());
  auto put = [&B, &A](Index dst, Index i, Index k) {
    B.col[dst] = i;
    B.val[dst] = A.val[k];
  };
  transpose_impl(A.nrows, A.ncols, A.row_ptr.data(), A.col.data(), B.row_ptr, &put);
  B.find_diagonal();
  return B;
}

template CsrMatrix<float> parallel_transpose(const CsrMatrix<float>&);
template CsrMatrix<double> parallel_transpose(const CsrMatrix<double>&);

}  // namespace jaxamg::classical
