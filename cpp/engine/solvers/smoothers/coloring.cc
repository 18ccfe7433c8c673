#include "solvers/smoothers/coloring.h"

#include <algorithm>
#include <cstdint>

#include "solvers/smoothers/common.h"

namespace jaxamg::smoothers {

namespace {

// Rows grouped by colour from a colour per row.
void group_rows(Coloring& c) {
  const Index n = static_cast<Index>(c.color.size());
  c.color_ptr.assign(c.num_colors + 1, 0);
  for (Index i = 0; i < n; ++i) ++c.color_ptr[c.color[i] + 1];
  for (int q = 0; q < c.num_colors; ++q) c.color_ptr[q + 1] += c.color_ptr[q];
  c.rows.resize(n);
  std::vector<Index> next(c.color_ptr.begin(), c.color_ptr.end() - 1);
  for (Index i = 0; i < n; ++i) c.rows[next[c.color[i]]++] = i;
}

// Greedy first-fit colours of the nodes, or an empty vector if some node
// needs more than 64 colours. Node I takes the smallest colour of no node
// J < I with a_IJ != 0 or a_JI != 0. The first kind is read from I's rows;
// the second is pushed forward: once J is coloured, its colour is marked in
// a 64-bit mask of every later node of J's rows. The masks (8 bytes a node)
// replace the transposed pattern (4 bytes an entry).
template <class T>
std::vector<int> color_nodes_masked(const CsrMatrix<T>& A, Index k) {
  const Index n = A.nrows;
  const Index nodes = n / k;
  auto node_of = [k](Index j) { return j / k; };
  std::vector<int> color(nodes, -1);
  std::vector<uint64_t> taken_later(nodes, 0);
  for (Index I = 0; I < nodes; ++I) {
    uint64_t taken = taken_later[I];
    for (Index i = I * k; i < (I + 1) * k; ++i)
      for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
        const Index J = node_of(A.col[p]);
        if (A.col[p] < n && J < I) taken |= uint64_t(1) << color[J];
      }
    if (taken == ~uint64_t(0)) return {};
    const int cI = __builtin_ctzll(~taken);
    color[I] = cI;
    for (Index i = I * k; i < (I + 1) * k; ++i)
      for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
        const Index J = node_of(A.col[p]);
        if (A.col[p] < n && J > I) taken_later[J] |= uint64_t(1) << cI;
      }
  }
  return color;
}

// True if a_ij != 0 exactly when a_ji != 0 (columns beyond n, a distributed
// matrix's ghosts, aside). Columns are sorted: one binary search per entry,
// and no memory.
template <class T>
bool pattern_is_symmetric(const CsrMatrix<T>& A) {
  const Index n = A.nrows;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  bool symmetric = true;
#pragma omp parallel for reduction(&& : symmetric) schedule(static) if (n > kParallelRows)
  for (Index i = 0; i < n; ++i) {
    for (Index p = rp[i]; p < rp[i + 1] && symmetric; ++p) {
      const Index j = ci[p];
      if (j >= n || j == i) continue;
      symmetric = std::binary_search(ci + rp[j], ci + rp[j + 1], i);
    }
  }
  return symmetric;
}

// The same colouring for any number of colours. The neighbours are read
// from the nodes' rows, and with `transposed` also through the transposed
// pattern (4 bytes an entry, formed here), which a symmetric pattern does
// not need.
template <class T>
std::vector<int> color_nodes_scanned(const CsrMatrix<T>& A, Index k, bool transposed) {
  const Index n = A.nrows;
  const Index nodes = n / k;
  auto node_of = [k](Index j) { return j / k; };
  std::vector<Index> tp, tc;
  if (transposed) {
    tp.assign(nodes + 1, 0);
    tc.resize(A.nnz());
    for (Index i = 0; i < nodes * k; ++i)
      for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p)
        if (A.col[p] < n) ++tp[node_of(A.col[p]) + 1];
    for (Index I = 0; I < nodes; ++I) tp[I + 1] += tp[I];
    std::vector<Index> next(tp.begin(), tp.end() - 1);
    for (Index i = 0; i < nodes * k; ++i)
      for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p)
        if (A.col[p] < n) tc[next[node_of(A.col[p])]++] = node_of(i);
  }
  std::vector<int> node_color(nodes, -1);
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
    if (transposed) {
      for (Index p = tp[I]; p < tp[I + 1]; ++p) take(tc[p]);
    }
    int cI = 0;
    while (static_cast<size_t>(cI) < mark.size() && mark[cI] == I) ++cI;
    node_color[I] = cI;
  }
  return node_color;
}

}  // namespace

template <class T>
Coloring greedy_coloring(const CsrMatrix<T>& A, Index block_dim) {
  const Index n = A.nrows;
  const Index k = std::max<Index>(block_dim, 1);  // the caller checks that k divides n
  if (A.dist) {
    // Valid across processes too (dist/dist_coloring.h); collective.
    Coloring c;
    c.color = A.dist->color_rows(A, k, &c.num_colors);
    group_rows(c);
    return c;
  }
  // Node-level pattern: node I's neighbours are the nodes of the columns of
  // its k rows (columns beyond n, a distributed matrix's ghosts, are not
  // coloured here), and, when the pattern is not symmetric, the nodes J
  // with a_JI != 0.
  // The smallest work memory that gives the colouring: none beyond the
  // colours for a symmetric pattern (every matrix of a hierarchy built from
  // one), 8 bytes a node up to 64 colours, else the transposed pattern.
  std::vector<int> node_color;
  if (pattern_is_symmetric(A)) {
    node_color = color_nodes_scanned(A, k, false);
  } else {
    node_color = color_nodes_masked(A, k);
    if (node_color.empty() && n > 0) node_color = color_nodes_scanned(A, k, true);
  }
  Coloring c;
  for (int q : node_color) c.num_colors = std::max(c.num_colors, q + 1);
  if (k == 1) {
    c.color = std::move(node_color);
  } else {
    c.color.resize(n);
    for (Index i = 0; i < n; ++i) c.color[i] = node_color[i / k];
  }
  group_rows(c);
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
