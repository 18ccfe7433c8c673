#include "amg/classical/classical_coarsening.h"

#include <omp.h>

#include <sstream>

#include "amg/classical/interpolation.h"
#include "amg/classical/splitting.h"
#include "amg/classical/transpose.h"
#include "core/error.h"

namespace jaxamg::classical {

template <class T>
void ClassicalCoarsening<T>::build(const CsrMatrix<T>& A, TransferOperators<T>& ops) {
  if (A.block_dim > 1) {  // strength of connection is scalar only (as in AmgX)
    throw ConfigError("algorithm CLASSICAL does not support block_dim = " +
                      std::to_string(A.block_dim) +
                      " (AmgX: Unsupported block size for strong connections); use algorithm "
                      "AGGREGATION for block systems");
  }
  timings_ = {};
  double t0 = omp_get_wtime();
  const std::vector<Index> dpos = diagonal_positions(A);
  // Only the Ruge-Stueben pass of HMIS walks S^T.
  const bool hmis_pass =
      p_.selector == Selector::kHmis || p_.selector == Selector::kAggressiveHmis;
  StrengthGraph S = strength_graph(A, p_.strength, hmis_pass);
  double t1 = omp_get_wtime();
  timings_.strength = t1 - t0;

  switch (p_.selector) {
    case Selector::kPmis:
      cf_.assign(A.nrows, kUndecided);
      pmis(S, p_.seed, cf_);
      break;
    case Selector::kHmis:
      cf_.assign(A.nrows, kUndecided);
      hmis(S, p_.seed, cf_);
      break;
    case Selector::kAggressivePmis:
    case Selector::kAggressiveHmis:
      aggressive_splitting(S, p_.selector == Selector::kAggressiveHmis, p_.seed, cf_,
                           p_.interpolator == Interpolator::kTwoStageD2 ? &cf_first_ : nullptr);
      break;
  }
  if (p_.selector == Selector::kPmis || p_.selector == Selector::kHmis) cf_first_.clear();
  {
    std::vector<Index> numbering;
    n_coarse_ = coarse_numbering(cf_, numbering);
  }
  strong_ = std::move(S.strong);
  S = StrengthGraph();  // the graph itself is not needed any more
  built_rows_ = A.nrows;
  built_nnz_ = A.nnz();
  t0 = omp_get_wtime();
  timings_.selection = t0 - t1;
  interpolate(A, dpos, nullptr, ops);
}

template <class T>
void ClassicalCoarsening<T>::rebuild(const CsrMatrix<T>& A, TransferOperators<T>& ops) {
  if (A.nrows != built_rows_ || A.nnz() != built_nnz_) {
    std::ostringstream os;
    os << "classical coarsening resetup: the matrix has " << A.nrows << " rows and " << A.nnz()
       << " entries but the last setup saw " << built_rows_ << " rows and " << built_nnz_
       << "; a resetup needs the same sparsity, run a full setup instead";
    throw InvalidInput(os.str());
  }
  if (ops.P.nrows != A.nrows || ops.P.ncols != n_coarse_ ||
      static_cast<Index>(ops.P.row_ptr.size()) != A.nrows + 1) {
    std::ostringstream os;
    os << "classical coarsening resetup: P is " << ops.P.nrows << " x " << ops.P.ncols
       << " but the last setup built a " << A.nrows << " x " << n_coarse_
       << " P; pass the transfer operators of that setup, or run a full setup";
    throw InvalidInput(os.str());
  }
  timings_ = {};
  const std::vector<Index> dpos = diagonal_positions(A);
  const CsrMatrix<T> pattern = std::move(ops.P);
  interpolate(A, dpos, &pattern, ops);
}

template <class T>
void ClassicalCoarsening<T>::interpolate(const CsrMatrix<T>& A, const std::vector<Index>& dpos,
                                         const CsrMatrix<T>* pattern,
                                         TransferOperators<T>& ops) {
  const double t0 = omp_get_wtime();
  // The numbering is formed again here rather than kept between setups.
  std::vector<Index> coarse_index;
  coarse_numbering(cf_, coarse_index);
  const InterpolationInput<T> in{A, dpos, strong_, cf_, coarse_index, n_coarse_};
  switch (p_.interpolator) {
    case Interpolator::kD1:
      direct_interpolation(in, p_.truncation, pattern, ops.P);
      break;
    case Interpolator::kD2:
      extended_i_interpolation(in, p_.truncation, pattern, ops.P);
      break;
    case Interpolator::kMultipass:
      multipass_interpolation(in, p_.truncation, pattern, ops.P);
      break;
    case Interpolator::kTwoStageD2:
      if (cf_first_.size() == cf_.size()) {
        two_stage_interpolation(in, cf_first_, p_.truncation, pattern, ops.P);
      } else {
        extended_i_interpolation(in, p_.truncation, pattern, ops.P);
      }
      break;
  }
  // Row-length bounds may have left spare capacity in P, which the hierarchy
  // keeps: give it back.
  ops.P.col.shrink_to_fit();
  ops.P.val.shrink_to_fit();
  const double t1 = omp_get_wtime();
  ops.R = parallel_transpose(ops.P);
  timings_.interpolation = t1 - t0;
  timings_.transpose = omp_get_wtime() - t1;
}

template class ClassicalCoarsening<float>;
template class ClassicalCoarsening<double>;

}  // namespace jaxamg::classical
