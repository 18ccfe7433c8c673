// The sums over one CSR row of v[k] x[col[k]], the inner loop of every CPU
// product, residual and sweep; the lanes backend sums each lane in the same
// order (lanes/row_kernels.h), so that k right-hand sides advanced together
// give the bits of k one-vector solves.
#pragma once
#include "core/types.h"

namespace jaxamg::backend {

// Rows this long or longer are summed in four partial sums. One running sum
// makes each multiply-add wait for the one before it, so a long row that
// sits in cache (3-D elasticity, 34 entries) ran at a fraction of the core's
// speed; four independent chains keep the adder busy (the elasticity solve:
// 24 % faster). Shorter rows (7-point stencils) keep one running sum. The
// order of the additions is fixed by the row, so results do not depend on
// the thread count.
inline constexpr Index kLongRow = 12;

// start + sum_k v[k] x[col[k]] over row i (Sign +1), or start - that sum.
// Always inlined: called once per row, a call would cost as much as a
// short row's arithmetic.
template <int Sign, class T>
__attribute__((always_inline)) inline T row_sum(T start, const Index* rp, const Index* ci,
                                                const T* v, const T* x, Index i) {
  Index k = rp[i];
  const Index k1 = rp[i + 1];
  if (k1 - k < kLongRow) {
    for (; k < k1; ++k) {
      if constexpr (Sign > 0) {
        start += v[k] * x[ci[k]];
      } else {
        start -= v[k] * x[ci[k]];
      }
    }
    return start;
  }
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (; k + 4 <= k1; k += 4) {
    s0 += v[k] * x[ci[k]];
    s1 += v[k + 1] * x[ci[k + 1]];
    s2 += v[k + 2] * x[ci[k + 2]];
    s3 += v[k + 3] * x[ci[k + 3]];
  }
  for (; k < k1; ++k) s0 += v[k] * x[ci[k]];
  const T sum = (s0 + s1) + (s2 + s3);
  return Sign > 0 ? start + sum : start - sum;
}

// sum_k v[k] x[col[k]] over row i.
template <class T>
__attribute__((always_inline)) inline T csr_row_product(const Index* rp, const Index* ci,
                                                        const T* v, const T* x, Index i) {
  return row_sum<1>(T(0), rp, ci, v, x, i);
}

// b_i - sum_k v[k] x[col[k]] over row i.
template <class T>
__attribute__((always_inline)) inline T csr_row_residual(T bi, const Index* rp, const Index* ci,
                                                         const T* v, const T* x, Index i) {
  return row_sum<-1>(bi, rp, ci, v, x, i);
}

}  // namespace jaxamg::backend
