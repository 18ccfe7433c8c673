#include "amg/aggregation/aggregation_coarsening.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "amg/aggregation/weight_graph.h"
#include "core/error.h"
#include "core/node_cursor.h"

namespace jaxamg::aggregation {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Aggregates dummy_aggregates(Index n, int size) {
  Aggregates agg;
  agg.n = n;
  agg.count = n == 0 ? 0 : (n - 1) / size + 1;
  agg.of.resize(n);
  for (Index i = 0; i < n; ++i) agg.of[i] = i / size;
  list_members(agg);
  return agg;
}

}  // namespace

template <class T>
CsrMatrix<T> block_node_matrix(const CsrMatrix<T>& A) {
  const Index k = A.block_dim;
  if (k < 1 || A.nrows % k != 0 || A.ncols != A.nrows) {
    throw InvalidInput("aggregation: a " + std::to_string(A.nrows) + " x " +
                       std::to_string(A.ncols) + " matrix cannot have block_dim = " +
                       std::to_string(k) + "; block_dim must divide the (square) size");
  }
  const Index nb = A.nrows / k;
  CsrMatrix<T> G(nb, nb);
  // Squared Frobenius norms of the blocks of one block row, accumulated in a
  // dense scatter keyed by block column.
  std::vector<double> acc(nb, 0.0);
  std::vector<Index> mark(nb, -1);
  std::vector<Index> cols;
  NodeCursor node_of(k);
  for (Index I = 0; I < nb; ++I) {
    cols.clear();
    for (Index r = I * k; r < (I + 1) * k; ++r) {
      for (Index p = A.row_ptr[r]; p < A.row_ptr[r + 1]; ++p) {
        const Index J = node_of(A.col[p]);
        if (mark[J] != I) {
          mark[J] = I;
          acc[J] = 0.0;
          cols.push_back(J);
        }
        const double v = static_cast<double>(A.val[p]);
        acc[J] += v * v;
      }
    }
    std::sort(cols.begin(), cols.end());
    for (Index J : cols) {
      const double norm = std::sqrt(acc[J]);
      G.col.push_back(J);
      // Off-diagonal blocks enter negated, so that both weight formulas see a
      // positive coupling (formula 1 reads -g_IJ / g_II).
      G.val.push_back(static_cast<T>(J == I ? norm : -norm));
    }
    G.row_ptr[I + 1] = static_cast<Index>(G.col.size());
  }
  G.find_diagonal();
  return G;
}

Aggregates expand_block_aggregates(const Aggregates& nodes, Index k) {
  Aggregates agg;
  agg.n = nodes.n * k;
  agg.count = nodes.count * k;
  agg.of.resize(agg.n);
  for (Index i = 0; i < nodes.n; ++i) {
    for (Index c = 0; c < k; ++c) agg.of[i * k + c] = nodes.of[i] * k + c;
  }
  list_members(agg);
  return agg;
}

namespace {

template <class T>
Aggregates select_scalar_aggregates(const CsrMatrix<T>& A, const AggregationOptions& opt,
                                    SelectionTimings& t) {
  if (opt.selector == SelectorKind::kDummy) return dummy_aggregates(A.nrows, opt.dummy_size);

  double t0 = now_seconds();
  WeightGraph g = edge_weight_graph(A, opt.weight_formula);
  double t1 = now_seconds();
  t.weights += t1 - t0;
  Aggregates total = pairwise_aggregates(g, opt.matching);
  t0 = now_seconds();
  t.matching += t0 - t1;
  Aggregates pass = total;
  CsrMatrix<T> Ac;  // MULTI_PAIRWISE: Galerkin matrix of the aggregates so far
  const CsrMatrix<T>* current = &A;
  for (int p = 1; p < opt.passes; ++p) {
    if (pass.count == pass.n) break;  // the last pass joined nothing: a fixed point
    t0 = now_seconds();
    if (opt.selector == SelectorKind::kMultiPairwise) {
      Ac = aggregate_galerkin(*current, pass);
      current = &Ac;
      t1 = now_seconds();
      t.coarse_graphs += t1 - t0;
      g = edge_weight_graph(Ac, opt.weight_formula);
      t.weights += now_seconds() - t1;
    } else {
      g = collapse(g, pass);
      t.coarse_graphs += now_seconds() - t0;
    }
    t0 = now_seconds();
    pass = pairwise_aggregates(g, opt.matching);
    total = compose(total, pass);
    t.matching += now_seconds() - t0;
  }
  return total;
}

}  // namespace

template <class T>
Aggregates select_aggregates(const CsrMatrix<T>& A, const AggregationOptions& opt,
                             SelectionTimings* timings) {
  SelectionTimings local;
  SelectionTimings& t = timings ? *timings : local;
  t = SelectionTimings();
  if (A.block_dim <= 1) return select_scalar_aggregates(A, opt, t);
  // Block matrix: aggregate the nodes on the graph of block norms, then give
  // every component of an aggregate its own coarse unknown (P = P_node (x) I_k).
  const double t0 = now_seconds();
  const CsrMatrix<T> G = block_node_matrix(A);
  t.weights += now_seconds() - t0;
  return expand_block_aggregates(select_scalar_aggregates(G, opt, t), A.block_dim);
}

template <class T>
void AggregationCoarsening<T>::build(const CsrMatrix<T>& A, TransferOperators<T>& ops) {
  aggregates_ = select_aggregates(A, opt_, &timings_);
  galerkin_.clear();
  built_ = true;
  built_nnz_ = A.nnz();
  const double t0 = now_seconds();
  if (aggregates_.count == aggregates_.n) {
    // Every aggregate is a single node: the level would not be coarser.
    ops.P = CsrMatrix<T>(A.nrows, 0);
    ops.R = CsrMatrix<T>(0, A.nrows);
  } else {
    piecewise_constant_transfer(aggregates_, ops);
  }
  transfer_seconds_ = now_seconds() - t0;
}

template <class T>
void AggregationCoarsening<T>::rebuild(const CsrMatrix<T>& A, TransferOperators<T>& ops) {
  if (!built_) {
    build(A, ops);
    return;
  }
  if (A.nrows != aggregates_.n || A.nnz() != built_nnz_) {
    throw InvalidInput("aggregation resetup: A has " + std::to_string(A.nrows) + " rows and " +
                       std::to_string(A.nnz()) + " entries but the aggregates were built for " +
                       std::to_string(aggregates_.n) + " rows and " + std::to_string(built_nnz_) +
                       " entries; a resetup needs the same sparsity pattern, run a full setup");
  }
  timings_ = SelectionTimings();
  transfer_seconds_ = 0;
  if (aggregates_.count == aggregates_.n) return;
  if (ops.P.nrows != aggregates_.n || ops.P.ncols != aggregates_.count ||
      ops.R.nrows != aggregates_.count) {
    piecewise_constant_transfer(aggregates_, ops);
  }
}

template <class T>
void AggregationCoarsening<T>::coarse_matrix(const CsrMatrix<T>& A,
                                             const TransferOperators<T>& /*ops*/,
                                             CsrMatrix<T>& Ac) {
  if (!built_) {
    throw SetupError("aggregation: coarse_matrix() called before build(); build the level first");
  }
  if (!galerkin_.ready_for(A) || !galerkin_.matches_coarse(Ac)) galerkin_.symbolic(A, aggregates_, Ac);
  galerkin_.numeric(A, aggregates_, Ac);
  Ac.block_dim = A.block_dim;  // P = P_node (x) I_k keeps the coarse matrix k-blocked
}

template <class T>
std::vector<std::pair<std::string, double>> AggregationCoarsening<T>::phase_seconds() const {
  return {{"weights", timings_.weights},
          {"matching", timings_.matching},
          {"coarse graphs", timings_.coarse_graphs},
          {"transfer", transfer_seconds_}};
}

template Aggregates select_aggregates(const CsrMatrix<float>&, const AggregationOptions&,
                                     SelectionTimings*);
template Aggregates select_aggregates(const CsrMatrix<double>&, const AggregationOptions&,
                                      SelectionTimings*);
template CsrMatrix<float> block_node_matrix(const CsrMatrix<float>&);
template CsrMatrix<double> block_node_matrix(const CsrMatrix<double>&);
template class AggregationCoarsening<float>;
template class AggregationCoarsening<double>;

}  // namespace jaxamg::aggregation
