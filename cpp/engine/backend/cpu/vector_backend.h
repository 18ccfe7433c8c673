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
#include "backend/slots.h"
#include "core/distribution.h"
#include "core/types.h"

namespace jaxamg::cpu {

template <class T>
class VectorBackend {
 public:
  using value_type = T;
  using vector_type = Vector<T>;

  // n: entries of a vector on this process; slots: the method's slot count;
  // reducer: sums inner products over processes (nullptr on one process).
  VectorBackend(std::size_t n, int slots, const Reducer* reducer)
      : n_(n), slots_(slots, 0.0), reducer_(reducer) {}

  std::size_t size() const { return n_; }
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
  void fill_zero(T* y) { cpu::fill<T>(n_, T(0), y); }
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
  T coef(backend::Coef c) const { return static_cast<T>(c.value(slots_.data())); }

  std::size_t n_;
  std::vector<double> slots_;
  const Reducer* reducer_;
};

}  // namespace jaxamg::cpu
