#include "amg/aggregation/near_nullspace_aggregation.h"

#include <chrono>
#include <string>

#include "amg/aggregation/prolongator_smoothing.h"
#include "core/error.h"

namespace jaxamg::aggregation {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The default near null space of a k-block level: component c of every node
// is one, the others zero (k vectors).
NearNullspace unit_components(Index n, Index k) {
  NearNullspace B;
  B.rows = n;
  B.cols = k;
  B.val.assign(static_cast<std::size_t>(n) * k, 0.0);
  for (Index i = 0; i < n; ++i) B.val[static_cast<std::size_t>(i) * k + i % k] = 1.0;
  return B;
}

}  // namespace

template <class T>
bool NearNullspaceAggregation<T>::set_near_nullspace(const NearNullspace& B) {
  B_ = B;
  return true;
}

template <class T>
NodeAggregates NearNullspaceAggregation<T>::select(const CsrMatrix<T>& A) const {
  const CsrMatrix<T> G = A.block_dim > 1 ? block_node_matrix(A) : CsrMatrix<T>();
  const CsrMatrix<T>& nodes = A.block_dim > 1 ? G : A;
  if (opt_.standard) {
    return standard_aggregation(nodes, symmetric_strength(nodes, opt_.strength_threshold));
  }
  CsrMatrix<T> scalar = nodes;
  scalar.block_dim = 1;
  const Aggregates agg = select_aggregates(scalar, opt_.pairwise);
  NodeAggregates out;
  out.count = agg.count;
  out.of = agg.of;
  return out;
}

template <class T>
void NearNullspaceAggregation<T>::build(const CsrMatrix<T>& A, TransferOperators<T>& ops) {
  const Index n = A.nrows;
  const Index k = A.block_dim;
  if (k < 1 || n % k != 0) {
    throw InvalidInput("smoothed aggregation: block_dim = " + std::to_string(k) +
                       " does not divide the " + std::to_string(n) + " rows of the level");
  }
  if (B_.empty()) B_ = unit_components(n, k);
  if (B_.rows != n) {
    throw InvalidInput("smoothed aggregation: the near null space has " + std::to_string(B_.rows) +
                       " rows but the matrix has " + std::to_string(n) +
                       "; pass one row per unknown");
  }
  double t0 = now_seconds();
  aggregates_ = select(A);
  double t1 = now_seconds();
  seconds_aggregate_ = t1 - t0;
  built_ = true;
  built_nnz_ = A.nnz();
  tentative_ = TentativeProlongator();
  if (aggregates_.count == 0) {
    ops.P = CsrMatrix<T>(n, 0);
    ops.R = CsrMatrix<T>(0, n);
    return;
  }
  tentative_ = tentative_prolongator(aggregates_.of, aggregates_.count, k, B_, P_tent_);
  t0 = now_seconds();
  seconds_tentative_ = t0 - t1;
  ops.R = CsrMatrix<T>();
  omega_ = smooth_prolongator(A, P_tent_, ops.P);
  seconds_smooth_ = now_seconds() - t0;
}

template <class T>
void NearNullspaceAggregation<T>::rebuild(const CsrMatrix<T>& A, TransferOperators<T>& ops) {
  if (!built_) {
    build(A, ops);
    return;
  }
  if (A.nrows != static_cast<Index>(aggregates_.of.size()) * A.block_dim ||
      A.nnz() != built_nnz_) {
    throw InvalidInput("smoothed aggregation resetup: A has " + std::to_string(A.nrows) +
                       " rows and " + std::to_string(A.nnz()) +
                       " entries, not the pattern the aggregates were built for; run a full "
                       "setup");
  }
  seconds_aggregate_ = seconds_tentative_ = 0;
  if (aggregates_.count == 0) return;
  const double t0 = now_seconds();
  ops.R = CsrMatrix<T>();
  omega_ = smooth_prolongator(A, P_tent_, ops.P);
  seconds_smooth_ = now_seconds() - t0;
}

template <class T>
std::vector<std::pair<std::string, double>> NearNullspaceAggregation<T>::phase_seconds() const {
  return {{"aggregation", seconds_aggregate_},
          {"tentative", seconds_tentative_},
          {"smoothing", seconds_smooth_}};
}

template class NearNullspaceAggregation<float>;
template class NearNullspaceAggregation<double>;

}  // namespace jaxamg::aggregation
