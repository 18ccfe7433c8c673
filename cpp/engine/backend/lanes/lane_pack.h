// W consecutive lanes of a lane-interleaved block held in 16-byte vectors
// (internal to backend/lanes/). The compiler's own vectoriser, given the lane
// loops of the row kernels, sometimes vectorises across matrix entries
// instead (with gathers) or not at all, depending on the inlining context;
// these explicit vectors make every kernel do its W lanes with whole-vector
// loads and arithmetic. Each lane's arithmetic is exactly the scalar one
// (element-wise IEEE operations, no fused multiply-add), so a lane still
// reproduces its one-lane solve bit for bit.
#pragma once
#include <cstring>

namespace jaxamg::lanes::pack {

template <class T>
struct Vec {
  typedef T type __attribute__((vector_size(16)));
  static constexpr int kWidth = 16 / sizeof(T);
};

// W lanes: W / kWidth vectors, then W % kWidth scalars.
template <class T, int W>
struct Pack {
  using V = typename Vec<T>::type;
  static constexpr int kL = Vec<T>::kWidth;
  static constexpr int kNV = W / kL;
  static constexpr int kNS = W % kL;
  V v[kNV > 0 ? kNV : 1];
  T s[kNS > 0 ? kNS : 1];

  static V load1(const T* p) {
    V r;
    std::memcpy(&r, p, sizeof(V));
    return r;
  }
  static void store1(T* p, V x) { std::memcpy(p, &x, sizeof(V)); }
  static V splat(T a) {
    V r;
    for (int j = 0; j < kL; ++j) r[j] = a;
    return r;
  }

  void zero() {
    for (int q = 0; q < kNV; ++q) v[q] = splat(T(0));
    for (int r = 0; r < kNS; ++r) s[r] = T(0);
  }
  void load(const T* p) {
    for (int q = 0; q < kNV; ++q) v[q] = load1(p + q * kL);
    for (int r = 0; r < kNS; ++r) s[r] = p[kNV * kL + r];
  }
  void store(T* p) const {
    for (int q = 0; q < kNV; ++q) store1(p + q * kL, v[q]);
    for (int r = 0; r < kNS; ++r) p[kNV * kL + r] = s[r];
  }
  // this += a * x (Sign > 0) or this -= a * x (Sign < 0), x at p.
  template <int Sign>
  void add_scaled(T a, const T* p) {
    const V av = splat(a);
    for (int q = 0; q < kNV; ++q) {
      if (Sign > 0) {
        v[q] += av * load1(p + q * kL);
      } else {
        v[q] -= av * load1(p + q * kL);
      }
    }
    for (int r = 0; r < kNS; ++r) {
      if (Sign > 0) {
        s[r] += a * p[kNV * kL + r];
      } else {
        s[r] -= a * p[kNV * kL + r];
      }
    }
  }
  // this += o (Sign > 0) or this -= o (Sign < 0), lane by lane.
  template <int Sign>
  void add(const Pack& o) {
    for (int q = 0; q < kNV; ++q) {
      if (Sign > 0) {
        v[q] += o.v[q];
      } else {
        v[q] -= o.v[q];
      }
    }
    for (int r = 0; r < kNS; ++r) {
      if (Sign > 0) {
        s[r] += o.s[r];
      } else {
        s[r] -= o.s[r];
      }
    }
  }
  // this += a * (d * x) (Sign > 0) or this -= a * (d * x), x at p: a
  // residual term with the neighbour's value x_c = d_c b_c formed (and
  // rounded) first, as the one-lane sweep stores it.
  template <int Sign>
  void add_scaled_product(T a, T d, const T* p) {
    const V av = splat(a), dv = splat(d);
    for (int q = 0; q < kNV; ++q) {
      if (Sign > 0) {
        v[q] += av * (dv * load1(p + q * kL));
      } else {
        v[q] -= av * (dv * load1(p + q * kL));
      }
    }
    for (int r = 0; r < kNS; ++r) {
      if (Sign > 0) {
        s[r] += a * (d * p[kNV * kL + r]);
      } else {
        s[r] -= a * (d * p[kNV * kL + r]);
      }
    }
  }
  // y += this * w at p (the scatter of a restriction: y_c += r_i w).
  void scatter_scaled(T w, T* p) const {
    const V wv = splat(w);
    for (int q = 0; q < kNV; ++q) store1(p + q * kL, load1(p + q * kL) + v[q] * wv);
    for (int r = 0; r < kNS; ++r) p[kNV * kL + r] += s[r] * w;
  }
};

}  // namespace jaxamg::lanes::pack
