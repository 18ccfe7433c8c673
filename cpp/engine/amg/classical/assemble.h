// Parallel assembly of P from a per-row weight computation, shared by the
// interpolation files. Each thread owns one contiguous block of rows and
// fills its own buffers, which are then copied behind each other: the result
// does not depend on the number of threads.
#pragma once
#include <omp.h>

#include <algorithm>
#include <vector>

#include "amg/classical/splitting.h"
#include "amg/classical/truncation.h"
#include "core/csr_matrix.h"

namespace jaxamg::classical {

// Rows are short (a handful to a few dozen entries): insertion sort.
inline void sort_by_column(std::vector<RowEntry>& row) {
  for (std::size_t a = 1; a < row.size(); ++a) {
    const RowEntry x = row[a];
    std::size_t b = a;
    for (; b > 0 && row[b - 1].col > x.col; --b) row[b] = row[b - 1];
    row[b] = x;
  }
}

// MakeRowBuilder() returns a per-thread object with
//   void operator()(Index i, std::vector<RowEntry>& row)
// that appends the (coarse column, weight) pairs of F row i, unsorted and
// without duplicate columns. F rows with skip_rows[i] != 0 stay empty.
template <class T, class MakeRowBuilder>
void assemble_prolongation(Index n, Index n_coarse, const std::vector<int8_t>& cf,
                           const std::vector<Index>& coarse_index, const Truncation& trunc,
                           const CsrMatrix<T>* pattern, MakeRowBuilder make_builder,
                           CsrMatrix<T>& P, const uint8_t* skip_rows = nullptr) {
  P = CsrMatrix<T>(n, n_coarse);
  const int nt = omp_get_max_threads();
  std::vector<std::vector<Index>> bcol(nt);
  std::vector<std::vector<T>> bval(nt);
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    const int nth = omp_get_num_threads();
    const Index lo = static_cast<Index>(static_cast<int64_t>(n) * t / nth);
    const Index hi = static_cast<Index>(static_cast<int64_t>(n) * (t + 1) / nth);
    auto builder = make_builder();
    std::vector<RowEntry> row, scratch;
    // Appended through raw pointers: the buffers grow by doubling.
    std::vector<Index>& cols = bcol[t];
    std::vector<T>& vals = bval[t];
    std::size_t used = 0;
    cols.resize(static_cast<std::size_t>(hi - lo) * 4 + 16);
    vals.resize(cols.size());
    for (Index i = lo; i < hi; ++i) {
      row.clear();
      if (cf[i] == kCoarse) {
        row.push_back({coarse_index[i], 1.0});
      } else if (!skip_rows || !skip_rows[i]) {
        builder(i, row);
        sort_by_column(row);
        if (pattern) {
          restrict_row(row, pattern->col.data() + pattern->row_ptr[i],
                       pattern->col.data() + pattern->row_ptr[i + 1], scratch);
        } else {
          truncate_row(row, trunc, scratch);
        }
      }
      if (used + row.size() > cols.size()) {
        cols.resize(2 * (used + row.size()));
        vals.resize(cols.size());
      }
      Index* c = cols.data() + used;
      T* v = vals.data() + used;
      for (std::size_t q = 0; q < row.size(); ++q) {
        c[q] = row[q].col;
        v[q] = static_cast<T>(row[q].val);
      }
      used += row.size();
      P.row_ptr[i + 1] = static_cast<Index>(row.size());
    }
#pragma omp barrier
#pragma omp single
    {
      for (Index i = 0; i < n; ++i) P.row_ptr[i + 1] += P.row_ptr[i];
      P.col.resize(P.row_ptr[n]);
      P.val.resize(P.row_ptr[n]);
    }
    std::copy(cols.begin(), cols.begin() + used, P.col.begin() + P.row_ptr[lo]);
    std::copy(vals.begin(), vals.begin() + used, P.val.begin() + P.row_ptr[lo]);
  }
  P.find_diagonal();
}

}  // namespace jaxamg::classical
