#include "solvers/krylov/arnoldi.h"

#include <cmath>

#include "backend/cpu/blas.h"

namespace jaxamg::krylov {

template <class T>
double orthogonalize(std::size_t n, const T* const* basis, int count, double* h, T* w,
                     const Reducer* reduce) {
  auto dot = [&](const T* a, const T* b) {
    double d = cpu::dot(n, a, b);
    if (reduce) reduce->sum(&d, 1);
    return d;
  };
  auto norm = [&]() {
    if (!reduce) return cpu::norm(n, w, NormType::kL2);
    return std::sqrt(dot(w, w));
  };
  // Modified rather than classical Gram-Schmidt: each coefficient is taken
  // from the partly orthogonalised w.
  double h2 = 0;
  for (int i = 0; i < count; ++i) {
    h[i] = dot(w, basis[i]);
    cpu::axpy<T>(n, static_cast<T>(-h[i]), basis[i], w);
    h2 += h[i] * h[i];
  }
  double hn = norm();
  // When most of w lay in the basis (|w_after|^2 < |w_before|^2 / 2, with
  // |w_before|^2 = |h|^2 + |w_after|^2), the remainder is dominated by
  // rounding and still leans on the basis; a second pass makes it
  // orthogonal (Daniel-Gragg-Kaufman-Stewart). Near an invariant subspace
  // this is what lets the method see that nothing new is left.
  if (hn * hn < 0.5 * (h2 + hn * hn)) {
    for (int i = 0; i < count; ++i) {
      const double d = dot(w, basis[i]);
      cpu::axpy<T>(n, static_cast<T>(-d), basis[i], w);
      h[i] += d;
    }
    hn = norm();
  }
  return hn;
}

template <class T>
void add_combination(std::size_t n, const T* const* basis, int count, const double* y, T* out) {
  int i = 0;
  for (; i + 1 < count; i += 2) {
    cpu::axpbypcz<T>(n, static_cast<T>(y[i]), basis[i], static_cast<T>(y[i + 1]), basis[i + 1],
                     T(1), out);
  }
  if (i < count) cpu::axpy<T>(n, static_cast<T>(y[i]), basis[i], out);
}

template double orthogonalize(std::size_t, const float* const*, int, double*, float*,
                              const Reducer*);
template double orthogonalize(std::size_t, const double* const*, int, double*, double*,
                              const Reducer*);
template void add_combination(std::size_t, const float* const*, int, const double*, float*);
template void add_combination(std::size_t, const double* const*, int, const double*, double*);

}  // namespace jaxamg::krylov
