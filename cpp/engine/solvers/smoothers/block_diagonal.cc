#include "solvers/smoothers/block_diagonal.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"

namespace jaxamg::smoothers {

namespace {

// Inverts the k x k row-major matrix `a` in place by Gauss-Jordan elimination
// with partial pivoting. Returns false if it is singular to working precision.
bool invert_small(std::vector<double>& a, Index k) {
  double scale = 0;
  for (double v : a) scale = std::max(scale, std::abs(v));
  if (!(scale > 0)) return false;
  const double tiny = scale * static_cast<double>(k) * std::numeric_limits<double>::epsilon();
  std::vector<double> inv(static_cast<std::size_t>(k * k), 0.0);
  for (Index i = 0; i < k; ++i) inv[i * k + i] = 1.0;
  for (Index c = 0; c < k; ++c) {
    Index piv = c;
    for (Index r = c + 1; r < k; ++r) {
      if (std::abs(a[r * k + c]) > std::abs(a[piv * k + c])) piv = r;
    }
    if (!(std::abs(a[piv * k + c]) > tiny)) return false;
    if (piv != c) {
      for (Index j = 0; j < k; ++j) {
        std::swap(a[c * k + j], a[piv * k + j]);
        std::swap(inv[c * k + j], inv[piv * k + j]);
      }
    }
    const double d = 1.0 / a[c * k + c];
    for (Index j = 0; j < k; ++j) {
      a[c * k + j] *= d;
      inv[c * k + j] *= d;
    }
    for (Index r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = a[r * k + c];
      if (f == 0.0) continue;
      for (Index j = 0; j < k; ++j) {
        a[r * k + j] -= f * a[c * k + j];
        inv[r * k + j] -= f * inv[c * k + j];
      }
    }
  }
  a.swap(inv);
  return true;
}

}  // namespace

template <class T>
void inverse_block_diagonal(const CsrMatrix<T>& A, Index k, T w, const std::string& who,
                            std::vector<T>& binv) {
  if (k < 1 || A.nrows % k != 0) {
    throw InvalidInput(who + ": " + std::to_string(A.nrows) +
                       " rows are not divisible by block_dim = " + std::to_string(k));
  }
  const Index nb = A.nrows / k;
  binv.assign(static_cast<std::size_t>(nb * k * k), T(0));
  std::vector<double> blk(static_cast<std::size_t>(k * k));
  for (Index I = 0; I < nb; ++I) {
    std::fill(blk.begin(), blk.end(), 0.0);
    for (Index c = 0; c < k; ++c) {
      const Index r = I * k + c;
      const Index* first = A.col.data() + A.row_ptr[r];
      const Index* last = A.col.data() + A.row_ptr[r + 1];
      // Columns are sorted: the diagonal block is one contiguous run.
      for (const Index* p = std::lower_bound(first, last, I * k); p != last && *p < (I + 1) * k;
           ++p) {
        blk[c * k + (*p - I * k)] = static_cast<double>(A.val[p - A.col.data()]);
      }
    }
    if (!invert_small(blk, k)) {
      throw InvalidInput(who + ": the " + std::to_string(k) + "x" + std::to_string(k) +
                         " diagonal block of node " + std::to_string(I) + " (" +
                         row_name(A, I * k) +
                         (k > 1 ? " and the next " + std::to_string(k - 1) + " rows" : "") +
                         ") is singular; block smoothers need invertible diagonal blocks");
    }
    T* out = binv.data() + I * k * k;
    for (Index e = 0; e < k * k; ++e) out[e] = static_cast<T>(static_cast<double>(w) * blk[e]);
  }
}

template void inverse_block_diagonal(const CsrMatrix<float>&, Index, float, const std::string&,
                                     std::vector<float>&);
template void inverse_block_diagonal(const CsrMatrix<double>&, Index, double, const std::string&,
                                     std::vector<double>&);

}  // namespace jaxamg::smoothers
