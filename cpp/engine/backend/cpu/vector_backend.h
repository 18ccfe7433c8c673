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
  // z = a x + b y + c z
  void axpbypcz(backend::Coef a, const T* x, backend::Coef b, const T* y, backend::Coef c, T* z,
                int mask) {
    if (any(mask)) cpu::axpbypcz<T>(n_, coef(a), x, coef(b), y, coef(c), z);
  }

 private:
  T coef(backend::Coef c) const { return static_cast<T>(c.value(slots_.data())); }

  std::size_t n_;
  std::vector<double> slots_;
  const Reducer* reducer_;
};

}  // namespace jaxamg::cpu
