// Greedy aggregation of distance-1 neighbourhoods on a strength graph (the
// "standard" aggregation of Vanek, Mandel and Brezina, PyAMG's default for
// smoothed aggregation). It yields aggregates of about 3^d nodes on d-dim
// meshes, what smoothed aggregation needs: the smoothed P's stencils overlap
// little, so the operator complexity stays near 1.3-1.6.
//
// Strength is the symmetric measure on a node matrix G (for block_dim k > 1
// the Frobenius norms of the k x k blocks, block_node_matrix):
//   I ~ J strong  iff  |g_IJ| >= theta * sqrt(|g_II| |g_JJ|),  I != J.
// theta defaults to 0 (x_sa_strength_threshold), PyAMG's default for SA:
// on Q1/Hex1 elasticity theta = 0.08 drops the weak corner couplings of the
// 27-point stencil, the 3D aggregates shrink and fray, and PCG needed 27
// iterations on a 24^3 cube instead of 16 (operator complexity 1.46 vs 1.16;
// bench/elasticity.py). A positive theta suits strongly anisotropic problems.
//
// Pass 1: in node order, a node whose strong neighbours are all free becomes
//   the root of an aggregate holding itself and those neighbours.
// Pass 2: every node still free joins the aggregate of one of its strong
//   neighbours (the first aggregated one in column order).
// Nodes without strong neighbours stay unaggregated (label -1): their rows
// of the tentative prolongation are zero and the smoother alone handles them
// (as in PyAMG). Deterministic: serial, in node order.
#pragma once
#include <vector>

#include "core/csr_matrix.h"
#include "core/types.h"

namespace jaxamg::aggregation {

struct NodeAggregates {
  Index count = 0;        // aggregates
  std::vector<Index> of;  // per node: its aggregate, or -1 (unaggregated)
};

// The strong off-diagonal couplings of the node matrix G (pattern only,
// symmetric whenever G's pattern is): strong[p] for every entry p of G.
template <class T>
std::vector<char> symmetric_strength(const CsrMatrix<T>& G, double theta);

// Standard aggregation of G's nodes over the strong entries.
template <class T>
NodeAggregates standard_aggregation(const CsrMatrix<T>& G, const std::vector<char>& strong);

}  // namespace jaxamg::aggregation
