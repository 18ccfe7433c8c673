// Unsmoothed aggregation AMG, as AmgX's AGGREGATION algorithm: aggregates
// from repeated pairwise matching, P the piecewise-constant aggregate
// indicator, R = P^T, A_c summed per aggregate pair (no SpGEMM).
//
// Selectors (AmgX names):
//   SIZE_2          one pairwise pass on A's weight graph
//   SIZE_4, SIZE_8  2 or 3 passes; each later pass matches the aggregates of
//                   the previous one on the collapsed graph (weights summed)
//   MULTI_PAIRWISE  aggregation_passes passes; each later pass matches on the
//                   weights of the Galerkin matrix of the previous aggregates
//   DUMMY           consecutive rows in groups of aggregate_size (testing)
#pragma once
#include "amg/aggregation/aggregate_galerkin.h"
#include "amg/aggregation/aggregates.h"
#include "amg/aggregation/pairwise_matching.h"
#include "amg/coarsening.h"

namespace jaxamg::aggregation {

enum class SelectorKind { kSize2, kSize4, kSize8, kMultiPairwise, kDummy };

struct AggregationOptions {
  SelectorKind selector = SelectorKind::kSize2;
  int passes = 1;          // pairwise passes (from the selector or aggregation_passes)
  int weight_formula = 0;  // 0 or 1, see weight_graph.h
  int dummy_size = 2;      // aggregate_size for DUMMY
  MatchingOptions matching;
};

// Wall-clock seconds of the phases of one aggregate selection.
struct SelectionTimings {
  double weights = 0;   // edge weights of A (and of MULTI_PAIRWISE's Galerkin matrices)
  double matching = 0;  // handshake rounds and merging, all passes
  double coarse_graphs = 0;  // collapsed graphs / Galerkin matrices between passes
};

// Aggregates of A's nodes by the selector in `opt` (deterministic: the same
// for any thread count). With A.block_dim = k > 1 the selector runs on the
// block graph (block_node_matrix) and the result is expanded so that scalar
// unknown i*k + c lies in aggregate I*k + c: every component keeps its own
// coarse unknown and P = P_node (x) I_k.
template <class T>
Aggregates select_aggregates(const CsrMatrix<T>& A, const AggregationOptions& opt,
                             SelectionTimings* timings = nullptr);

// The node matrix of a block matrix (block_dim k): entry (I, J) is the
// Frobenius norm of block (I, J), negated off the diagonal. Throws
// InvalidInput if k does not divide the size.
template <class T>
CsrMatrix<T> block_node_matrix(const CsrMatrix<T>& A);

// Node aggregates -> scalar aggregates of the k interleaved components.
Aggregates expand_block_aggregates(const Aggregates& nodes, Index k);

template <class T>
class AggregationCoarsening : public Coarsening<T> {
 public:
  explicit AggregationCoarsening(AggregationOptions opt) : opt_(opt) {}

  // Chooses aggregates; P gets 0 columns when no two nodes could be joined.
  void build(const CsrMatrix<T>& A, TransferOperators<T>& ops) override;
  // Keeps the aggregates (and A_c's pattern); P and R do not depend on values.
  void rebuild(const CsrMatrix<T>& A, TransferOperators<T>& ops) override;
  bool builds_coarse_matrix() const override { return true; }
  // A_c = P^T A P by aggregate reduction; the pattern is computed once per
  // build() and reused by every later call on a matrix with the same pattern.
  void coarse_matrix(const CsrMatrix<T>& A, const TransferOperators<T>& ops,
                     CsrMatrix<T>& Ac) override;

  const Aggregates& aggregates() const { return aggregates_; }
  const AggregationOptions& options() const { return opt_; }
  // weights, matching, coarse graphs, transfer (of the last build).
  std::vector<std::pair<std::string, double>> phase_seconds() const override;

 private:
  AggregationOptions opt_;
  bool built_ = false;
  Index built_nnz_ = 0;
  Aggregates aggregates_;
  AggregateGalerkin<T> galerkin_;
  SelectionTimings timings_;
  double transfer_seconds_ = 0;
};

}  // namespace jaxamg::aggregation
