#include "backend/cpu/blas.h"

#include <algorithm>
#include <cmath>

namespace jaxamg::cpu {

namespace {
// Below this many entries OpenMP's fork/join costs more than the loop.
constexpr std::ptrdiff_t kParallelMin = 8192;
}  // namespace

template <class T>
void spmv(const CsrMatrix<T>& A, const T* x, T* y) {
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
#pragma omp parallel for schedule(static) if (A.nrows > kParallelMin)
  for (Index i = 0; i < A.nrows; ++i) {
    T s = 0;
    for (Index k = rp[i]; k < rp[i + 1]; ++k) s += v[k] * x[ci[k]];
    y[i] = s;
  }
}

template <class T>
void residual(const CsrMatrix<T>& A, const T* x, const T* b, T* r) {
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
#pragma omp parallel for schedule(static) if (A.nrows > kParallelMin)
  for (Index i = 0; i < A.nrows; ++i) {
    T s = b[i];
    for (Index k = rp[i]; k < rp[i + 1]; ++k) s -= v[k] * x[ci[k]];
    r[i] = s;
  }
}

template <class T>
void spmv_axpby(const CsrMatrix<T>& A, T alpha, const T* x, T beta, T* y) {
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
#pragma omp parallel for schedule(static) if (A.nrows > kParallelMin)
  for (Index i = 0; i < A.nrows; ++i) {
    T s = 0;
    for (Index k = rp[i]; k < rp[i + 1]; ++k) s += v[k] * x[ci[k]];
    y[i] = alpha * s + (beta == T(0) ? T(0) : beta * y[i]);
  }
}

template <class T>
double dot(std::size_t n, const T* x, const T* y) {
  double s = 0;
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for reduction(+ : s) schedule(static) if (m > kParallelMin)
  for (std::ptrdiff_t i = 0; i < m; ++i) s += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  return s;
}

template <class T>
double norm(std::size_t n, const T* x, NormType type) {
  const auto m = static_cast<std::ptrdiff_t>(n);
  double s = 0;
  switch (type) {
    case NormType::kL2:
      return std::sqrt(dot(n, x, x));
    case NormType::kL1:
#pragma omp parallel for reduction(+ : s) schedule(static) if (m > kParallelMin)
      for (std::ptrdiff_t i = 0; i < m; ++i) s += std::abs(static_cast<double>(x[i]));
      return s;
    case NormType::kLMax:
#pragma omp parallel for reduction(max : s) schedule(static) if (m > kParallelMin)
      for (std::ptrdiff_t i = 0; i < m; ++i) {
        const double a = std::abs(static_cast<double>(x[i]));
        // NaN must not vanish in the max: propagate it.
        s = (a > s || a != a) ? a : s;
      }
      return s;
  }
  return s;
}

template <class T>
void copy(std::size_t n, const T* x, T* y) {
  if (x != y) std::copy(x, x + n, y);
}

template <class T>
void fill(std::size_t n, T value, T* y) {
  std::fill(y, y + n, value);
}

template <class T>
void scale(std::size_t n, T alpha, T* x) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (m > kParallelMin)
  for (std::ptrdiff_t i = 0; i < m; ++i) x[i] *= alpha;
}

template <class T>
void axpy(std::size_t n, T alpha, const T* x, T* y) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (m > kParallelMin)
  for (std::ptrdiff_t i = 0; i < m; ++i) y[i] += alpha * x[i];
}

template <class T>
void axpby(std::size_t n, T alpha, const T* x, T beta, T* y) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (m > kParallelMin)
  for (std::ptrdiff_t i = 0; i < m; ++i) y[i] = alpha * x[i] + beta * y[i];
}

template <class T>
void axpbypcz(std::size_t n, T alpha, const T* x, T beta, const T* y, T gamma, T* z) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (m > kParallelMin)
  for (std::ptrdiff_t i = 0; i < m; ++i) z[i] = alpha * x[i] + beta * y[i] + gamma * z[i];
}

template <class T>
void pointwise_mult(std::size_t n, const T* d, const T* x, T* y) {
  const auto m = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for schedule(static) if (m > kParallelMin)
  for (std::ptrdiff_t i = 0; i < m; ++i) y[i] = d[i] * x[i];
}

template <class T>
bool all_finite(std::size_t n, const T* x) {
  const auto m = static_cast<std::ptrdiff_t>(n);
  int bad = 0;
#pragma omp parallel for reduction(| : bad) schedule(static) if (m > kParallelMin)
  for (std::ptrdiff_t i = 0; i < m; ++i) bad |= !std::isfinite(x[i]);
  return bad == 0;
}

#define JAXAMG_INSTANTIATE(T)                                                          \
  template void spmv(const CsrMatrix<T>&, const T*, T*);                               \
  template void residual(const CsrMatrix<T>&, const T*, const T*, T*);                 \
  template void spmv_axpby(const CsrMatrix<T>&, T, const T*, T, T*);                   \
  template double dot(std::size_t, const T*, const T*);                                \
  template double norm(std::size_t, const T*, NormType);                               \
  template void copy(std::size_t, const T*, T*);                                       \
  template void fill(std::size_t, T, T*);                                              \
  template void scale(std::size_t, T, T*);                                             \
  template void axpy(std::size_t, T, const T*, T*);                                    \
  template void axpby(std::size_t, T, const T*, T, T*);                                \
  template void axpbypcz(std::size_t, T, const T*, T, const T*, T, T*);                \
  template void pointwise_mult(std::size_t, const T*, const T*, T*);                   \
  template bool all_finite(std::size_t, const T*);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)

}  // namespace jaxamg::cpu
