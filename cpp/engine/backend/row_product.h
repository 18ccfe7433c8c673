// The sums over one CSR row of v[k] x[col[k]], the inner loop of every CPU
// product, residual and sweep; the lanes backend sums each lane in the same
// order (lanes/row_kernels.h), so that k right-hand sides advanced together
// give the bits of k one-vector solves.
#pragma once
#include <type_traits>

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

// The one order of a row's sum, for one vector and for the lanes backend's
// packs of lanes (lanes/row_kernels.h) alike: a += (Sign +1) or a -= (Sign
// -1) the sum over entries [p0, p1) of the terms term(acc, p, sign) adds
// into an accumulator. A short row adds its terms into `a` one after
// another; a long row sums entry p into chain (p - p0) mod 4 from zero, then
// a +/-= (s0 + s1) + (s2 + s3). Acc: zero() and add<S>(other).
template <int Sign, class Acc, class Term>
__attribute__((always_inline)) inline void row_terms(Index p0, Index p1, Acc& a,
                                                     const Term& term) {
  using Plus = std::integral_constant<int, 1>;
  if (p1 - p0 < kLongRow) {
    for (Index p = p0; p < p1; ++p) term(a, p, std::integral_constant<int, Sign>{});
    return;
  }
  Acc s0, s1, s2, s3;
  s0.zero();
  s1.zero();
  s2.zero();
  s3.zero();
  Index p = p0;
  for (; p + 4 <= p1; p += 4) {
    term(s0, p, Plus{});
    term(s1, p + 1, Plus{});
    term(s2, p + 2, Plus{});
    term(s3, p + 3, Plus{});
  }
  for (; p < p1; ++p) term(s0, p, Plus{});
  s0.template add<1>(s1);
  s2.template add<1>(s3);
  s0.template add<1>(s2);
  a.template add<Sign>(s0);
}

// One vector's accumulator for row_terms.
template <class T>
struct ScalarSum {
  T v;
  void zero() { v = T(0); }
  template <int S>
  void add(const ScalarSum& o) {
    if constexpr (S > 0) {
      v += o.v;
    } else {
      v -= o.v;
    }
  }
};

// start + sum_k v[k] x[col[k]] over row i (Sign +1), or start - that sum.
// Always inlined: called once per row, a call would cost as much as a
// short row's arithmetic.
template <int Sign, class T>
__attribute__((always_inline)) inline T row_sum(T start, const Index* rp, const Index* ci,
                                                const T* v, const T* x, Index i) {
  ScalarSum<T> a{start};
  row_terms<Sign>(rp[i], rp[i + 1], a, [=](ScalarSum<T>& s, Index k, auto sign) {
    if constexpr (decltype(sign)::value > 0) {
      s.v += v[k] * x[ci[k]];
    } else {
      s.v -= v[k] * x[ci[k]];
    }
  });
  return a.v;
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
