#include "amg/classical/strength.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "amg/classical/transpose.h"
#include "core/error.h"

namespace jaxamg::classical {

template <class T>
std::vector<Index> diagonal_positions(const CsrMatrix<T>& A) {
  if (static_cast<Index>(A.diag_pos.size()) == A.nrows) return A.diag_pos;
  std::vector<Index> d(A.nrows, -1);
#pragma omp parallel for schedule(static) if (A.nrows > kSerialBelow)
  for (Index i = 0; i < A.nrows; ++i) {
    const Index* b = A.col.data() + A.row_ptr[i];
    const Index* e = A.col.data() + A.row_ptr[i + 1];
    const Index* p = std::lower_bound(b, e, i);
    if (p != e && *p == i) d[i] = static_cast<Index>(p - A.col.data());
  }
  return d;
}

template <class T>
StrengthGraph strength_graph(const CsrMatrix<T>& A, const StrengthParams& p,
                             bool with_transpose) {
  if (!(p.theta >= 0.0 && p.theta <= 1.0)) {
    std::ostringstream os;
    os << "strength_threshold must lie in [0, 1] (a coupling is strong when it is at least "
          "that fraction of the row's largest), got "
       << p.theta << "; use e.g. 0.25 (2D) or 0.5 (3D)";
    throw ConfigError(os.str());
  }
  const Index n = A.nrows;
  const std::vector<Index> dpos = diagonal_positions(A);
  StrengthGraph S;
  S.n = n;
  S.strong.assign(A.nnz(), 0);
  S.row_ptr.assign(n + 1, 0);
  const bool row_sum_test = p.max_row_sum < 1.0;

#pragma omp parallel for schedule(static) if (n > kSerialBelow)
  for (Index i = 0; i < n; ++i) {
    const Index b = A.row_ptr[i], e = A.row_ptr[i + 1];
    const double diag = dpos[i] >= 0 ? static_cast<double>(A.val[dpos[i]]) : 0.0;
    if (row_sum_test) {
      // A row that is far from zero row sum (strongly diagonally dominant)
      // is solved well by smoothing: it gets no strong connections.
      double sum = 0;
      for (Index k = b; k < e; ++k) sum += static_cast<double>(A.val[k]);
      if (std::abs(sum) > p.max_row_sum * std::abs(diag)) continue;
    }
    Index cnt = 0;
    if (p.kind == StrengthKind::kAll) {
      for (Index k = b; k < e; ++k)
        if (A.col[k] != i && A.val[k] != T(0)) { S.strong[k] = 1; ++cnt; }
    } else {
      // Couplings of sign opposite to the diagonal are the ones that
      // transfer error smoothly; measure them as positive numbers.
      const double s = diag < 0 ? 1.0 : -1.0;
      double m = 0;
      for (Index k = b; k < e; ++k)
        if (A.col[k] != i) m = std::max(m, s * static_cast<double>(A.val[k]));
      if (m > 0) {
        const double cut = p.theta * m;
        for (Index k = b; k < e; ++k) {
          const double v = s * static_cast<double>(A.val[k]);
          if (A.col[k] != i && v > 0 && v >= cut) { S.strong[k] = 1; ++cnt; }
        }
      }
    }
    S.row_ptr[i + 1] = cnt;
  }
  for (Index i = 0; i < n; ++i) S.row_ptr[i + 1] += S.row_ptr[i];
  S.col.resize(S.row_ptr[n]);
#pragma omp parallel for schedule(static) if (n > kSerialBelow)
  for (Index i = 0; i < n; ++i) {
    Index o = S.row_ptr[i];
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (S.strong[k]) S.col[o++] = A.col[k];
  }
  transpose_pattern(n, S.row_ptr, S.col, S.t_row_ptr, S.t_col, with_transpose);
  return S;
}

template StrengthGraph strength_graph(const CsrMatrix<float>&, const StrengthParams&, bool);
template StrengthGraph strength_graph(const CsrMatrix<double>&, const StrengthParams&, bool);
template std::vector<Index> diagonal_positions(const CsrMatrix<float>&);
template std::vector<Index> diagonal_positions(const CsrMatrix<double>&);

}  // namespace jaxamg::classical
