#include "dist/dist_classical.h"

#include <algorithm>
#include <string>

#include "amg/classical/interpolation.h"
#include "amg/classical/splitting.h"
#include "amg/classical/strength.h"
#include "amg/classical/transpose.h"
#include "core/error.h"
#include "dist/dist_pmis.h"
#include "dist/row_exchange.h"

namespace jaxamg::dist {
namespace {

using classical::Interpolator;
using classical::kCoarse;
using classical::kFine;
using classical::Selector;

// Global id of local point j ([owned | ghost]).
inline int64_t global_id(Index j, Index n, int64_t row_start, const std::vector<int64_t>& ghosts) {
  return j < n ? row_start + j : ghosts[j - n];
}

// One row per send slot of the plan: the owned row it names, with global
// columns and, per entry, value(k) for the entry k of A.
template <class V, class T, class Value>
RowSet<V> rows_for_neighbours(const DistOperator<T>& op, const CsrMatrix<T>& A,
                              const std::vector<int64_t>& ghosts, Value value) {
  RowSet<V> out;
  const Index n = A.nrows;
  for (int32_t i : op.plan().send_index()) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      out.push(global_id(A.col[k], n, op.row_start(), ghosts), value(k));
    }
    out.end_row();
  }
  return out;
}

}  // namespace

template <class T>
bool DistClassical<T>::supports(const classical::ClassicalParams& p) {
  return (p.selector == Selector::kPmis || p.selector == Selector::kHmis) &&
         (p.interpolator == Interpolator::kD1 || p.interpolator == Interpolator::kD2);
}

template <class T>
void DistClassical<T>::extend(const DistOperator<T>& op, const CsrMatrix<T>& A, bool structure) {
  const Index n = A.nrows;
  const HaloPlan& plan = op.plan();
  RowSet<T> in;
  if (ghost_rows_) {
    in = rows_to_ghosts(plan, rows_for_neighbours<T>(op, A, ghost_gid_,
                                                  [&](Index k) { return A.val[k]; }));
  }
  if (!structure) {
    for (std::size_t k = 0; k < owned_slot_.size(); ++k) ext_.val[owned_slot_[k]] = A.val[k];
    for (std::size_t e = 0; e < ghost_slot_.size(); ++e) ext_.val[ghost_slot_[e]] = in.val[e];
    return;
  }
  const Index ng = plan.num_ghosts();
  const int64_t lo = op.row_start();
  // Every point known here, in global order.
  ext_gid_.clear();
  for (Index i = 0; i < n; ++i) ext_gid_.push_back(lo + i);
  ext_gid_.insert(ext_gid_.end(), ghost_gid_.begin(), ghost_gid_.end());
  ext_gid_.insert(ext_gid_.end(), in.col.begin(), in.col.end());
  std::sort(ext_gid_.begin(), ext_gid_.end());
  ext_gid_.erase(std::unique(ext_gid_.begin(), ext_gid_.end()), ext_gid_.end());
  const Index N = static_cast<Index>(ext_gid_.size());
  auto ext_of = [&](int64_t g) {
    return static_cast<Index>(std::lower_bound(ext_gid_.begin(), ext_gid_.end(), g) -
                              ext_gid_.begin());
  };
  ext_of_local_.resize(static_cast<std::size_t>(n + ng));
  for (Index j = 0; j < n + ng; ++j) ext_of_local_[j] = ext_of(global_id(j, n, lo, ghost_gid_));
  // Each row of ext_ comes from an owned row (source >= 0: local row) or a
  // received ghost row (source < -1: -2 - ghost slot), or is empty (-1).
  std::vector<Index> source(N, -1);
  for (Index i = 0; i < n; ++i) source[ext_of_local_[i]] = i;
  if (ghost_rows_) {
    for (Index g = 0; g < ng; ++g) source[ext_of_local_[n + g]] = -2 - g;
  }
  ext_ = CsrMatrix<T>(N, N);
  owned_slot_.assign(A.col.size(), -1);
  ghost_slot_.assign(in.col.size(), -1);
  std::vector<std::pair<Index, int64_t>> row;  // (extended column, input entry)
  for (Index e = 0; e < N; ++e) {
    row.clear();
    const Index s = source[e];
    if (s >= 0) {
      for (Index k = A.row_ptr[s]; k < A.row_ptr[s + 1]; ++k) {
        row.emplace_back(ext_of_local_[A.col[k]], k);
      }
    } else if (s < -1) {
      const Index g = -2 - s;
      for (int64_t k = in.start[g]; k < in.start[g + 1]; ++k) {
        row.emplace_back(ext_of(in.col[k]), k);
      }
    }
    std::sort(row.begin(), row.end());
    for (const auto& [c, k] : row) {
      const Index slot = static_cast<Index>(ext_.col.size());
      ext_.col.push_back(c);
      if (s >= 0) {
        owned_slot_[k] = slot;
        ext_.val.push_back(A.val[k]);
      } else {
        ghost_slot_[k] = slot;
        ext_.val.push_back(in.val[k]);
      }
    }
    ext_.row_ptr[e + 1] = static_cast<Index>(ext_.col.size());
  }
  ext_.find_diagonal();
}

template <class T>
void DistClassical<T>::build(const DistOperator<T>& op, const CsrMatrix<T>& A,
                             DistProlongation<T>& out) {
  if (A.block_dim > 1) {
    throw ConfigError("algorithm CLASSICAL does not support block_dim = " +
                      std::to_string(A.block_dim) +
                      "; use algorithm AGGREGATION for block systems");
  }
  const HaloPlan& plan = op.plan();
  const Index n = A.nrows;
  const Index ng = plan.num_ghosts();
  n_ = n;
  ghost_rows_ = p_.interpolator == Interpolator::kD2;
  std::vector<int64_t> ids(n);
  for (Index i = 0; i < n; ++i) ids[i] = op.row_start() + i;
  ghost_gid_.assign(ng, 0);
  plan.exchange(ids.data(), ghost_gid_.data());
  extend(op, A, true);
  // Strength on whole rows (the owned ones are complete; so are the ghost
  // rows, which only D2's weights read).
  strong_ = classical::strength_graph(ext_, p_.strength, false).strong;
  LocalStrength S;
  S.n = n;
  for (Index i = 0; i < n; ++i) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (strong_[owned_slot_[k]]) S.col.push_back(A.col[k]);
    }
    S.row_ptr.push_back(static_cast<Index>(S.col.size()));
  }
  cf_.assign(n, classical::kUndecided);
  if (p_.selector == Selector::kHmis) {
    // HMIS as hypre runs it: the Ruge-Stueben first pass on this process's
    // block of S (it is sequential), PMIS across processes for the rest.
    // On one process this is the serial HMIS.
    classical::StrengthGraph block;
    block.n = n;
    block.row_ptr.assign(1, 0);
    for (Index i = 0; i < n; ++i) {
      for (Index k = S.row_ptr[i]; k < S.row_ptr[i + 1]; ++k) {
        if (S.col[k] < n) block.col.push_back(S.col[k]);
      }
      block.row_ptr.push_back(static_cast<Index>(block.col.size()));
    }
    classical::transpose_pattern(n, block.row_ptr, block.col, block.t_row_ptr, block.t_col);
    classical::ruge_stueben_first_pass(block, cf_);
  }
  dist_pmis(plan, S, op.row_start(), ghost_gid_, p_.seed, cf_);
  // Global coarse ids: owned C points in order after those of lower ranks.
  const Communicator& comm = plan.comm();
  nc_ = static_cast<Index>(std::count(cf_.begin(), cf_.end(), kCoarse));
  cstart_ = comm.exclusive_scan(nc_);
  std::vector<int64_t> cg(static_cast<std::size_t>(n + ng), -1);
  for (Index i = 0, next = 0; i < n; ++i) {
    if (cf_[i] == kCoarse) cg[i] = cstart_ + next++;
  }
  plan.exchange(cg.data(), cg.data() + n);
  const Index N = ext_.nrows;
  std::vector<int64_t> cg_ext(N, -1);
  for (Index j = 0; j < n + ng; ++j) cg_ext[ext_of_local_[j]] = cg[j];
  if (ghost_rows_) {
    // The points beyond the ghosts (columns of ghost rows): their owners'
    // neighbours know them; each entry of a ghost row carries its column's
    // coarse id.
    const RowSet<int64_t> tags = rows_to_ghosts(
        plan, rows_for_neighbours<int64_t>(op, A, ghost_gid_,
                                           [&](Index k) { return cg[A.col[k]]; }));
    for (std::size_t e = 0; e < tags.col.size(); ++e) {
      cg_ext[ext_.col[ghost_slot_[e]]] = tags.val[e];
    }
  }
  cf_ext_.assign(N, kFine);
  cidx_ext_.assign(N, -1);
  cgid_.clear();
  for (Index e = 0; e < N; ++e) {
    if (cg_ext[e] < 0) continue;
    cf_ext_[e] = kCoarse;
    cidx_ext_[e] = static_cast<Index>(cgid_.size());
    cgid_.push_back(cg_ext[e]);
  }
  skip_.assign(N, 1);
  for (Index i = 0; i < n; ++i) skip_[ext_of_local_[i]] = 0;
  interpolate(false, out);
}

template <class T>
bool DistClassical<T>::fits(const CsrMatrix<T>& A) const {
  return A.nrows == n_ && static_cast<std::size_t>(A.nnz()) == owned_slot_.size();
}

template <class T>
void DistClassical<T>::rebuild(const DistOperator<T>& op, const CsrMatrix<T>& A,
                               DistProlongation<T>& out) {
  if (!fits(A)) {
    throw InvalidInput("classical coarsening resetup: the matrix has " + std::to_string(A.nrows) +
                       " local rows and " + std::to_string(A.nnz()) +
                       " entries but the last setup saw " + std::to_string(n_) + " and " +
                       std::to_string(owned_slot_.size()) +
                       "; a resetup needs the same sparsity, run a full setup instead");
  }
  extend(op, A, false);
  interpolate(true, out);
}

template <class T>
void DistClassical<T>::interpolate(bool keep_pattern, DistProlongation<T>& out) {
  const std::vector<Index> dpos = classical::diagonal_positions(ext_);
  const classical::InterpolationInput<T> in{ext_,      dpos, strong_, cf_ext_, cidx_ext_,
                                            static_cast<Index>(cgid_.size()), skip_.data()};
  CsrMatrix<T> P;
  const CsrMatrix<T>* pattern = keep_pattern ? &P_ext_ : nullptr;
  if (p_.interpolator == Interpolator::kD1) {
    classical::direct_interpolation(in, p_.truncation, pattern, P);
  } else {
    classical::extended_i_interpolation(in, p_.truncation, pattern, P);
  }
  P_ext_ = std::move(P);
  // The owned rows, columns renumbered [owned C | ghost C].
  const Index n = n_;
  out.nc = nc_;
  out.ghosts.clear();
  auto owned = [&](int64_t c) { return c >= cstart_ && c < cstart_ + nc_; };
  for (Index i = 0; i < n; ++i) {
    const Index e = ext_of_local_[i];
    for (Index k = P_ext_.row_ptr[e]; k < P_ext_.row_ptr[e + 1]; ++k) {
      const int64_t c = cgid_[P_ext_.col[k]];
      if (!owned(c)) out.ghosts.push_back(c);
    }
  }
  std::sort(out.ghosts.begin(), out.ghosts.end());
  out.ghosts.erase(std::unique(out.ghosts.begin(), out.ghosts.end()), out.ghosts.end());
  CsrMatrix<T>& Pl = out.P;
  Pl = CsrMatrix<T>(n, nc_ + static_cast<Index>(out.ghosts.size()));
  std::vector<std::pair<Index, T>> row;
  for (Index i = 0; i < n; ++i) {
    const Index e = ext_of_local_[i];
    row.clear();
    for (Index k = P_ext_.row_ptr[e]; k < P_ext_.row_ptr[e + 1]; ++k) {
      const int64_t c = cgid_[P_ext_.col[k]];
      const auto ghost = std::lower_bound(out.ghosts.begin(), out.ghosts.end(), c);
      const Index local = owned(c) ? static_cast<Index>(c - cstart_)
                                   : nc_ + static_cast<Index>(ghost - out.ghosts.begin());
      row.emplace_back(local, P_ext_.val[k]);
    }
    std::sort(row.begin(), row.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [c, v] : row) {
      Pl.col.push_back(c);
      Pl.val.push_back(v);
    }
    Pl.row_ptr[i + 1] = static_cast<Index>(Pl.col.size());
  }
}

template class DistClassical<float>;
template class DistClassical<double>;

}  // namespace jaxamg::dist
