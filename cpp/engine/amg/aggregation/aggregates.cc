#include "amg/aggregation/aggregates.h"

#include <algorithm>

namespace jaxamg::aggregation {

Index Aggregates::max_size() const {
  Index m = 0;
  for (Index a = 0; a < count; ++a) m = std::max(m, size(a));
  return m;
}

Aggregates aggregates_from_labels(const std::vector<Index>& labels) {
  Aggregates agg;
  agg.n = static_cast<Index>(labels.size());
  // id[l] = number of distinct labels below l: a prefix sum over a flag per
  // label keeps the numbering in label order.
  std::vector<Index> id(static_cast<size_t>(agg.n) + 1, 0);
  for (Index l : labels) id[l] = 1;
  Index running = 0;
  for (Index l = 0; l <= agg.n; ++l) {
    const Index used = id[l];
    id[l] = running;
    running += used;
  }
  agg.count = running;
  agg.of.resize(agg.n);
#pragma omp parallel for schedule(static) if (agg.n > 16384)
  for (Index i = 0; i < agg.n; ++i) agg.of[i] = id[labels[i]];
  list_members(agg);
  return agg;
}

void list_members(Aggregates& agg) {
  agg.ptr.assign(static_cast<size_t>(agg.count) + 1, 0);
  for (Index i = 0; i < agg.n; ++i) ++agg.ptr[agg.of[i] + 1];
  for (Index a = 0; a < agg.count; ++a) agg.ptr[a + 1] += agg.ptr[a];
  std::vector<Index> next(agg.ptr.begin(), agg.ptr.end() - 1);
  agg.members.resize(agg.n);
  for (Index i = 0; i < agg.n; ++i) agg.members[next[agg.of[i]]++] = i;
}

Aggregates compose(const Aggregates& fine, const Aggregates& coarse) {
  Aggregates agg;
  agg.n = fine.n;
  agg.count = coarse.count;
  agg.of.resize(agg.n);
#pragma omp parallel for schedule(static) if (agg.n > 16384)
  for (Index i = 0; i < agg.n; ++i) agg.of[i] = coarse.of[fine.of[i]];
  list_members(agg);
  return agg;
}

template <class T>
void piecewise_constant_transfer(const Aggregates& agg, TransferOperators<T>& ops) {
  CsrMatrix<T>& P = ops.P;
  P = CsrMatrix<T>(agg.n, agg.count);
  P.row_ptr.resize(static_cast<size_t>(agg.n) + 1);
  for (Index i = 0; i <= agg.n; ++i) P.row_ptr[i] = i;
  P.col = agg.of;
  P.val.assign(agg.n, T(1));

  // R = P^T is the member lists themselves: rows of R are aggregates.
  CsrMatrix<T>& R = ops.R;
  R = CsrMatrix<T>(agg.count, agg.n);
  R.row_ptr = agg.ptr;
  R.col = agg.members;
  R.val.assign(agg.n, T(1));
}

template void piecewise_constant_transfer(const Aggregates&, TransferOperators<float>&);
template void piecewise_constant_transfer(const Aggregates&, TransferOperators<double>&);

}  // namespace jaxamg::aggregation
