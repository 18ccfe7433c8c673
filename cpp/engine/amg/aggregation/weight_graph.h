// The symmetric weighted graph that pairwise matching works on: one edge per
// pair i != j with a_ij or a_ji stored, weighted by AmgX's weight_formula.
#pragma once
#include <vector>

#include "amg/aggregation/aggregates.h"
#include "core/csr_matrix.h"

namespace jaxamg::aggregation {

struct WeightGraph {
  Index n = 0;
  std::vector<Index> ptr{0};  // n + 1
  std::vector<Index> adj;     // neighbours, ascending, no self loops
  std::vector<double> w;      // w[k] of edge (i, adj[k]); bitwise w_ij == w_ji
};

// weight_formula 0: w_ij = 0.5 (|a_ij| + |a_ji|) / max(|a_ii|, |a_jj|)
//                1: w_ij = -0.5 (a_ij / a_ii + a_ji / a_jj)
// Formula 1 needs every diagonal nonzero (throws InvalidInput naming the row).
// With formula 0 an edge between two rows without diagonal gets weight 0.
template <class T>
WeightGraph edge_weight_graph(const CsrMatrix<T>& A, int weight_formula);

// The graph of aggregates: w_IJ = sum of w_ij over i in I, j in J (I != J).
// The SIZE_4 / SIZE_8 selectors match again on this graph.
WeightGraph collapse(const WeightGraph& g, const Aggregates& agg);

}  // namespace jaxamg::aggregation
