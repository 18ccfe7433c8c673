#include "backend/lanes/multivector.h"

#include "backend/lanes/row_kernels.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace jaxamg::lanes {

using rows::for_each_row;
using rows::kChunk;
using rows::kParallelMin;
using rows::row_lanes;
using rows::with_width;

namespace {

// Y's rows from the products (A X)_i, k columns at a time: store(y, s, W)
// writes the W.value products s of row i's columns into y.
template <class T, class Store>
void row_products(const CsrMatrix<T>& A, const T* X, T* Y, int k, Store store) {
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  for_each_row(A.nrows, k, [=](std::ptrdiff_t i) {
    T* y = Y + static_cast<std::size_t>(i) * k;
    for (int j0 = 0; j0 < k; j0 += kChunk) {
      with_width(std::min(kChunk, k - j0), [&](auto W) {
        T acc[W.value];
        row_lanes<W.value, 1, T>(ci, v, rp[i], rp[i + 1], X, k, j0, nullptr, acc);
        store(y + j0, acc, W);
      });
    }
  });
}

}  // namespace

template <class T>
void spmv(const CsrMatrix<T>& A, const T* X, T* Y, int k) {
  row_products(A, X, Y, k, [](T* y, const T* s, auto W) {
    for (int j = 0; j < W.value; ++j) y[j] = s[j];
  });
}

template <class T>
void residual(const CsrMatrix<T>& A, const T* X, const T* B, T* R, int k) {
  rows::residual_rows(A, X, B, k, [=](Index i, int j0, auto W, const T* r) {
    T* out = R + static_cast<std::size_t>(i) * k + j0;
    for (int j = 0; j < W.value; ++j) out[j] = r[j];
  });
}

template <class T>
void spmv_add(const CsrMatrix<T>& A, const T* X, T* Y, int k) {
  // cpu::spmv_axpby with alpha = beta = 1: y = 1 * s + 1 * y.
  row_products(A, X, Y, k, [](T* y, const T* s, auto W) {
    for (int j = 0; j < W.value; ++j) y[j] = s[j] + y[j];
  });
}

template <class T>
std::size_t restrict_work_size(const CsrMatrix<T>& P, int threads, int k) {
  if (threads <= 1 || P.nrows <= kParallelMin) return 0;
  return static_cast<std::size_t>(threads) * static_cast<std::size_t>(P.ncols) * k;
}

namespace {

// Y = P^T r without forming P^T, r being the rows' residuals that
// row_residual(i, j0, W, ri) forms for lanes [j0, j0 + W) of row i: each
// thread scatters its rows into its own partial sums in `work`, added up in
// thread order (cpu::restrict_residual's scheme).
template <class T, class RowResidual>
void restrict_rows(const CsrMatrix<T>& P, T* Y, T* work, std::size_t work_size, int k,
                   const RowResidual& row_residual) {
  const Index n = P.nrows;
  const Index m = P.ncols;
  const std::size_t mk = static_cast<std::size_t>(m) * k;
  const Index* prp = P.row_ptr.data();
  const Index* pci = P.col.data();
  const T* pv = P.val.data();
  auto row = [&](Index i, T* acc) {
    for (int j0 = 0; j0 < k; j0 += kChunk) {
      with_width(std::min(kChunk, k - j0), [&](auto W) {
        T ri[W.value];
        row_residual(i, j0, W, ri);
        pack::Pack<T, W.value> r;
        r.load(ri);
        for (Index p = prp[i]; p < prp[i + 1]; ++p) {
          r.scatter_scaled(pv[p], acc + static_cast<std::size_t>(pci[p]) * k + j0);
        }
      });
    }
  };
  const int avail = mk > 0 ? static_cast<int>(work_size / mk) : 0;
  const int threads = std::min(omp_get_max_threads(), avail);
  if (n <= kParallelMin || threads <= 1) {
    std::fill(Y, Y + mk, T(0));
    for (Index i = 0; i < n; ++i) row(i, Y);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const int nth = omp_get_num_threads();
    T* acc = work + static_cast<std::size_t>(omp_get_thread_num()) * mk;
    std::fill(acc, acc + mk, T(0));
#pragma omp for schedule(static)
    for (Index i = 0; i < n; ++i) row(i, acc);
#pragma omp for schedule(static)
    for (Index c = 0; c < m; ++c) {
      for (int j = 0; j < k; ++j) {
        const std::size_t e = static_cast<std::size_t>(c) * k + j;
        T s = 0;
        for (int u = 0; u < nth; ++u) s += work[static_cast<std::size_t>(u) * mk + e];
        Y[e] = s;
      }
    }
  }
}

}  // namespace

template <class T>
void restrict_residual(const CsrMatrix<T>& A, const T* X, const T* B, const CsrMatrix<T>& P,
                       T* Y, T* work, std::size_t work_size, int k) {
  const Index* arp = A.row_ptr.data();
  const Index* aci = A.col.data();
  const T* av = A.val.data();
  restrict_rows(P, Y, work, work_size, k, [=](Index i, int j0, auto W, T* ri) {
    const T* b = B + static_cast<std::size_t>(i) * k + j0;
    if (X) {
      row_lanes<W.value, -1, T>(aci, av, arp[i], arp[i + 1], X, k, j0, b, ri);
    } else {
      for (int j = 0; j < W.value; ++j) ri[j] = b[j];
    }
  });
}

template <class T>
void restrict_diagonal_start(const CsrMatrix<T>& A, const T* d, const T* B,
                             const CsrMatrix<T>& P, T* X, T* Y, T* work, std::size_t work_size,
                             int k) {
  const Index* arp = A.row_ptr.data();
  const Index* aci = A.col.data();
  const T* av = A.val.data();
  restrict_rows(P, Y, work, work_size, k, [=](Index i, int j0, auto W, T* ri) {
    const std::size_t o = static_cast<std::size_t>(i) * k + j0;
    for (int j = 0; j < W.value; ++j) X[o + j] = d[i] * B[o + j];
    // x_c = d_c b_c is recomputed in T, the value the separate sweep stores.
    pack::Pack<T, W.value> r;
    r.load(B + o);
    rows::row_lanes_by<-1>(arp[i], arp[i + 1], r, [=](auto& acc, Index p, auto sign) {
      acc.template add_scaled_product<decltype(sign)::value>(
          av[p], d[aci[p]], B + static_cast<std::size_t>(aci[p]) * k + j0);
    });
    r.store(ri);
  });
}

namespace {

// out[j] += sum_{i in [i0, i1)} term(i, j) for lanes [j0, j0 + W), in local
// accumulators (out may alias nothing the terms read, but the compiler cannot
// know), summing over i in order as blas.cc does per vector.
template <int W, class Term>
inline void lane_chunk_sums(std::ptrdiff_t i0, std::ptrdiff_t i1, int j0, double* out,
                            const Term& term) {
  double acc[W];
  for (int j = 0; j < W; ++j) acc[j] = out[j0 + j];
  for (std::ptrdiff_t i = i0; i < i1; ++i)
    for (int j = 0; j < W; ++j) acc[j] += term(i, j0 + j);
  for (int j = 0; j < W; ++j) out[j0 + j] = acc[j];
}

template <class Term>
inline void range_sums(std::ptrdiff_t i0, std::ptrdiff_t i1, int k, double* out,
                       const Term& term) {
  for (int j0 = 0; j0 < k; j0 += kChunk) {
    with_width(std::min(kChunk, k - j0),
               [&](auto W) { lane_chunk_sums<W.value>(i0, i1, j0, out, term); });
  }
}

// out[j] = sum_i term(i, j) in double, per lane; threads keep their own
// partial sums over their static block of rows, added in thread order.
template <class Term>
void lane_sums(std::ptrdiff_t n, int k, double* out, Term&& term) {
  std::fill(out, out + k, 0.0);
  if (n <= kParallelMin) {
    range_sums(0, n, k, out, term);
    return;
  }
  std::vector<double> part;
#pragma omp parallel
  {
    const int nth = omp_get_num_threads();
    const int me = omp_get_thread_num();
#pragma omp single
    part.assign(static_cast<std::size_t>(nth) * k, 0.0);
    // The rows of schedule(static) without a chunk size.
    const std::ptrdiff_t q = n / nth, rem = n % nth;
    const std::ptrdiff_t i0 = me * q + std::min<std::ptrdiff_t>(me, rem);
    const std::ptrdiff_t i1 = i0 + q + (me < rem ? 1 : 0);
    range_sums(i0, i1, k, part.data() + static_cast<std::size_t>(me) * k, term);
  }
  const std::size_t threads = part.size() / k;
  for (std::size_t u = 0; u < threads; ++u)
    for (int j = 0; j < k; ++j) out[j] += part[u * k + j];
}

// A lane mask as ints (a uint8_t mask aliases every store, which stops the
// compiler from vectorising), or null when every lane is on.
struct LaneMask {
  LaneMask(const std::uint8_t* on, int k) {
    if (!on || std::all_of(on, on + k, [](std::uint8_t v) { return v != 0; })) return;
    bits.assign(on, on + k);
    mask = bits.data();
  }
  std::vector<int> bits;
  const int* mask = nullptr;
};

}  // namespace

template <class T>
void dot(std::size_t n, int k, const T* X, const T* Y, double* out) {
  lane_sums(static_cast<std::ptrdiff_t>(n), k, out, [=](std::ptrdiff_t i, int j) {
    const std::size_t e = static_cast<std::size_t>(i) * k + j;
    return static_cast<double>(X[e]) * static_cast<double>(Y[e]);
  });
}

template <class T>
void norm(std::size_t n, int k, const T* X, NormType type, double* out) {
  switch (type) {
    case NormType::kL2:
      dot(n, k, X, X, out);
      for (int j = 0; j < k; ++j) out[j] = std::sqrt(out[j]);
      return;
    case NormType::kL1:
      lane_sums(static_cast<std::ptrdiff_t>(n), k, out, [=](std::ptrdiff_t i, int j) {
        return std::abs(static_cast<double>(X[static_cast<std::size_t>(i) * k + j]));
      });
      return;
    case NormType::kLMax:
      std::fill(out, out + k, 0.0);
      for (std::size_t i = 0; i < n; ++i) {
        for (int j = 0; j < k; ++j) {
          const double a = std::abs(static_cast<double>(X[i * k + j]));
          // NaN must not vanish in the max: propagate it.
          out[j] = (a > out[j] || a != a) ? a : out[j];
        }
      }
      return;
  }
}

template <class T>
void copy(std::size_t n, int k, const T* X, T* Y, const std::uint8_t* on) {
  if (X == Y) return;
  const LaneMask lm(on, k);
  const int* m = lm.mask;
  for_each_row(static_cast<std::ptrdiff_t>(n), k, [=](std::ptrdiff_t i) {
    const std::size_t o = static_cast<std::size_t>(i) * k;
    if (!m) {
      for (int j = 0; j < k; ++j) Y[o + j] = X[o + j];
    } else {
      for (int j = 0; j < k; ++j)
        if (m[j]) Y[o + j] = X[o + j];
    }
  });
}

template <class T>
void fill(std::size_t n, int k, T value, T* Y, const std::uint8_t* on) {
  const LaneMask lm(on, k);
  const int* m = lm.mask;
  for_each_row(static_cast<std::ptrdiff_t>(n), k, [=](std::ptrdiff_t i) {
    const std::size_t o = static_cast<std::size_t>(i) * k;
    if (!m) {
      for (int j = 0; j < k; ++j) Y[o + j] = value;
    } else {
      for (int j = 0; j < k; ++j)
        if (m[j]) Y[o + j] = value;
    }
  });
}

template <class T>
void axpy(std::size_t n, int k, const T* a, const T* X, T* Y, const std::uint8_t* on) {
  const LaneMask lm(on, k);
  const int* m = lm.mask;
  for_each_row(static_cast<std::ptrdiff_t>(n), k, [=](std::ptrdiff_t i) {
    const std::size_t o = static_cast<std::size_t>(i) * k;
    if (!m) {
      for (int j = 0; j < k; ++j) Y[o + j] += a[j] * X[o + j];
    } else {
      for (int j = 0; j < k; ++j)
        if (m[j]) Y[o + j] += a[j] * X[o + j];
    }
  });
}

template <class T>
void xpby(std::size_t n, int k, const T* X, const T* b, T* Y, const std::uint8_t* on) {
  const LaneMask lm(on, k);
  const int* m = lm.mask;
  for_each_row(static_cast<std::ptrdiff_t>(n), k, [=](std::ptrdiff_t i) {
    const std::size_t o = static_cast<std::size_t>(i) * k;
    if (!m) {
      for (int j = 0; j < k; ++j) Y[o + j] = X[o + j] + b[j] * Y[o + j];
    } else {
      for (int j = 0; j < k; ++j)
        if (m[j]) Y[o + j] = X[o + j] + b[j] * Y[o + j];
    }
  });
}

template <class T>
void axpbypcz(std::size_t n, int k, const T* a, const T* X, const T* b, const T* Y, const T* c,
              T* Z, const std::uint8_t* on) {
  const LaneMask lm(on, k);
  const int* m = lm.mask;
  for_each_row(static_cast<std::ptrdiff_t>(n), k, [=](std::ptrdiff_t i) {
    const std::size_t o = static_cast<std::size_t>(i) * k;
    if (!m) {
      for (int j = 0; j < k; ++j) Z[o + j] = a[j] * X[o + j] + b[j] * Y[o + j] + c[j] * Z[o + j];
    } else {
      for (int j = 0; j < k; ++j)
        if (m[j]) Z[o + j] = a[j] * X[o + j] + b[j] * Y[o + j] + c[j] * Z[o + j];
    }
  });
}

template <class T>
void all_finite(std::size_t n, int k, const T* X, std::uint8_t* out) {
  std::fill(out, out + k, std::uint8_t(1));
  for (std::size_t i = 0; i < n; ++i)
    for (int j = 0; j < k; ++j)
      if (!std::isfinite(X[i * k + j])) out[j] = 0;
}

template <class T>
void select_lanes(std::size_t n, int k, const T* X, const int* keep, int m, T* Y) {
  for_each_row(static_cast<std::ptrdiff_t>(n), k, [=](std::ptrdiff_t i) {
    const T* src = X + static_cast<std::size_t>(i) * k;
    T* dst = Y + static_cast<std::size_t>(i) * m;
    for (int j = 0; j < m; ++j) dst[j] = src[keep[j]];
  });
}

template <class T>
void get_lane(std::size_t n, int k, int j, const T* X, T* v) {
  for_each_row(static_cast<std::ptrdiff_t>(n), 1, [=](std::ptrdiff_t i) {
    v[i] = X[static_cast<std::size_t>(i) * k + j];
  });
}

template <class T>
void set_lane(std::size_t n, int k, int j, const T* v, T* X) {
  for_each_row(static_cast<std::ptrdiff_t>(n), 1, [=](std::ptrdiff_t i) {
    X[static_cast<std::size_t>(i) * k + j] = v[i];
  });
}

#define JAXAMG_INSTANTIATE(T)                                                                 \
  template void spmv(const CsrMatrix<T>&, const T*, T*, int);                                 \
  template void residual(const CsrMatrix<T>&, const T*, const T*, T*, int);                   \
  template void spmv_add(const CsrMatrix<T>&, const T*, T*, int);                             \
  template std::size_t restrict_work_size(const CsrMatrix<T>&, int, int);                     \
  template void restrict_residual(const CsrMatrix<T>&, const T*, const T*, const CsrMatrix<T>&, \
                                  T*, T*, std::size_t, int);                                  \
  template void restrict_diagonal_start(const CsrMatrix<T>&, const T*, const T*,              \
                                        const CsrMatrix<T>&, T*, T*, T*, std::size_t, int);   \
  template void dot(std::size_t, int, const T*, const T*, double*);                           \
  template void norm(std::size_t, int, const T*, NormType, double*);                          \
  template void copy(std::size_t, int, const T*, T*, const std::uint8_t*);                    \
  template void fill(std::size_t, int, T, T*, const std::uint8_t*);                           \
  template void axpy(std::size_t, int, const T*, const T*, T*, const std::uint8_t*);          \
  template void xpby(std::size_t, int, const T*, const T*, T*, const std::uint8_t*);          \
  template void axpbypcz(std::size_t, int, const T*, const T*, const T*, const T*, const T*,  \
                         T*, const std::uint8_t*);                                            \
  template void all_finite(std::size_t, int, const T*, std::uint8_t*);                        \
  template void select_lanes(std::size_t, int, const T*, const int*, int, T*);                \
  template void get_lane(std::size_t, int, int, const T*, T*);                                \
  template void set_lane(std::size_t, int, int, const T*, T*);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg::lanes
