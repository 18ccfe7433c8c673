// Row loops shared by the multi-vector kernels (internal to the lanes
// backend: multivector.cc and the smoothers' sweeps of vector_backend.h): a
// sparse row times k lane-interleaved vectors, in chunks of kChunk lanes
// with a compile-time width, so that the row's entries are read once for
// every lane, the lanes in vectors (lane_pack.h).
#pragma once
#include <algorithm>
#include <cstddef>
#include <type_traits>

#include "backend/lanes/lane_pack.h"
#include "backend/row_product.h"
#include "core/csr_matrix.h"
#include "core/parallel.h"

namespace jaxamg::lanes::rows {

// Work (rows x lanes) below which a loop runs without OpenMP.
constexpr std::ptrdiff_t kParallelMin = kParallelRows;
constexpr int kChunk = 8;

template <class F>
inline void with_width(int w, F&& f) {
  switch (w) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    case 6: f(std::integral_constant<int, 6>{}); break;
    case 7: f(std::integral_constant<int, 7>{}); break;
    default: f(std::integral_constant<int, 8>{}); break;
  }
}

// body(i) for rows i in [0, n); parallel (static schedule) for large blocks.
template <class Body>
inline void for_each_row(std::ptrdiff_t n, int k, Body&& body) {
  if (n * k <= kParallelMin || n <= 1) {
    for (std::ptrdiff_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) body(i);
}

// a -= (Sign -1) or += (Sign +1) the sum over the row's entries [p0, p1) of
// the terms term(acc, p, sign) adds into a pack, in the order of
// backend/row_product.h's one-vector sums: one running sum for a short row,
// four partial sums for a long one.
template <int Sign, class Pack, class Term>
inline void row_lanes_by(Index p0, Index p1, Pack& a, const Term& term) {
  using Plus = std::integral_constant<int, 1>;
  if (p1 - p0 < backend::kLongRow) {
    for (Index p = p0; p < p1; ++p) term(a, p, std::integral_constant<int, Sign>{});
    return;
  }
  Pack s0, s1, s2, s3;
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

// acc = sum_p v_p X[ci_p] (Sign +1, from 0) or init - sum_p v_p X[ci_p]
// (Sign -1) over one row for lanes [j0, j0 + W).
template <int W, int Sign, class T>
inline void row_lanes(const Index* ci, const T* v, Index p0, Index p1, const T* X, int k, int j0,
                      const T* init, T* acc) {
  pack::Pack<T, W> a;
  if (init) {
    a.load(init);
  } else {
    a.zero();
  }
  row_lanes_by<Sign>(p0, p1, a, [=](auto& s, Index p, auto sign) {
    const T* x = X + static_cast<std::size_t>(ci[p]) * k + j0;
    s.template add_scaled<decltype(sign)::value>(v[p], x);
  });
  a.store(acc);
}

// For every row i and lane chunk: r = B_i - A_i X (lanes [j0, j0 + W)),
// then f(i, j0, W, r) with W a compile-time width; rows run in parallel.
template <class T, class F>
inline void residual_rows(const CsrMatrix<T>& A, const T* X, const T* B, int k, F&& f) {
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  for_each_row(A.nrows, k, [&](std::ptrdiff_t i) {
    const std::size_t o = static_cast<std::size_t>(i) * k;
    for (int j0 = 0; j0 < k; j0 += kChunk) {
      with_width(std::min(kChunk, k - j0), [&](auto W) {
        T r[W.value];
        row_lanes<W.value, -1, T>(ci, v, rp[i], rp[i + 1], X, k, j0, B + o + j0, r);
        f(static_cast<Index>(i), j0, W, r);
      });
    }
  });
}

}  // namespace jaxamg::lanes::rows
