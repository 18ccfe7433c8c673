// Vector and sparse kernels of the CPU backend (OpenMP). Every algorithm of
// the engine moves data through these functions, so a second backend only
// has to provide the same set.
#pragma once
#include <cstddef>

#include "core/csr_matrix.h"
#include "core/types.h"

namespace jaxamg::cpu {

// y = A x
template <class T>
void spmv(const CsrMatrix<T>& A, const T* x, T* y);
// r = b - A x
template <class T>
void residual(const CsrMatrix<T>& A, const T* x, const T* b, T* r);
// y = alpha A x + beta y
template <class T>
void spmv_axpby(const CsrMatrix<T>& A, T alpha, const T* x, T beta, T* y);

// Restriction by P^T without storing it, fused with the residual:
//   y = P^T (b - A x)   (y = P^T b when x is null),
// also writing b - A x to r when r is non-null. Each thread scatters its rows
// into its own partial sums, which are then added up: the first thread's in
// y, the others' in `work` (restrict_work_size(P, threads) entries, m for
// each thread but the first; at most `threads` threads run).
template <class T>
std::size_t restrict_work_size(const CsrMatrix<T>& P, int threads);
template <class T>
void restrict_residual(const CsrMatrix<T>& A, const T* x, const T* b, const CsrMatrix<T>& P,
                       T* y, T* r, T* work, std::size_t work_size);

// Dot products and norms accumulate in double for float vectors.
template <class T>
double dot(std::size_t n, const T* x, const T* y);
template <class T>
double norm(std::size_t n, const T* x, NormType type);

template <class T>
void copy(std::size_t n, const T* x, T* y);
template <class T>
void fill(std::size_t n, T value, T* y);
template <class T>
void scale(std::size_t n, T alpha, T* x);
// y = alpha x + y
template <class T>
void axpy(std::size_t n, T alpha, const T* x, T* y);
// y = alpha x + beta y
template <class T>
void axpby(std::size_t n, T alpha, const T* x, T beta, T* y);
// z = alpha x + beta y + gamma z
template <class T>
void axpbypcz(std::size_t n, T alpha, const T* x, T beta, const T* y, T gamma, T* z);
// y = x .* d (elementwise)
template <class T>
void pointwise_mult(std::size_t n, const T* d, const T* x, T* y);
// true if every entry is finite
template <class T>
bool all_finite(std::size_t n, const T* x);

}  // namespace jaxamg::cpu
