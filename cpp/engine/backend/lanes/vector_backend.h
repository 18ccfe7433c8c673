// The CPU lanes backend of the algorithms written once over backends
// (solvers/krylov/*_method.h): k right-hand sides of one matrix advanced
// together. A vector is a lane-interleaved n x k block (multivector.h), so
// every product streams the matrix once for all lanes; every lane has its
// own scalar slots, so its recurrence, its stops and its stopping test are
// its own, and a lane gives the numbers of a one-lane solve (bit for bit
// while the reductions are serial). Lanes that have finished are dropped
// from the block (keep_lanes) and the others go on in a narrower one.
//
// The smoothers' row sweeps (solvers/smoothers/*_method.h) read a row of A
// once for every lane (row_kernels.h) and do, lane by lane, the arithmetic
// of the CPU backend's sweeps in the same order, so a lane matches a
// one-vector sweep bit for bit; the colour sweeps run the row kernels of
// backend/sweep_data.h lane by lane.
#pragma once
#include <cstddef>
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "backend/lanes/multivector.h"
#include "backend/lanes/row_kernels.h"
#include "backend/slots.h"
#include "backend/sweep_data.h"
#include "core/csr_matrix.h"
#include "core/types.h"

namespace jaxamg::lanes {

template <class T>
class VectorBackend {
 public:
  using value_type = T;
  using vector_type = Vector<T>;
  using matrix_type = CsrMatrix<T>;

  // n rows, blocks of up to `cap` lanes, `slots` scalars per lane.
  VectorBackend(std::size_t n, int cap, int slots)
      : n_(n), cap_(cap), m_(slots), k_(cap), slots_(static_cast<std::size_t>(cap) * slots, 0.0),
        on_(cap), a_(cap), b_(cap), c_(cap), sums_(cap) {}

  // Blocks the vectors are sized for, and the lanes of the current block.
  int capacity() const { return cap_; }
  int lanes() const { return k_; }
  std::size_t size() const { return n_; }  // rows
  // Starts a block of k <= capacity() lanes, every slot zero.
  void start(int k) {
    k_ = k;
    std::fill(slots_.begin(), slots_.end(), 0.0);
  }
  // Goes on with the current slots on a block of k <= capacity() lanes
  // (a cycle's level backends follow the width of the block cycled).
  void set_lanes(int k) { k_ = k; }
  vector_type make_vector() const { return vector_type(n_ * cap_, T(0)); }

  double* slots(int lane) { return slots_.data() + static_cast<std::size_t>(lane) * m_; }
  const double* slots(int lane) const {
    return slots_.data() + static_cast<std::size_t>(lane) * m_;
  }

  // f(s) on every lane's slots.
  template <class F>
  void update(const F& f) {
    for (int j = 0; j < k_; ++j) f(slots(j));
  }
  bool any(int mask) const {
    for (int j = 0; j < k_; ++j) {
      if (backend::selected(slots(j), mask)) return true;
    }
    return false;
  }

  // s_j[slot] = <x_j, y_j> for the lanes `mask` selects.
  void dot(const T* x, const T* y, int slot, int mask = backend::kAllLanes) {
    if (!any(mask)) return;
    lanes::dot(n_, k_, x, y, sums_.data());
    for (int j = 0; j < k_; ++j) {
      if (backend::selected(slots(j), mask)) slots(j)[slot] = sums_[j];
    }
  }
  // s_j[slot + i] = <xs[i]_j, y_j> for i < count, the lanes `mask` selects.
  void dots(const T* const* xs, int count, const T* y, int slot, int mask = backend::kAllLanes) {
    for (int i = 0; i < count; ++i) dot(xs[i], y, slot + i, mask);
  }
  // Every lane of y = the host array `values` (n entries).
  void upload(const T* values, T* y) {
    for (int j = 0; j < k_; ++j) set_lane<T>(n_, k_, j, values, y);
  }
  // y_j = 0 for the lanes `mask` selects.
  void fill_zero(T* y, int mask = backend::kAllLanes) {
    if (any(mask)) lanes::fill<T>(n_, k_, T(0), y, on(mask));
  }
  void copy(const T* x, T* y, int mask) {
    if (any(mask)) lanes::copy<T>(n_, k_, x, y, on(mask));
  }
  void axpy(backend::Coef a, const T* x, T* y, int mask) {
    if (any(mask)) lanes::axpy<T>(n_, k_, coefs(a, &a_), x, y, on(mask));
  }
  void xpby(const T* x, backend::Coef b, T* y, int mask) {
    if (any(mask)) lanes::xpby<T>(n_, k_, x, coefs(b, &b_), y, on(mask));
  }
  void axpbypcz(backend::Coef a, const T* x, backend::Coef b, const T* y, backend::Coef c, T* z,
                int mask) {
    if (any(mask)) {
      lanes::axpbypcz<T>(n_, k_, coefs(a, &a_), x, coefs(b, &b_), y, coefs(c, &c_), z, on(mask));
    }
  }
  void axpby(backend::Coef a, const T* x, backend::Coef b, T* y, int mask) {
    if (!any(mask)) return;
    const T* ca = coefs(a, &a_);
    const T* cb = coefs(b, &b_);
    const std::uint8_t* m = on(mask);
    for_rows([&](std::size_t o, int j) {
      if (!m || m[j]) y[o + j] = ca[j] * x[o + j] + cb[j] * y[o + j];
    });
  }
  void scale(backend::Coef a, T* x, int mask) {
    if (!any(mask)) return;
    const T* ca = coefs(a, &a_);
    const std::uint8_t* m = on(mask);
    for_rows([&](std::size_t o, int j) {
      if (!m || m[j]) x[o + j] *= ca[j];
    });
  }
  // For each selected lane: out += sum_i s[coef + i] v[i] over its own
  // [s[range], s[range + 1]), paired as the CPU backend pairs them.
  void combine(T* const* v, int coef, int range, T* out, int mask) {
    if (!any(mask)) return;
    for (int j = 0; j < k_; ++j) {
      const double* s = slots(j);
      if (!backend::selected(s, mask)) continue;
      const int end = static_cast<int>(s[range + 1]);
      int i = static_cast<int>(s[range]);
      for (; i + 1 < end; i += 2) {
        const T a = static_cast<T>(s[coef + i]), b = static_cast<T>(s[coef + i + 1]);
        const T *x = v[i], *y = v[i + 1];
        each_row([&](std::size_t o) {
          out[o + j] = a * x[o + j] + b * y[o + j] + T(1) * out[o + j];
        });
      }
      if (i < end) {
        const T a = static_cast<T>(s[coef + i]);
        const T* x = v[i];
        each_row([&](std::size_t o) { out[o + j] += a * x[o + j]; });
      }
    }
  }
  // A block whose lane j holds lane j of table[s_j[index] + offset] (for the
  // selected lanes; `read` false leaves the values, the caller overwrites
  // them): lanes at different steps read different vectors.
  T* gather(T* const* table, int index, int offset, vector_type* scratch, int mask, bool read) {
    if (scratch->empty()) *scratch = make_vector();
    T* out = scratch->data();
    if (!read) return out;
    for (int j = 0; j < k_; ++j) {
      if (!backend::selected(slots(j), mask)) continue;
      const T* x = table[static_cast<int>(slots(j)[index]) + offset];
      each_row([&](std::size_t o) { out[o + j] = x[o + j]; });
    }
    return out;
  }
  // Lane j of x into lane j of table[s_j[index] + offset], selected lanes.
  void scatter(const T* x, T* const* table, int index, int offset, int mask) {
    for (int j = 0; j < k_; ++j) {
      if (!backend::selected(slots(j), mask)) continue;
      T* y = table[static_cast<int>(slots(j)[index]) + offset];
      if (y == x) continue;
      each_row([&](std::size_t o) { y[o + j] = x[o + j]; });
    }
  }
  // Work space for a vector that only the selected lanes need: the other
  // lanes' values in `reusable` must survive, so a block of its own.
  T* lane_work(T* /*reusable*/, vector_type* scratch) {
    if (scratch->empty()) *scratch = make_vector();
    return scratch->data();
  }

  // ---- row sweeps of the smoothers (every lane; coefficients shared) ----

  // X = d .* B: a diagonal sweep from a zero guess.
  void diagonal_scale(const T* d, const T* B, T* X) {
    const int k = k_;
    rows::for_each_row(static_cast<std::ptrdiff_t>(n_), k, [=](std::ptrdiff_t i) {
      const std::size_t o = static_cast<std::size_t>(i) * k;
      for (int j = 0; j < k; ++j) X[o + j] = d[i] * B[o + j];
    });
  }
  // X_out = X + d .* (B - A X), one pass (X_out apart from X: neighbours
  // read X).
  void diagonal_sweep(const CsrMatrix<T>& A, const T* d, const T* B, const T* X, T* X_out) {
    const int k = k_;
    rows::residual_rows(A, X, B, k, [=](Index i, int j0, auto W, const T* r) {
      const std::size_t o = static_cast<std::size_t>(i) * k + j0;
      for (int j = 0; j < W.value; ++j) X_out[o + j] = X[o + j] + d[i] * r[j];
    });
  }
  // The first Chebyshev step from a zero guess: P = d .* B, X = alpha P.
  void chebyshev_start(const T* d, const T* B, T alpha, T* P, T* X) {
    const int k = k_;
    rows::for_each_row(static_cast<std::ptrdiff_t>(n_), k, [=](std::ptrdiff_t i) {
      const std::size_t o = static_cast<std::size_t>(i) * k;
      for (int j = 0; j < k; ++j) {
        const T pi = d[i] * B[o + j];
        P[o + j] = pi;
        X[o + j] = alpha * pi;
      }
    });
  }
  // A Chebyshev step in one pass: P = d .* (B - A X) + beta P (without
  // beta P when `first`), X_out = X + alpha P (X_out apart from X).
  void chebyshev_step(const CsrMatrix<T>& A, const T* d, const T* B, T alpha, T beta, bool first,
                      T* P, const T* X, T* X_out) {
    const int k = k_;
    rows::residual_rows(A, X, B, k, [=](Index i, int j0, auto W, const T* r) {
      const std::size_t o = static_cast<std::size_t>(i) * k + j0;
      for (int j = 0; j < W.value; ++j) {
        const T pj = first ? d[i] * r[j] : d[i] * r[j] + beta * P[o + j];
        P[o + j] = pj;
        X_out[o + j] = X[o + j] + alpha * pj;
      }
    });
  }

  // The colour-ordered sweeps of the multicolour smoothers: each lane runs
  // the one-vector row kernels of backend/sweep_data.h at stride k.
  // Gauss-Seidel by row, or by node for block_dim up to
  // backend::kMaxDeviceBlock (the caller checks).
  void gs_rows(const CsrMatrix<T>& A, const Index* rows, Index p0, Index p1,
               backend::BlockScale<T> scale, const T* B, T* X) {
    const int k = k_;
    const Index* rp = A.row_ptr.data();
    const Index* ci = A.col.data();
    const T* v = A.val.data();
    const T* s = scale.scale;
    const Index nb = scale.block_dim;
    if (nb > 1) {
      for_positions(0, (p1 - p0) / nb, [=](Index q) {
        const Index first = rows[p0 + q * nb];
        for (int j = 0; j < k; ++j) node_update(A, first, nb, s, B + j, X + j);
      });
      return;
    }
    for_positions(p0, p1, [=](Index p) {
      const Index i = rows[p];
      for (int j = 0; j < k; ++j) {
        const T r = backend::row_residual(rp, ci, v, i, B + j, X + j, A.nrows,
                                          static_cast<const T*>(nullptr), k);
        X[static_cast<std::size_t>(i) * k + j] += s[i] * r;
      }
    });
  }
  // A block Jacobi sweep by node (block_dim up to backend::kMaxDeviceBlock):
  // the residuals of every lane into R, then the node updates lane by lane.
  void block_jacobi_sweep(const CsrMatrix<T>& A, backend::BlockScale<T> scale, const T* B, T* X,
                          bool x_is_zero, T* R) {
    const int k = k_;
    if (x_is_zero) {
      lanes::copy<T>(n_, k, B, R);
    } else {
      rows::residual_rows(A, X, B, k, [=](Index i, int j0, auto W, const T* r) {
        const std::size_t o = static_cast<std::size_t>(i) * k + j0;
        for (int j = 0; j < W.value; ++j) R[o + j] = r[j];
      });
    }
    const Index nb = scale.block_dim;
    const T* s = scale.scale;
    for_positions(0, static_cast<Index>(n_) / nb, [=](Index I) {
      for (int j = 0; j < k; ++j) {
        T r[backend::kMaxDeviceBlock], d[backend::kMaxDeviceBlock];
        for (Index c = 0; c < nb; ++c) r[c] = R[static_cast<std::size_t>(I * nb + c) * k + j];
        backend::apply_block(s + I * nb * nb, r, d, nb, false);
        for (Index c = 0; c < nb; ++c) {
          T& x = X[static_cast<std::size_t>(I * nb + c) * k + j];
          x = x_is_zero ? d[c] : x + d[c];
        }
      }
    });
  }
  template <class Factors>
  void lower_solve(const Factors& f, Index p0, Index p1, const T* B, const T* X, bool x_is_zero,
                   T* Z) {
    const int k = k_;
    for_positions(p0, p1, [=](Index p) {
      for (int j = 0; j < k; ++j) backend::lower_row(f, p, B + j, X + j, x_is_zero, Z + j, k);
    });
  }
  template <class Factors>
  void upper_solve(const Factors& f, Index p0, Index p1, T w, T* Z, T* X, bool x_is_zero) {
    const int k = k_;
    for_positions(p0, p1, [=](Index p) {
      for (int j = 0; j < k; ++j) backend::upper_row(f, p, w, Z + j, X + j, x_is_zero, k);
    });
  }

  // Keeps lanes keep[0..m), in that order, in the slots and in `vectors`
  // (each an n x capacity() block, or empty); `spare` is such a block.
  void keep_lanes(const std::vector<int>& keep, const std::vector<vector_type*>& vectors,
                  vector_type* spare) {
    const int m = static_cast<int>(keep.size());
    for (vector_type* v : vectors) {
      if (v->empty()) continue;
      select_lanes<T>(n_, k_, v->data(), keep.data(), m, spare->data());
      v->swap(*spare);
    }
    std::vector<double> kept(slots_.size(), 0.0);
    for (int i = 0; i < m; ++i) {
      std::copy(slots(keep[i]), slots(keep[i]) + m_,
                kept.data() + static_cast<std::size_t>(i) * m_);
    }
    slots_.swap(kept);
    k_ = m;
  }

 private:
  const std::uint8_t* on(int mask) {
    if (mask < 0) return nullptr;
    for (int j = 0; j < k_; ++j) on_[j] = backend::selected(slots(j), mask) ? 1 : 0;
    return on_.data();
  }
  // f(o) for the offset o of every row; f(o, j) for every row and lane.
  template <class F>
  void each_row(const F& f) const {
    const std::size_t k = static_cast<std::size_t>(k_);
    rows::for_each_row(static_cast<std::ptrdiff_t>(n_), k_,
                       [&](std::ptrdiff_t r) { f(static_cast<std::size_t>(r) * k); });
  }
  template <class F>
  void for_rows(const F& f) const {
    each_row([&](std::size_t o) {
      for (int j = 0; j < k_; ++j) f(o, j);
    });
  }
  // The Gauss-Seidel update of the node of nb rows from row `first`
  // (backend::gs_node), for the lane whose vectors B and X point at
  // (stride k_).
  void node_update(const CsrMatrix<T>& A, Index first, Index nb, const T* scale, const T* B,
                   T* X) const {
    T r[backend::kMaxDeviceBlock];
    backend::gs_node(A.row_ptr.data(), A.col.data(), A.val.data(), first, nb, scale, B, X,
                     A.nrows, static_cast<const T*>(nullptr), r, static_cast<Index>(k_));
  }
  // body(p) for the colour positions p in [p0, p1), in parallel for large blocks.
  template <class F>
  void for_positions(Index p0, Index p1, const F& body) const {
    rows::for_each_row(static_cast<std::ptrdiff_t>(p1 - p0), k_,
                       [&](std::ptrdiff_t q) { body(p0 + static_cast<Index>(q)); });
  }
  const T* coefs(backend::Coef c, std::vector<T>* out) const {
    for (int j = 0; j < k_; ++j) (*out)[j] = static_cast<T>(c.value(slots(j)));
    return out->data();
  }

  std::size_t n_;
  int cap_, m_, k_;
  std::vector<double> slots_;  // lane j's slots at [j * m_, (j + 1) * m_)
  std::vector<std::uint8_t> on_;
  std::vector<T> a_, b_, c_;
  std::vector<double> sums_;
};

}  // namespace jaxamg::lanes
