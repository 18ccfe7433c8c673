#include "backend/cpu/blas.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "backend/row_product.h"
#include "core/parallel.h"

namespace jaxamg::cpu {

namespace {

// body(i) for i in [0, n): serially below kParallelRows, else in a parallel
// loop. The branch is taken before any OpenMP call: a parallel region with a
// false if-clause still enters the runtime, which costs as much as the whole
// loop on the small coarse levels.
template <class Body>
inline void for_each_row(std::ptrdiff_t n, Body&& body) {
  if (n <= kParallelRows) {
    for (std::ptrdiff_t i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) body(i);
}

// sum of term(i) for i in [0, n), in double, with the same split.
template <class Term>
inline double sum_rows(std::ptrdiff_t n, Term&& term) {
  double s = 0;
  if (n <= kParallelRows) {
    for (std::ptrdiff_t i = 0; i < n; ++i) s += term(i);
    return s;
  }
#pragma omp parallel for reduction(+ : s) schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) s += term(i);
  return s;
}
}  // namespace

template <class T>
void spmv(const CsrMatrix<T>& A, const T* x, T* y) {
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  for_each_row(A.nrows, [=](std::ptrdiff_t i) {
    y[i] = backend::csr_row_product(rp, ci, v, x, static_cast<Index>(i));
  });
}

template <class T>
void residual(const CsrMatrix<T>& A, const T* x, const T* b, T* r) {
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  for_each_row(A.nrows, [=](std::ptrdiff_t i) {
    r[i] = backend::csr_row_residual(b[i], rp, ci, v, x, static_cast<Index>(i));
  });
}

template <class T>
void spmv_axpby(const CsrMatrix<T>& A, T alpha, const T* x, T beta, T* y) {
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  for_each_row(A.nrows, [=](std::ptrdiff_t i) {
    const T s = backend::csr_row_product(rp, ci, v, x, static_cast<Index>(i));
    y[i] = alpha * s + (beta == T(0) ? T(0) : beta * y[i]);
  });
}

template <class T>
std::size_t restrict_work_size(const CsrMatrix<T>& P, int threads) {
  if (threads <= 1 || P.nrows <= kParallelRows) return 0;
  // Thread 0 sums into y itself.
  return static_cast<std::size_t>(threads - 1) * static_cast<std::size_t>(P.ncols);
}

template <class T>
void restrict_residual(const CsrMatrix<T>& A, const T* x, const T* b, const CsrMatrix<T>& P,
                       T* y, T* r, T* work, std::size_t work_size) {
  const Index n = P.nrows;
  const Index m = P.ncols;
  const Index* arp = A.row_ptr.data();
  const Index* aci = A.col.data();
  const T* av = A.val.data();
  const Index* prp = P.row_ptr.data();
  const Index* pci = P.col.data();
  const T* pv = P.val.data();
  // Row i's residual, scattered into acc through row i of P.
  auto row = [=](Index i, T* acc) {
    const T ri = x ? backend::csr_row_residual(b[i], arp, aci, av, x, i) : b[i];
    if (r) r[i] = ri;
    const Index p1 = prp[i + 1];
    for (Index p = prp[i]; p < p1; ++p) acc[pci[p]] += ri * pv[p];
  };
  const int avail = m > 0 ? static_cast<int>(work_size / static_cast<std::size_t>(m)) + 1 : 0;
  const int threads = std::min(omp_get_max_threads(), avail);
  if (n <= kParallelRows || threads <= 1) {
    for (Index j = 0; j < m; ++j) y[j] = T(0);
    for (Index i = 0; i < n; ++i) row(i, y);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int nth = omp_get_num_threads();
    const int tid = omp_get_thread_num();
    // Thread u > 0 scatters into work[(u - 1) m ...]; thread 0 into y.
    T* acc = tid == 0 ? y : work + static_cast<std::size_t>(tid - 1) * m;
    for (Index j = 0; j < m; ++j) acc[j] = T(0);
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) row(i, acc);
#pragma omp for schedule(static)
    for (Index j = 0; j < m; ++j) {
      T s = y[j];
      for (int u = 1; u < nth; ++u) s += work[static_cast<std::size_t>(u - 1) * m + j];
      y[j] = s;
    }
  }
}

template <class T>
double dot(std::size_t n, const T* x, const T* y) {
  return sum_rows(static_cast<std::ptrdiff_t>(n), [=](std::ptrdiff_t i) {
    return static_cast<double>(x[i]) * static_cast<double>(y[i]);
  });
}

template <class T>
double norm(std::size_t n, const T* x, NormType type) {
  const auto m = static_cast<std::ptrdiff_t>(n);
  double s = 0;
  switch (type) {
    case NormType::kL2:
      return std::sqrt(dot(n, x, x));
    case NormType::kL1:
      return sum_rows(m, [=](std::ptrdiff_t i) { return std::abs(static_cast<double>(x[i])); });
    case NormType::kLMax:
#pragma omp parallel for reduction(max : s) schedule(static) if (m > kParallelRows)
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
  if (x != y) for_each_row(static_cast<std::ptrdiff_t>(n), [=](std::ptrdiff_t i) { y[i] = x[i]; });
}

template <class T>
void fill(std::size_t n, T value, T* y) {
  for_each_row(static_cast<std::ptrdiff_t>(n), [=](std::ptrdiff_t i) { y[i] = value; });
}

template <class T>
void scale(std::size_t n, T alpha, T* x) {
  for_each_row(static_cast<std::ptrdiff_t>(n), [=](std::ptrdiff_t i) { x[i] *= alpha; });
}

template <class T>
void axpy(std::size_t n, T alpha, const T* x, T* y) {
  for_each_row(static_cast<std::ptrdiff_t>(n), [=](std::ptrdiff_t i) { y[i] += alpha * x[i]; });
}

template <class T>
void axpby(std::size_t n, T alpha, const T* x, T beta, T* y) {
  for_each_row(static_cast<std::ptrdiff_t>(n),
               [=](std::ptrdiff_t i) { y[i] = alpha * x[i] + beta * y[i]; });
}

template <class T>
void axpbypcz(std::size_t n, T alpha, const T* x, T beta, const T* y, T gamma, T* z) {
  for_each_row(static_cast<std::ptrdiff_t>(n), [=](std::ptrdiff_t i) {
    z[i] = alpha * x[i] + beta * y[i] + gamma * z[i];
  });
}

template <class T>
void pointwise_mult(std::size_t n, const T* d, const T* x, T* y) {
  for_each_row(static_cast<std::ptrdiff_t>(n), [=](std::ptrdiff_t i) { y[i] = d[i] * x[i]; });
}

template <class T>
bool all_finite(std::size_t n, const T* x) {
  const auto m = static_cast<std::ptrdiff_t>(n);
  int bad = 0;
#pragma omp parallel for reduction(| : bad) schedule(static) if (m > kParallelRows)
  for (std::ptrdiff_t i = 0; i < m; ++i) bad |= !std::isfinite(x[i]);
  return bad == 0;
}

#define JAXAMG_INSTANTIATE(T)                                                          \
  template void spmv(const CsrMatrix<T>&, const T*, T*);                               \
  template void residual(const CsrMatrix<T>&, const T*, const T*, T*);                 \
  template std::size_t restrict_work_size(const CsrMatrix<T>&, int);                   \
  template void restrict_residual(const CsrMatrix<T>&, const T*, const T*,              \
                                  const CsrMatrix<T>&, T*, T*, T*, std::size_t);      \
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
