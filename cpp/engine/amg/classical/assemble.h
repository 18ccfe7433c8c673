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
//
// Each thread builds one contiguous block of rows. When the row lengths are
// bounded (by the pattern, or by max_elements) the blocks are written
// straight into P, each at the bound of the rows before it, and closed up
// afterwards: P is then never held twice. Otherwise each thread fills its
// own buffers, which are copied behind each other.
template <class T, class MakeRowBuilder>
void assemble_prolongation(Index n, Index n_coarse, const std::vector<int8_t>& cf,
                           const std::vector<Index>& coarse_index, const Truncation& trunc,
                           const CsrMatrix<T>* pattern, MakeRowBuilder make_builder,
                           CsrMatrix<T>& P, const uint8_t* skip_rows = nullptr) {
  P = CsrMatrix<T>(n, n_coarse);
  const int nt = n > kSerialBelow ? omp_get_max_threads() : 1;
  const bool bounded = pattern != nullptr || trunc.max_elements > 0;
  // Most entries row i can have (bounded case).
  auto bound = [&](Index i) -> Index {
    if (pattern) return pattern->row_ptr[i + 1] - pattern->row_ptr[i];
    if (cf[i] == kCoarse) return 1;
    if (skip_rows && skip_rows[i]) return 0;
    return trunc.max_elements;
  };
  std::vector<std::size_t> block_start(static_cast<std::size_t>(nt) + 1, 0);
  std::vector<std::size_t> block_used(nt, 0);
  std::vector<std::vector<Index>> bcol(bounded ? 0 : nt);
  std::vector<std::vector<T>> bval(bounded ? 0 : nt);
  // The builders' work arrays are allocated here, by the calling thread:
  // what a worker thread allocates stays in its own allocator arena after
  // it is freed, and adds to the process's resident memory.
  std::vector<decltype(make_builder())> builders;
  builders.reserve(nt);
  for (int t = 0; t < nt; ++t) builders.push_back(make_builder());
#pragma omp parallel num_threads(nt)
  {
    const int t = omp_get_thread_num();
    const int nth = omp_get_num_threads();
    const Index lo = static_cast<Index>(static_cast<int64_t>(n) * t / nth);
    const Index hi = static_cast<Index>(static_cast<int64_t>(n) * (t + 1) / nth);
    if (bounded) {
      std::size_t b = 0;
      for (Index i = lo; i < hi; ++i) b += static_cast<std::size_t>(bound(i));
      block_start[t + 1] = b;
#pragma omp barrier
#pragma omp master
      {
        for (int u = 0; u < nth; ++u) block_start[u + 1] += block_start[u];
        P.col.resize(block_start[nth]);
        P.val.resize(block_start[nth]);
      }
#pragma omp barrier
    }
    auto& builder = builders[t];
    std::vector<RowEntry> row, scratch;
    std::size_t used = 0;
    Index* cbase = nullptr;
    T* vbase = nullptr;
    if (bounded) {
      cbase = P.col.data() + block_start[t];
      vbase = P.val.data() + block_start[t];
    } else {
      // Appended through raw pointers: the buffers grow by doubling.
      bcol[t].resize(static_cast<std::size_t>(hi - lo) * 4 + 16);
      bval[t].resize(bcol[t].size());
    }
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
      if (!bounded) {
        if (used + row.size() > bcol[t].size()) {
          bcol[t].resize(2 * (used + row.size()));
          bval[t].resize(bcol[t].size());
        }
        cbase = bcol[t].data();
        vbase = bval[t].data();
      }
      Index* c = cbase + used;
      T* v = vbase + used;
      for (std::size_t q = 0; q < row.size(); ++q) {
        c[q] = row[q].col;
        v[q] = static_cast<T>(row[q].val);
      }
      used += row.size();
      P.row_ptr[i + 1] = static_cast<Index>(row.size());
    }
    block_used[t] = used;
#pragma omp barrier
    // P is allocated by the calling thread (as the builders above).
#pragma omp master
    {
      for (Index i = 0; i < n; ++i) P.row_ptr[i + 1] += P.row_ptr[i];
      if (bounded) {
        // Close up the blocks, in order: a block only moves towards lower
        // addresses, over space the blocks before it have already left.
        for (int u = 1; u < nth; ++u) {
          const std::size_t from = block_start[u];
          const std::size_t to = static_cast<std::size_t>(P.row_ptr[static_cast<Index>(
              static_cast<int64_t>(n) * u / nth)]);
          std::copy(P.col.begin() + from, P.col.begin() + from + block_used[u],
                    P.col.begin() + to);
          std::copy(P.val.begin() + from, P.val.begin() + from + block_used[u],
                    P.val.begin() + to);
        }
        P.col.resize(P.row_ptr[n]);
        P.val.resize(P.row_ptr[n]);
      } else {
        P.col.resize(P.row_ptr[n]);
        P.val.resize(P.row_ptr[n]);
      }
    }
#pragma omp barrier
    if (!bounded) {
      std::copy(bcol[t].begin(), bcol[t].begin() + used, P.col.begin() + P.row_ptr[lo]);
      std::copy(bval[t].begin(), bval[t].begin() + used, P.val.begin() + P.row_ptr[lo]);
    }
  }
  // P is rectangular: no diagonal index (an n-sized array nothing reads).
}

}  // namespace jaxamg::classical
