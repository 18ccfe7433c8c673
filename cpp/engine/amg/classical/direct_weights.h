// Stueben's direct-interpolation weights of one row, shared by D1 and by the
// passes of MULTIPASS: row i interpolates from the points j it couples to at
// positions k with use(k, j) true, and every other coupling is distributed
// over them (see interpolation_direct.cc for the formula).
#pragma once
#include <utility>
#include <vector>

#include "core/csr_matrix.h"

namespace jaxamg::classical {

// Appends (j, w_ij) in the order of row i; appends nothing if no position
// is used or the lumped diagonal vanishes.
template <class T, class Use>
inline void direct_weights(const CsrMatrix<T>& A, Index i, Index diag_pos, Use use,
                           std::vector<std::pair<Index, double>>& out) {
  const Index b = A.row_ptr[i], e = A.row_ptr[i + 1];
  const double aii = diag_pos >= 0 ? static_cast<double>(A.val[diag_pos]) : 0.0;
  // Work with the row scaled by sign(a_ii): weights are invariant under row
  // scaling and the diagonal becomes positive.
  const double s = aii < 0 ? -1.0 : 1.0;
  double neg_all = 0, pos_all = 0, neg_c = 0, pos_c = 0;
  bool any = false;
  for (Index k = b; k < e; ++k) {
    const Index j = A.col[k];
    if (j == i) continue;
    const double v = s * static_cast<double>(A.val[k]);
    const bool interp = use(k, j);
    any |= interp;
    if (v < 0) {
      neg_all += v;
      if (interp) neg_c += v;
    } else {
      pos_all += v;
      if (interp) pos_c += v;
    }
  }
  if (!any) return;
  double diag = s * aii;
  if (neg_c == 0) diag += neg_all;
  if (pos_c == 0) diag += pos_all;
  if (diag == 0) return;
  const double alpha = neg_c != 0 ? -neg_all / (neg_c * diag) : 0.0;
  const double beta = pos_c != 0 ? -pos_all / (pos_c * diag) : 0.0;
  for (Index k = b; k < e; ++k) {
    const Index j = A.col[k];
    if (j == i || !use(k, j)) continue;
    const double v = s * static_cast<double>(A.val[k]);
    out.emplace_back(j, v * (v < 0 ? alpha : beta));
  }
}

}  // namespace jaxamg::classical
