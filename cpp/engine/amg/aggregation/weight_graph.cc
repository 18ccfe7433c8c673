#include "amg/aggregation/weight_graph.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.h"

namespace jaxamg::aggregation {

namespace {

constexpr Index kParallelMin = 4096;

template <class T>
double diagonal_entry(const CsrMatrix<T>& A, Index i) {
  const auto first = A.col.begin() + A.row_ptr[i];
  const auto last = A.col.begin() + A.row_ptr[i + 1];
  const auto it = std::lower_bound(first, last, i);
  return (it != last && *it == i) ? static_cast<double>(A.val[it - A.col.begin()]) : 0.0;
}

// Visits the union of row i of A and row i of A^T (both sorted), skipping the
// diagonal: f(j, a_ij, a_ji), with 0 for an entry that is not stored.
template <class T, class F>
void for_each_undirected(const CsrMatrix<T>& A, const CsrMatrix<T>& At, Index i, F&& f) {
  Index p = A.row_ptr[i], pe = A.row_ptr[i + 1];
  Index q = At.row_ptr[i], qe = At.row_ptr[i + 1];
  while (p < pe || q < qe) {
    const Index cp = p < pe ? A.col[p] : A.ncols;
    const Index cq = q < qe ? At.col[q] : A.ncols;
    const Index j = std::min(cp, cq);
    const double aij = cp == j ? static_cast<double>(A.val[p++]) : 0.0;
    const double aji = cq == j ? static_cast<double>(At.val[q++]) : 0.0;
    if (j != i) f(j, aij, aji);
  }
}

}  // namespace

template <class T>
WeightGraph edge_weight_graph(const CsrMatrix<T>& A, int weight_formula) {
  if (weight_formula != 0 && weight_formula != 1) {
    throw ConfigError("weight_formula = " + std::to_string(weight_formula) +
                      " is not defined; use 0 (|a_ij| scaled by the larger diagonal) or 1 "
                      "(-a_ij/a_ii, the M-matrix weight)");
  }
  const Index n = A.nrows;
  if (A.ncols != n) {
    throw InvalidInput("aggregation needs a square matrix, got " + std::to_string(n) + " x " +
                       std::to_string(A.ncols));
  }
  std::vector<double> d(n);
#pragma omp parallel for schedule(static) if (n > kParallelMin)
  for (Index i = 0; i < n; ++i) d[i] = diagonal_entry(A, i);
  if (weight_formula == 1) {
    for (Index i = 0; i < n; ++i) {
      if (d[i] == 0.0) {
        throw InvalidInput("aggregation with weight_formula = 1 divides by the diagonal, but row " +
                           std::to_string(i) +
                           " has a zero or missing diagonal entry; use weight_formula = 0 or "
                           "store a nonzero diagonal");
      }
    }
  }
  const CsrMatrix<T> At = transpose(A);

  WeightGraph g;
  g.n = n;
  g.ptr.assign(static_cast<size_t>(n) + 1, 0);
#pragma omp parallel for schedule(static) if (n > kParallelMin)
  for (Index i = 0; i < n; ++i) {
    Index c = 0;
    for_each_undirected(A, At, i, [&](Index, double, double) { ++c; });
    g.ptr[i + 1] = c;
  }
  std::partial_sum(g.ptr.begin(), g.ptr.end(), g.ptr.begin());
  g.adj.resize(g.ptr[n]);
  g.w.resize(g.ptr[n]);
#pragma omp parallel for schedule(static) if (n > kParallelMin)
  for (Index i = 0; i < n; ++i) {
    Index k = g.ptr[i];
    for_each_undirected(A, At, i, [&](Index j, double aij, double aji) {
      double w;
      if (weight_formula == 0) {
        const double den = std::max(std::abs(d[i]), std::abs(d[j]));
        // Both diagonals zero: no scale to compare against, so the edge
        // is not a matching candidate.
        w = den > 0 ? 0.5 * (std::abs(aij) + std::abs(aji)) / den : 0.0;
      } else {
        w = -0.5 * (aij / d[i] + aji / d[j]);
      }
      g.adj[k] = j;
      g.w[k] = w;
      ++k;
    });
  }
  return g;
}

WeightGraph collapse(const WeightGraph& g, const Aggregates& agg) {
  const Index nc = agg.count;
  WeightGraph c;
  c.n = nc;
  c.ptr.assign(static_cast<size_t>(nc) + 1, 0);
  // Two passes over each aggregate's edges with a per-thread slot array
  // (slot[J] = -1 when J is not yet seen in the current row).
#pragma omp parallel if (nc > kParallelMin)
  {
    std::vector<Index> slot(nc, -1);
    std::vector<Index> seen;
#pragma omp for schedule(static)
    for (Index I = 0; I < nc; ++I) {
      seen.clear();
      for (Index m = agg.ptr[I]; m < agg.ptr[I + 1]; ++m) {
        const Index i = agg.members[m];
        for (Index k = g.ptr[i]; k < g.ptr[i + 1]; ++k) {
          const Index J = agg.of[g.adj[k]];
          if (J != I && slot[J] < 0) {
            slot[J] = 0;
            seen.push_back(J);
          }
        }
      }
      c.ptr[I + 1] = static_cast<Index>(seen.size());
      for (Index J : seen) slot[J] = -1;
    }
  }
  std::partial_sum(c.ptr.begin(), c.ptr.end(), c.ptr.begin());
  c.adj.resize(c.ptr[nc]);
  c.w.assign(c.ptr[nc], 0.0);
#pragma omp parallel if (nc > kParallelMin)
  {
    std::vector<Index> slot(nc, -1);
#pragma omp for schedule(static)
    for (Index I = 0; I < nc; ++I) {
      const Index start = c.ptr[I];
      Index len = 0;
      for (Index m = agg.ptr[I]; m < agg.ptr[I + 1]; ++m) {
        const Index i = agg.members[m];
        for (Index k = g.ptr[i]; k < g.ptr[i + 1]; ++k) {
          const Index J = agg.of[g.adj[k]];
          if (J != I && slot[J] < 0) {
            slot[J] = 0;
            c.adj[start + len++] = J;
          }
        }
      }
      std::sort(c.adj.begin() + start, c.adj.begin() + start + len);
      for (Index p = 0; p < len; ++p) slot[c.adj[start + p]] = start + p;
      // Members ascending, edges ascending: a fixed summation order.
      for (Index m = agg.ptr[I]; m < agg.ptr[I + 1]; ++m) {
        const Index i = agg.members[m];
        for (Index k = g.ptr[i]; k < g.ptr[i + 1]; ++k) {
          const Index J = agg.of[g.adj[k]];
          if (J != I) c.w[slot[J]] += g.w[k];
        }
      }
      for (Index p = 0; p < len; ++p) slot[c.adj[start + p]] = -1;
    }
  }
  // The sums for (I, J) and (J, I) visit the same fine edges in different
  // orders and may differ in the last bit; matching compares an edge's weight
  // from both ends, so make them bitwise equal.
  std::vector<double> sym(c.w.size());
#pragma omp parallel for schedule(static) if (nc > kParallelMin)
  for (Index I = 0; I < nc; ++I) {
    for (Index k = c.ptr[I]; k < c.ptr[I + 1]; ++k) {
      const Index J = c.adj[k];
      const auto first = c.adj.begin() + c.ptr[J];
      const auto last = c.adj.begin() + c.ptr[J + 1];
      const Index kt = static_cast<Index>(std::lower_bound(first, last, I) - c.adj.begin());
      sym[k] = 0.5 * (c.w[k] + c.w[kt]);
    }
  }
  c.w.swap(sym);
  return c;
}

template WeightGraph edge_weight_graph(const CsrMatrix<float>&, int);
template WeightGraph edge_weight_graph(const CsrMatrix<double>&, int);

}  // namespace jaxamg::aggregation
