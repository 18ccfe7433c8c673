// The coarse matrix of unsmoothed aggregation without a general SpGEMM:
// with P the aggregate indicator, (P^T A P)[I, J] is the sum of a_ij over
// i in I, j in J. One coarse row per aggregate, built from its members' rows.
//
// symbolic() fixes A_c's pattern and records, for every entry of A, the
// position of A_c that it adds to; numeric() is then a single pass of
// scattered additions, which is all a resetup with new values needs.
#pragma once
#include <vector>

#include "amg/aggregation/aggregates.h"
#include "core/csr_matrix.h"

namespace jaxamg::aggregation {

template <class T>
class AggregateGalerkin {
 public:
  // Pattern of A_c (sorted columns, diagonal positions) for A's pattern.
  void symbolic(const CsrMatrix<T>& A, const Aggregates& agg, CsrMatrix<T>& Ac);
  // Values of A_c; A must have the pattern given to symbolic() and Ac the
  // pattern symbolic() produced.
  void numeric(const CsrMatrix<T>& A, const Aggregates& agg, CsrMatrix<T>& Ac) const;
  // True if symbolic() ran for a matrix of A's size and number of entries.
  bool ready_for(const CsrMatrix<T>& A) const {
    return ready_ && rows_ == A.nrows && static_cast<Index>(position_.size()) == A.nnz();
  }
  // True if Ac has the pattern symbolic() produced (size checks only).
  bool matches_coarse(const CsrMatrix<T>& Ac) const {
    return ready_ && Ac.nrows == coarse_rows_ && Ac.nnz() == coarse_nnz_ &&
           static_cast<Index>(Ac.val.size()) == coarse_nnz_;
  }
  void clear() { ready_ = false; position_.clear(); }

 private:
  bool ready_ = false;
  Index rows_ = 0;
  Index coarse_rows_ = 0;
  Index coarse_nnz_ = 0;
  std::vector<Index> position_;  // nnz(A): index into Ac.val
};

// symbolic + numeric in one call (used between MULTI_PAIRWISE passes).
template <class T>
CsrMatrix<T> aggregate_galerkin(const CsrMatrix<T>& A, const Aggregates& agg);

}  // namespace jaxamg::aggregation
