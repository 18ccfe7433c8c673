#include "amg/classical/classical_coarsening.h"

#include <omp.h>

#include <algorithm>
#include <sstream>

#include "amg/classical/interpolation.h"
#include "amg/classical/splitting.h"
#include "amg/classical/transpose.h"
#include "core/error.h"

namespace jaxamg::classical {

template <class T>
const CsrMatrix<T>& ClassicalCoarsening<T>::within_functions(const CsrMatrix<T>& A,
                                                             CsrMatrix<T>& filtered) {
  if (functions_.empty() && A.block_dim > 1) {
    functions_.resize(static_cast<std::size_t>(A.nrows));
    for (Index i = 0; i < A.nrows; ++i) functions_[i] = i % A.block_dim;
  }
  if (functions_.empty()) return A;
  if (static_cast<Index>(functions_.size()) != A.nrows) {
    throw SetupError("classical coarsening: " + std::to_string(functions_.size()) +
                     " functions given for a level of " + std::to_string(A.nrows) + " rows");
  }
  filtered = CsrMatrix<T>();
  filtered.nrows = filtered.ncols = A.nrows;
  filtered.row_ptr.assign(static_cast<std::size_t>(A.nrows) + 1, 0);
  filtered.col.reserve(A.col.size());
  filtered.val.reserve(A.val.size());
  const Index* f = functions_.data();
  for (Index i = 0; i < A.nrows; ++i) {
    for (Index q = A.row_ptr[i]; q < A.row_ptr[i + 1]; ++q) {
      if (f[A.col[q]] != f[i]) continue;
      filtered.col.push_back(A.col[q]);
      filtered.val.push_back(A.val[q]);
    }
    filtered.row_ptr[i + 1] = static_cast<Index>(filtered.col.size());
  }
  filtered.find_diagonal();
  return filtered;
}

template <class T>
void ClassicalCoarsening<T>::build(const CsrMatrix<T>& fine, TransferOperators<T>& ops) {
  if (fine.dist && (fine.block_dim > 1 || !functions_.empty())) {
    throw ConfigError("algorithm CLASSICAL does not support block_dim = " +
                      std::to_string(fine.block_dim) +
                      " on a distributed matrix; use algorithm AGGREGATION for block systems");
  }
  CsrMatrix<T> filtered;
  const CsrMatrix<T>& A = within_functions(fine, filtered);
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
  strong_ = std::move(S.strong);
  S = StrengthGraph();  // the graph itself is not needed any more
  built_rows_ = fine.nrows;
  built_nnz_ = fine.nnz();
  coarse_functions_.clear();
  if (!functions_.empty()) {
    for (Index i = 0; i < A.nrows; ++i) {
      if (cf_[i] == kCoarse) coarse_functions_.push_back(functions_[i]);
    }
  }
  t0 = omp_get_wtime();
  timings_.selection = t0 - t1;
  interpolate(A, dpos, nullptr, ops);
  pack_strong();
}

// Between setups the mask is kept as bits (one byte per entry of A would
// outweigh the coarse levels' operators).
template <class T>
void ClassicalCoarsening<T>::pack_strong() {
  const std::size_t nnz = strong_.size();
  const std::size_t words = (nnz + 63) / 64;
  strong_bits_.assign(words, 0);
  const uint8_t* st = strong_.data();
  uint64_t* bits = strong_bits_.data();
#pragma omp parallel for schedule(static) if (words > kSerialBelow)
  for (std::size_t w = 0; w < words; ++w) {
    uint64_t v = 0;
    const std::size_t k1 = std::min(nnz, 64 * w + 64);
    for (std::size_t k = 64 * w; k < k1; ++k) v |= static_cast<uint64_t>(st[k] != 0) << (k & 63);
    bits[w] = v;
  }
  strong_nnz_ = nnz;
  std::vector<uint8_t>().swap(strong_);
}

template <class T>
void ClassicalCoarsening<T>::unpack_strong() {
  strong_.resize(strong_nnz_);
  uint8_t* st = strong_.data();
  const uint64_t* bits = strong_bits_.data();
  const std::size_t nnz = strong_nnz_;
#pragma omp parallel for schedule(static) if (nnz > kSerialBelow)
  for (std::size_t k = 0; k < nnz; ++k) {
    st[k] = static_cast<uint8_t>((bits[k >> 6] >> (k & 63)) & 1);
  }
}

template <class T>
void ClassicalCoarsening<T>::rebuild(const CsrMatrix<T>& fine, TransferOperators<T>& ops) {
  if (fine.nrows != built_rows_ || fine.nnz() != built_nnz_) {
    std::ostringstream os;
    os << "classical coarsening resetup: the matrix has " << fine.nrows << " rows and "
       << fine.nnz() << " entries but the last setup saw " << built_rows_ << " rows and "
       << built_nnz_ << "; a resetup needs the same sparsity, run a full setup instead";
    throw InvalidInput(os.str());
  }
  if (ops.P.nrows != fine.nrows || ops.P.ncols != n_coarse_ ||
      static_cast<Index>(ops.P.row_ptr.size()) != fine.nrows + 1) {
    std::ostringstream os;
    os << "classical coarsening resetup: P is " << ops.P.nrows << " x " << ops.P.ncols
       << " but the last setup built a " << fine.nrows << " x " << n_coarse_
       << " P; pass the transfer operators of that setup, or run a full setup";
    throw InvalidInput(os.str());
  }
  timings_ = {};
  CsrMatrix<T> filtered;
  const CsrMatrix<T>& A = within_functions(fine, filtered);
  const std::vector<Index> dpos = diagonal_positions(A);
  const CsrMatrix<T> pattern = std::move(ops.P);
  unpack_strong();
  interpolate(A, dpos, &pattern, ops);
  std::vector<uint8_t>().swap(strong_);
}

template <class T>
void ClassicalCoarsening<T>::interpolate(const CsrMatrix<T>& A, const std::vector<Index>& dpos,
                                         const CsrMatrix<T>* pattern,
                                         TransferOperators<T>& ops) {
  const double t0 = omp_get_wtime();
  // The numbering is formed again here rather than kept between setups.
  std::vector<Index> coarse_index;
  n_coarse_ = coarse_numbering(cf_, coarse_index);
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
