#include "amg/aggregation/aggregate_galerkin.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.h"

namespace jaxamg::aggregation {

namespace {
constexpr Index kParallelMin = 2048;  // coarse rows
}

template <class T>
void AggregateGalerkin<T>::symbolic(const CsrMatrix<T>& A, const Aggregates& agg,
                                    CsrMatrix<T>& Ac) {
  if (A.nrows != agg.n || A.ncols != agg.n) {
    throw InvalidInput("aggregate Galerkin product: A is " + std::to_string(A.nrows) + " x " +
                       std::to_string(A.ncols) + " but the aggregates cover " +
                       std::to_string(agg.n) + " nodes; build the aggregates from this matrix");
  }
  const Index nc = agg.count;
  Ac = CsrMatrix<T>(nc, nc);
  position_.resize(A.nnz());
  // Pass 1 counts the distinct coarse columns of each coarse row; pass 2
  // lists and sorts them and maps every fine entry to its coarse position.
  // slot[J] is a per-thread scratch array, -1 outside the current row.
#pragma omp parallel if (nc > kParallelMin)
  {
    std::vector<Index> slot(nc, -1);
    std::vector<Index> seen;
#pragma omp for schedule(static)
    for (Index I = 0; I < nc; ++I) {
      seen.clear();
      for (Index m = agg.ptr[I]; m < agg.ptr[I + 1]; ++m) {
        const Index i = agg.members[m];
        for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
          const Index J = agg.of[A.col[k]];
          if (slot[J] < 0) {
            slot[J] = 0;
            seen.push_back(J);
          }
        }
      }
      Ac.row_ptr[I + 1] = static_cast<Index>(seen.size());
      for (Index J : seen) slot[J] = -1;
    }
  }
  std::partial_sum(Ac.row_ptr.begin(), Ac.row_ptr.end(), Ac.row_ptr.begin());
  Ac.col.resize(Ac.row_ptr[nc]);
  Ac.val.assign(Ac.row_ptr[nc], T(0));
#pragma omp parallel if (nc > kParallelMin)
  {
    std::vector<Index> slot(nc, -1);
#pragma omp for schedule(static)
    for (Index I = 0; I < nc; ++I) {
      const Index start = Ac.row_ptr[I], end = Ac.row_ptr[I + 1];
      Index len = 0;
      for (Index m = agg.ptr[I]; m < agg.ptr[I + 1]; ++m) {
        const Index i = agg.members[m];
        for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
          const Index J = agg.of[A.col[k]];
          if (slot[J] < 0) {
            slot[J] = 0;
            Ac.col[start + len++] = J;
          }
        }
      }
      std::sort(Ac.col.begin() + start, Ac.col.begin() + end);
      for (Index p = start; p < end; ++p) slot[Ac.col[p]] = p;
      for (Index m = agg.ptr[I]; m < agg.ptr[I + 1]; ++m) {
        const Index i = agg.members[m];
        for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) position_[k] = slot[agg.of[A.col[k]]];
      }
      for (Index p = start; p < end; ++p) slot[Ac.col[p]] = -1;
    }
  }
  Ac.find_diagonal();
  rows_ = A.nrows;
  coarse_rows_ = nc;
  coarse_nnz_ = Ac.nnz();
  ready_ = true;
}

template <class T>
void AggregateGalerkin<T>::numeric(const CsrMatrix<T>& A, const Aggregates& agg,
                                   CsrMatrix<T>& Ac) const {
  if (!ready_for(A) || !matches_coarse(Ac)) {
    throw InvalidInput("aggregate Galerkin product: A has " + std::to_string(A.nrows) +
                       " rows and " + std::to_string(A.nnz()) +
                       " entries, not the pattern the coarse matrix was built for (" +
                       std::to_string(rows_) + " rows, " + std::to_string(position_.size()) +
                       " entries); run a full setup for a new sparsity pattern");
  }
  const Index nc = agg.count;
  // Every entry a coarse row receives comes from the rows of its own
  // members, so rows are independent and each sums in a fixed order.
#pragma omp parallel for schedule(static) if (nc > kParallelMin)
  for (Index I = 0; I < nc; ++I) {
    for (Index p = Ac.row_ptr[I]; p < Ac.row_ptr[I + 1]; ++p) Ac.val[p] = T(0);
    for (Index m = agg.ptr[I]; m < agg.ptr[I + 1]; ++m) {
      const Index i = agg.members[m];
      for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) Ac.val[position_[k]] += A.val[k];
    }
  }
}

template <class T>
CsrMatrix<T> aggregate_galerkin(const CsrMatrix<T>& A, const Aggregates& agg) {
  AggregateGalerkin<T> g;
  CsrMatrix<T> Ac;
  g.symbolic(A, agg, Ac);
  g.numeric(A, agg, Ac);
  return Ac;
}

template class AggregateGalerkin<float>;
template class AggregateGalerkin<double>;
template CsrMatrix<float> aggregate_galerkin(const CsrMatrix<float>&, const Aggregates&);
template CsrMatrix<double> aggregate_galerkin(const CsrMatrix<double>&, const Aggregates&);

}  // namespace jaxamg::aggregation
