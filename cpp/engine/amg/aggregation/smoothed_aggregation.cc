#include "amg/aggregation/smoothed_aggregation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/error.h"

namespace jaxamg::aggregation {

namespace {

constexpr Index kParallelMin = 4096;

template <class T>
std::vector<double> diagonal_of(const CsrMatrix<T>& A) {
  std::vector<double> d(A.nrows, 0.0);
#pragma omp parallel for schedule(static) if (A.nrows > kParallelMin)
  for (Index i = 0; i < A.nrows; ++i) {
    const auto first = A.col.begin() + A.row_ptr[i];
    const auto last = A.col.begin() + A.row_ptr[i + 1];
    const auto it = std::lower_bound(first, last, i);
    if (it != last && *it == i) d[i] = static_cast<double>(A.val[it - A.col.begin()]);
  }
  return d;
}

}  // namespace

template <class T>
void SmoothedAggregationCoarsening<T>::build(const CsrMatrix<T>& A, TransferOperators<T>& ops) {
  aggregates_ = select_aggregates(A, opt_);
  built_ = true;
  built_nnz_ = A.nnz();
  const Index n = A.nrows;
  if (aggregates_.count == n) {
    ops.P = CsrMatrix<T>(n, 0);
    ops.R = CsrMatrix<T>(0, n);
    return;
  }
  // Classify once: a resetup keeps this, so P keeps its pattern.
  const std::vector<double> d = diagonal_of(A);
  const double eps2 = eps_ * eps_;
  strong_.assign(A.nnz(), 0);
#pragma omp parallel for schedule(static) if (n > kParallelMin)
  for (Index i = 0; i < n; ++i) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const Index j = A.col[k];
      const double a = static_cast<double>(A.val[k]);
      strong_[k] = j != i && a * a > eps2 * std::abs(d[i] * d[j]);
    }
  }
  smooth(A, ops, false);
}

template <class T>
void SmoothedAggregationCoarsening<T>::rebuild(const CsrMatrix<T>& A, TransferOperators<T>& ops) {
  if (!built_) {
    build(A, ops);
    return;
  }
  if (A.nrows != aggregates_.n || A.nnz() != built_nnz_) {
    throw InvalidInput("smoothed aggregation resetup: A has " + std::to_string(A.nrows) +
                       " rows and " + std::to_string(A.nnz()) +
                       " entries but the aggregates were built for " +
                       std::to_string(aggregates_.n) + " rows and " + std::to_string(built_nnz_) +
                       " entries; a resetup needs the same sparsity pattern, run a full setup");
  }
  if (aggregates_.count == aggregates_.n) return;
  const bool same = ops.P.nrows == aggregates_.n && ops.P.ncols == aggregates_.count;
  smooth(A, ops, same);
}

template <class T>
void SmoothedAggregationCoarsening<T>::smooth(const CsrMatrix<T>& A, TransferOperators<T>& ops,
                                              bool same_pattern) {
  const Index n = A.nrows;
  const std::vector<Index>& of = aggregates_.of;
  const std::vector<double> d = diagonal_of(A);

  // Diagonal of A_F (weak entries lumped in) and Gershgorin's bound on
  // rho(D_F^-1 A_F). The bound is a max, so it does not depend on threads.
  std::vector<double> dF(n);
  double rho = 0;
  Index bad_row = -1;
#pragma omp parallel for schedule(static) reduction(max : rho, bad_row) if (n > kParallelMin)
  for (Index i = 0; i < n; ++i) {
    double lumped = d[i], strong_sum = 0, scale = std::abs(d[i]);
    bool any_strong = false;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (A.col[k] == i) continue;
      const double a = static_cast<double>(A.val[k]);
      if (strong_[k]) {
        strong_sum += std::abs(a);
        any_strong = true;
      } else {
        lumped += a;
        scale += std::abs(a);
      }
    }
    // A zero row sum (the constant in the null space) cancels to rounding
    // level in `lumped`: treat that as the exact zero it stands for.
    const double row_len = static_cast<double>(A.row_ptr[i + 1] - A.row_ptr[i]);
    if (std::abs(lumped) <= row_len * std::numeric_limits<T>::epsilon() * scale) lumped = 0.0;
    dF[i] = lumped;
    if (lumped != 0.0) {
      rho = std::max(rho, 1.0 + strong_sum / std::abs(lumped));
    } else if (any_strong) {
      bad_row = std::max(bad_row, i);
    }
    // A row of A_F that is entirely zero (only weak couplings that cancel
    // the diagonal) leaves its row of P unsmoothed.
  }
  if (bad_row >= 0) {
    throw InvalidInput("smoothed aggregation: row " + std::to_string(bad_row) +
                       " of the filtered matrix has a zero diagonal (diagonal plus weak "
                       "couplings sum to 0) but strong couplings, so the Jacobi smoothing of P "
                       "is undefined; set x_smoothed_aggregation to 0 for this matrix");
  }
  if (rho == 0) rho = 1;  // every row of A_F is zero: P stays the indicator
  omega_ = (4.0 / 3.0) / rho;

  CsrMatrix<T>& P = ops.P;
  if (!same_pattern) {
    // Row i of P couples to i's aggregate and to the aggregates of its strong
    // neighbours.
    P = CsrMatrix<T>(n, aggregates_.count);
    // Row i's columns, sorted and without repeats, into js.
    const auto columns = [&](Index i, std::vector<Index>& js) {
      js.assign(1, of[i]);
      for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
        if (strong_[k]) js.push_back(of[A.col[k]]);
      std::sort(js.begin(), js.end());
      js.erase(std::unique(js.begin(), js.end()), js.end());
    };
#pragma omp parallel if (n > kParallelMin)
    {
      std::vector<Index> js;
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        columns(i, js);
        P.row_ptr[i + 1] = static_cast<Index>(js.size());
      }
    }
    std::partial_sum(P.row_ptr.begin(), P.row_ptr.end(), P.row_ptr.begin());
    P.col.resize(P.row_ptr[n]);
    P.val.resize(P.row_ptr[n]);
#pragma omp parallel if (n > kParallelMin)
    {
      std::vector<Index> js;
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        columns(i, js);
        std::copy(js.begin(), js.end(), P.col.begin() + P.row_ptr[i]);
      }
    }
  }

  // Values: (P_tent - omega D_F^-1 A_F P_tent)_iJ, summed in row order.
#pragma omp parallel if (n > kParallelMin)
  {
    std::vector<double> v;
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) {
      const Index start = P.row_ptr[i], end = P.row_ptr[i + 1];
      const auto slot = [&](Index J) {
        return static_cast<Index>(
            std::lower_bound(P.col.begin() + start, P.col.begin() + end, J) - P.col.begin() - start);
      };
      v.assign(end - start, 0.0);
      v[slot(of[i])] += dF[i] != 0.0 ? 1.0 - omega_ : 1.0;  // identity and A_F's diagonal
      for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
        if (strong_[k]) v[slot(of[A.col[k]])] -= omega_ * static_cast<double>(A.val[k]) / dF[i];
      }
      for (Index p = start; p < end; ++p) P.val[p] = static_cast<T>(v[p - start]);
    }
  }
  ops.R = transpose(P);
}

template class SmoothedAggregationCoarsening<float>;
template class SmoothedAggregationCoarsening<double>;

}  // namespace jaxamg::aggregation
