// The CPU backend of the algorithms written once over backends
// (solvers/krylov/*_method.h): one vector of n entries, the method's scalar
// slots in host memory, the kernels of blas.h. On a matrix distributed over
// processes the inner products are summed over them through the matrix's
// Reducer (core/distribution.h); the operator products, which exchange halo
// values, are the caller's (the method's Operator), so the same backend
// serves serial and distributed solves.
#pragma once
#include <cstddef>
#include <vector>

#include "backend/cpu/blas.h"
#include "backend/row_product.h"
#include "backend/cpu/smoother_sweeps.h"
#include "backend/slots.h"
#include "core/csr_matrix.h"
#include "core/distribution.h"
#include "core/parallel.h"
#include "core/types.h"

namespace jaxamg::cpu {

template <class T>
class VectorBackend {
 public:
  using value_type = T;
  using vector_type = Vector<T>;
  using matrix_type = CsrMatrix<T>;

  // n: entries of a vector on this process; slots: the method's slot count;
  // reducer: sums inner products over processes (nullptr on one process).
  VectorBackend(std::size_t n, int slots, const Reducer* reducer)
      : n_(n), slots_(slots, 0.0), reducer_(reducer) {}

  std::size_t size() const { return n_; }
  int lanes() const { return 1; }
  vector_type make_vector() const { return vector_type(n_, T(0)); }

  // The scalars of the one lane (host memory: the caller may read them).
  double* slots() { return slots_.data(); }
  const double* slots() const { return slots_.data(); }

  // f(s) on the lane's slots.
  template <class F>
  void update(const F& f) {
    f(slots_.data());
  }
  // Whether some lane selected by `mask` exists (host memory: exact).
  bool any(int mask) const { return backend::selected(slots_.data(), mask); }

  // s[slot] = <x, y>, summed over processes; only if `mask` selects the lane.
  void dot(const T* x, const T* y, int slot, int mask = backend::kAllLanes) {
    if (!any(mask)) return;
    double d = cpu::dot(n_, x, y);
    if (reducer_) reducer_->sum(&d, 1);
    slots_[slot] = d;
  }
  // s[slot + i] = <xs[i], y> for i < count, summed over processes in one
  // reduction; only if `mask` selects the lane.
  void dots(const T* const* xs, int count, const T* y, int slot, int mask = backend::kAllLanes) {
    if (!any(mask) || count < 1) return;
    double* out = slots_.data() + slot;
    for (int i = 0; i < count; ++i) out[i] = cpu::dot(n_, xs[i], y);
    if (reducer_) reducer_->sum(out, count);
  }
  // y = the host array `values` (here: a copy).
  void upload(const T* values, T* y) { cpu::copy(n_, values, y); }
  // y = 0; only if `mask` selects the lane.
  void fill_zero(T* y, int mask = backend::kAllLanes) {
    if (any(mask)) cpu::fill<T>(n_, T(0), y);
  }
  void copy(const T* x, T* y, int mask) {
    if (any(mask)) cpu::copy(n_, x, y);
  }
  // y += a x
  void axpy(backend::Coef a, const T* x, T* y, int mask) {
    if (any(mask)) cpu::axpy<T>(n_, coef(a), x, y);
  }
  // y = x + b y
  void xpby(const T* x, backend::Coef b, T* y, int mask) {
    if (any(mask)) cpu::axpby<T>(n_, T(1), x, coef(b), y);
  }
  // y = a x + b y
  void axpby(backend::Coef a, const T* x, backend::Coef b, T* y, int mask) {
    if (any(mask)) cpu::axpby<T>(n_, coef(a), x, coef(b), y);
  }
  // x = a x
  void scale(backend::Coef a, T* x, int mask) {
    if (any(mask)) cpu::scale<T>(n_, coef(a), x);
  }
  // z = a x + b y + c z
  void axpbypcz(backend::Coef a, const T* x, backend::Coef b, const T* y, backend::Coef c, T* z,
                int mask) {
    if (any(mask)) cpu::axpbypcz<T>(n_, coef(a), x, coef(b), y, coef(c), z);
  }

  // ---- row sweeps of the smoothers (every lane: a smoother has no stops) ----

  // x = d .* b: a diagonal sweep from a zero guess.
  void diagonal_scale(const T* d, const T* b, T* x) {
    for_rows([=](Index i) { x[i] = d[i] * b[i]; });
  }
  // x_out = x + d .* (b - A x), one pass (x_out apart from x: neighbours
  // read x).
  void diagonal_sweep(const CsrMatrix<T>& A, const T* d, const T* b, const T* x, T* x_out) {
    if (A.dist) {
      A.dist->residual(A, x, b, x_out);
      for_rows([=](Index i) { x_out[i] = x[i] + d[i] * x_out[i]; });
      return;
    }
    const Index* rp = A.row_ptr.data();
    const Index* ci = A.col.data();
    const T* v = A.val.data();
    for_rows([=](Index i) {
      x_out[i] = x[i] + d[i] * backend::csr_row_residual(b[i], rp, ci, v, x, i);
    });
  }
  // The first Chebyshev step from a zero guess: p = d .* b, x = alpha p.
  void chebyshev_start(const T* d, const T* b, T alpha, T* p, T* x) {
    for_rows([=](Index i) {
      const T pi = d[i] * b[i];
      p[i] = pi;
      x[i] = alpha * pi;
    });
  }
  // A Chebyshev step in one pass: p = d .* (b - A x) + beta p (p = d .*
  // (b - A x) when `first`), x_out = x + alpha p (x_out apart from x).
  void chebyshev_step(const CsrMatrix<T>& A, const T* d, const T* b, T alpha, T beta, bool first,
                      T* p, const T* x, T* x_out) {
    if (A.dist) {
      A.dist->residual(A, x, b, x_out);
      for_rows([=](Index i) {
        const T pi = first ? d[i] * x_out[i] : d[i] * x_out[i] + beta * p[i];
        p[i] = pi;
        x_out[i] = x[i] + alpha * pi;
      });
      return;
    }
    const Index* rp = A.row_ptr.data();
    const Index* ci = A.col.data();
    const T* v = A.val.data();
    for_rows([=](Index i) {
      const T ri = backend::csr_row_residual(b[i], rp, ci, v, x, i);
      const T pi = first ? d[i] * ri : d[i] * ri + beta * p[i];
      p[i] = pi;
      x_out[i] = x[i] + alpha * pi;
    });
  }

  // The colour-ordered sweeps of the multicolour smoothers (smoother_sweeps.h).
  void gs_rows(const CsrMatrix<T>& A, const Index* rows, Index p0, Index p1,
               backend::BlockScale<T> scale, const T* b, T* x) {
    cpu::gs_rows(A, rows, p0, p1, scale, b, x);
  }
  // A block Jacobi sweep by node (smoother_sweeps.h), r: n entries of work.
  void block_jacobi_sweep(const CsrMatrix<T>& A, backend::BlockScale<T> scale, const T* b, T* x,
                          bool x_is_zero, T* r) {
    cpu::block_jacobi_sweep(A, scale, b, x, x_is_zero, r);
  }
  template <class Factors>
  void lower_solve(const Factors& f, Index p0, Index p1, const T* b, const T* x, bool x_is_zero,
                   T* z) {
    cpu::lower_solve(f, p0, p1, b, x, x_is_zero, z);
  }
  template <class Factors>
  void upper_solve(const Factors& f, Index p0, Index p1, T w, T* z, T* x, bool x_is_zero) {
    cpu::upper_solve(f, p0, p1, w, z, x, x_is_zero);
  }

  // out += sum_i s[coef + i] v[i] over i in [s[range], s[range + 1]), two
  // vectors per pass.
  void combine(T* const* v, int coef, int range, T* out, int mask) {
    if (!any(mask)) return;
    const double* s = slots_.data();
    int i = static_cast<int>(s[range]);
    const int end = static_cast<int>(s[range + 1]);
    for (; i + 1 < end; i += 2) {
      cpu::axpbypcz<T>(n_, static_cast<T>(s[coef + i]), v[i], static_cast<T>(s[coef + i + 1]),
                       v[i + 1], T(1), out);
    }
    if (i < end) cpu::axpy<T>(n_, static_cast<T>(s[coef + i]), v[i], out);
  }
  // The vector of table[s[index] + offset]: with one lane that is the
  // table's own vector (nothing is copied; `scratch` stays empty), which
  // the caller may also write and then scatter() back as a no-op.
  T* gather(T* const* table, int index, int offset, vector_type* /*scratch*/, int /*mask*/,
            bool /*read*/) {
    return table[static_cast<int>(slots_[index]) + offset];
  }
  void scatter(const T* x, T* const* table, int index, int offset, int mask) {
    if (any(mask)) cpu::copy(n_, x, table[static_cast<int>(slots_[index]) + offset]);
  }
  // Work space for a vector that only the selected lanes need: with one
  // lane, `reusable` itself.
  T* lane_work(T* reusable, vector_type* /*scratch*/) { return reusable; }

 private:
  // body(i) for the rows of a vector, in parallel above kParallelRows.
  template <class Body>
  void for_rows(Body&& body) const {
    const Index n = static_cast<Index>(n_);
    if (n <= kParallelRows) {
      for (Index i = 0; i < n; ++i) body(i);
      return;
    }
#pragma omp parallel for schedule(static)
    for (Index i = 0; i < n; ++i) body(i);
  }

  T coef(backend::Coef c) const { return static_cast<T>(c.value(slots_.data())); }

  std::size_t n_;
  std::vector<double> slots_;
  const Reducer* reducer_;
};

}  // namespace jaxamg::cpu
