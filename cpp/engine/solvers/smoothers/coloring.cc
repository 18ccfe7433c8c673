#include "solvers/smoothers/coloring.h"

#include <algorithm>

#include "solvers/smoothers/common.h"

namespace jaxamg::smoothers {

template <class T>
Coloring greedy_coloring(const CsrMatrix<T>& A, Index block_dim) {
  const Index n = A.nrows;
  const Index k = std::max<Index>(block_dim, 1);
  const Index nodes = n / k;  // the caller checks that k divides n
  const Index nnz = A.nnz();
  // Node-level pattern: node I's neighbours are the nodes of the columns of
  // its k rows (columns beyond n, a distributed matrix's ghosts, are not
  // coloured here). Column-wise (the transpose's rows): the earlier nodes J
  // with a_JI != 0 are neighbours of I too when the pattern is not symmetric.
  auto node_of = [k](Index j) { return j / k; };
  std::vector<Index> tp(nodes + 1, 0), tc(nnz);
  for (Index i = 0; i < nodes * k; ++i)
    for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p)
      if (A.col[p] < n) ++tp[node_of(A.col[p]) + 1];
  for (Index I = 0; I < nodes; ++I) tp[I + 1] += tp[I];
  {
    std::vector<Index> next(tp.begin(), tp.end() - 1);
    for (Index i = 0; i < nodes * k; ++i)
      for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p)
        if (A.col[p] < n) tc[next[node_of(A.col[p])]++] = node_of(i);
  }
  std::vector<int> node_color(nodes, -1);
  int num_colors = 0;
  // mark[col] == I: colour col is taken by a neighbour of node I.
  std::vector<Index> mark;
  for (Index I = 0; I < nodes; ++I) {
    auto take = [&](Index J) {
      const int cj = node_color[J];
      if (J != I && cj >= 0) {
        if (static_cast<size_t>(cj) >= mark.size()) mark.resize(cj + 1, -1);
        mark[cj] = I;
      }
    };
    for (Index i = I * k; i < (I + 1) * k; ++i)
      for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p)
        if (A.col[p] < n) take(node_of(A.col[p]));
    for (Index p = tp[I]; p < tp[I + 1]; ++p) take(tc[p]);
    int cI = 0;
    while (static_cast<size_t>(cI) < mark.size() && mark[cI] == I) ++cI;
    node_color[I] = cI;
    num_colors = std::max(num_colors, cI + 1);
  }
  Coloring c;
  c.num_colors = num_colors;
  c.color.resize(n);
  for (Index i = 0; i < n; ++i) c.color[i] = node_color[node_of(i)];
  c.color_ptr.assign(c.num_colors + 1, 0);
  for (Index i = 0; i < n; ++i) ++c.color_ptr[c.color[i] + 1];
  for (int q = 0; q < c.num_colors; ++q) c.color_ptr[q + 1] += c.color_ptr[q];
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
  template Coloring greedy_coloring(const CsrMatrix<T>&, Index);                       \
  template ColorSplit split_by_color(const CsrMatrix<T>&, const Coloring&);            \
  template void gather_split_values(const CsrMatrix<T>&, const ColorSplit&, std::vector<T>&);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg::smoothers
