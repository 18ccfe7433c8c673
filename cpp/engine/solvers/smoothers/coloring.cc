#include "solvers/smoothers/coloring.h"

#include <algorithm>

#include "solvers/smoothers/common.h"

namespace jaxamg::smoothers {

template <class T>
Coloring greedy_coloring(const CsrMatrix<T>& A) {
  const Index n = A.nrows;
  const Index nnz = A.nnz();
  // Column-wise pattern (the transpose's rows): the earlier rows j with
  // a_ji != 0 are neighbours of i too when the pattern is not symmetric.
  std::vector<Index> tp(n + 1, 0), tc(nnz);
  for (Index k = 0; k < nnz; ++k) ++tp[A.col[k] + 1];
  for (Index i = 0; i < n; ++i) tp[i + 1] += tp[i];
  {
    std::vector<Index> next(tp.begin(), tp.end() - 1);
    for (Index i = 0; i < n; ++i)
      for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) tc[next[A.col[k]]++] = i;
  }
  Coloring c;
  c.color.assign(n, -1);
  // mark[col] == i: colour col is taken by a neighbour of row i.
  std::vector<Index> mark;
  for (Index i = 0; i < n; ++i) {
    auto take = [&](Index j) {
      const int cj = c.color[j];
      if (j != i && cj >= 0) {
        if (static_cast<size_t>(cj) >= mark.size()) mark.resize(cj + 1, -1);
        mark[cj] = i;
      }
    };
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) take(A.col[k]);
    for (Index k = tp[i]; k < tp[i + 1]; ++k) take(tc[k]);
    int ci = 0;
    while (static_cast<size_t>(ci) < mark.size() && mark[ci] == i) ++ci;
    c.color[i] = ci;
    c.num_colors = std::max(c.num_colors, ci + 1);
  }
  c.color_ptr.assign(c.num_colors + 1, 0);
  for (Index i = 0; i < n; ++i) ++c.color_ptr[c.color[i] + 1];
  for (int k = 0; k < c.num_colors; ++k) c.color_ptr[k + 1] += c.color_ptr[k];
  c.rows.resize(n);
  std::vector<Index> next(c.color_ptr.begin(), c.color_ptr.end() - 1);
  for (Index i = 0; i < n; ++i) c.rows[next[c.color[i]]++] = i;
  return c;
}

template <class T>
ColorSplit split_by_color(const CsrMatrix<T>& A, const Coloring& coloring) {
  const Index n = A.nrows;
  const int* color = coloring.color.data();
  ColorSplit s;
  s.row_ptr.assign(n + 1, 0);
  s.pos.resize(n);
  for (Index p = 0; p < n; ++p) {
    const Index i = coloring.rows[p];
    s.pos[i] = p;
    s.row_ptr[p + 1] = s.row_ptr[p] + (A.row_ptr[i + 1] - A.row_ptr[i]);
  }
  s.col.resize(A.nnz());
  s.src.resize(A.nnz());
  s.dst.resize(A.nnz());
  s.diag.resize(n);
#pragma omp parallel for schedule(static) if (n > kParallelRows)
  for (Index p = 0; p < n; ++p) {
    const Index i = coloring.rows[p];
    const Index begin = s.row_ptr[p], len = A.row_ptr[i + 1] - A.row_ptr[i];
    Index* src = s.src.data() + begin;
    for (Index k = 0; k < len; ++k) src[k] = A.row_ptr[i] + k;
    const int ci = color[i];
    // Key: colour (the diagonal carries the row's own, which no neighbour
    // shares), then column. Rows are short: insertion sort.
    auto less = [&](Index a, Index b) {
      const Index ja = A.col[a], jb = A.col[b];
      const int ca = ja == i ? ci : color[ja], cb = jb == i ? ci : color[jb];
      return ca != cb ? ca < cb : ja < jb;
    };
    for (Index k = 1; k < len; ++k) {
      const Index v = src[k];
      Index q = k;
      for (; q > 0 && less(v, src[q - 1]); --q) src[q] = src[q - 1];
      src[q] = v;
    }
    for (Index k = begin; k < begin + len; ++k) {
      s.col[k] = A.col[s.src[k]];
      s.dst[s.src[k]] = k;
      if (s.col[k] == i) s.diag[p] = k;
    }
  }
  return s;
}

template <class T>
void gather_split_values(const CsrMatrix<T>& A, const ColorSplit& split, std::vector<T>& out) {
  const Index nnz = A.nnz();
  out.resize(nnz);
  const Index* src = split.src.data();
  const T* v = A.val.data();
#pragma omp parallel for schedule(static) if (nnz > 8 * kParallelRows)
  for (Index k = 0; k < nnz; ++k) out[k] = v[src[k]];
}

#define JAXAMG_INSTANTIATE(T)                                                          \
  template Coloring greedy_coloring(const CsrMatrix<T>&);                              \
  template ColorSplit split_by_color(const CsrMatrix<T>&, const Coloring&);            \
  template void gather_split_values(const CsrMatrix<T>&, const ColorSplit&, std::vector<T>&);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg::smoothers
