#include "amg/aggregation/standard_aggregation.h"

#include <cmath>

namespace jaxamg::aggregation {

template <class T>
std::vector<char> symmetric_strength(const CsrMatrix<T>& G, double theta) {
  std::vector<double> d(G.nrows, 0.0);
  for (Index i = 0; i < G.nrows; ++i) {
    for (Index p = G.row_ptr[i]; p < G.row_ptr[i + 1]; ++p) {
      if (G.col[p] == i) d[i] = std::abs(static_cast<double>(G.val[p]));
    }
  }
  std::vector<char> strong(G.nnz(), 0);
#pragma omp parallel for schedule(static) if (G.nrows > 4096)
  for (Index i = 0; i < G.nrows; ++i) {
    for (Index p = G.row_ptr[i]; p < G.row_ptr[i + 1]; ++p) {
      const Index j = G.col[p];
      const double g = std::abs(static_cast<double>(G.val[p]));
      // theta = 0 still drops explicitly stored zeros: they couple nothing.
      strong[p] = j != i && g > 0.0 && g >= theta * std::sqrt(d[i] * d[j]);
    }
  }
  return strong;
}

template <class T>
NodeAggregates standard_aggregation(const CsrMatrix<T>& G, const std::vector<char>& strong) {
  const Index n = G.nrows;
  NodeAggregates agg;
  agg.of.assign(n, -1);
  // Pass 1: roots with an entirely free strong neighbourhood.
  for (Index i = 0; i < n; ++i) {
    if (agg.of[i] >= 0) continue;
    bool has_neighbour = false, free = true;
    for (Index p = G.row_ptr[i]; p < G.row_ptr[i + 1] && free; ++p) {
      if (!strong[p]) continue;
      has_neighbour = true;
      free = agg.of[G.col[p]] < 0;
    }
    if (!has_neighbour || !free) continue;
    const Index a = agg.count++;
    agg.of[i] = a;
    for (Index p = G.row_ptr[i]; p < G.row_ptr[i + 1]; ++p) {
      if (strong[p]) agg.of[G.col[p]] = a;
    }
  }
  // Pass 2: attach the rest to a neighbouring aggregate of pass 1 (reading
  // the pass-1 labels only, so the result does not depend on the order in
  // which pass 2 visits nodes).
  const std::vector<Index> first = agg.of;
  for (Index i = 0; i < n; ++i) {
    if (first[i] >= 0) continue;
    for (Index p = G.row_ptr[i]; p < G.row_ptr[i + 1]; ++p) {
      if (strong[p] && first[G.col[p]] >= 0) {
        agg.of[i] = first[G.col[p]];
        break;
      }
    }
  }
  return agg;
}

template std::vector<char> symmetric_strength(const CsrMatrix<float>&, double);
template std::vector<char> symmetric_strength(const CsrMatrix<double>&, double);
template NodeAggregates standard_aggregation(const CsrMatrix<float>&, const std::vector<char>&);
template NodeAggregates standard_aggregation(const CsrMatrix<double>&, const std::vector<char>&);

}  // namespace jaxamg::aggregation
