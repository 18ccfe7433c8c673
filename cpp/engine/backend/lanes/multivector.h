// Kernels on blocks of k vectors stored lane-interleaved: a block of k
// vectors of length n is a row-major n x k array, entry (i, j) at i * k + j,
// so one pass over a sparse matrix serves every lane (the matrix is streamed
// once per product, whatever k is). Every kernel does, lane by lane, the
// arithmetic of its single-vector counterpart in backend/cpu/blas.h in the
// same order, so a lane of a block gives the same numbers as a solve of that
// lane alone (reductions summed by threads up to rounding, as blas.h does).
//
// Per-lane coefficients come as arrays of k values; `on` (k flags, or null
// for all lanes) selects the lanes an update may write, so that a lane whose
// recurrence stopped keeps its vectors while the others go on.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/csr_matrix.h"
#include "core/types.h"

namespace jaxamg::lanes {

// Y = A X
template <class T>
void spmv(const CsrMatrix<T>& A, const T* X, T* Y, int k);
// R = B - A X
template <class T>
void residual(const CsrMatrix<T>& A, const T* X, const T* B, T* R, int k);
// Y += A X (the prolongation of a coarse correction: x += P x_c)
template <class T>
void spmv_add(const CsrMatrix<T>& A, const T* X, T* Y, int k);

// Y = P^T (B - A X) (Y = P^T B when X is null) without forming P^T, as
// cpu::restrict_residual: each thread scatters its rows into its own partial
// sums in `work` (restrict_work_size entries), added up in thread order.
template <class T>
std::size_t restrict_work_size(const CsrMatrix<T>& P, int threads, int k);
template <class T>
void restrict_residual(const CsrMatrix<T>& A, const T* X, const T* B, const CsrMatrix<T>& P,
                       T* Y, T* work, std::size_t work_size, int k);

// The same restriction after one diagonal sweep from a zero guess, fused:
// X = d .* B (written), Y = P^T (B - A X), X gathered as d_c B_c (the
// values the sweep stores), so B is read once instead of B and X.
template <class T>
void restrict_diagonal_start(const CsrMatrix<T>& A, const T* d, const T* B,
                             const CsrMatrix<T>& P, T* X, T* Y, T* work, std::size_t work_size,
                             int k);

// out[j] = <X_j, Y_j> in double.
template <class T>
void dot(std::size_t n, int k, const T* X, const T* Y, double* out);
// out[j] = norm of X_j.
template <class T>
void norm(std::size_t n, int k, const T* X, NormType type, double* out);

// Y_j = X_j for lanes with on[j].
template <class T>
void copy(std::size_t n, int k, const T* X, T* Y, const std::uint8_t* on = nullptr);
template <class T>
void fill(std::size_t n, int k, T value, T* Y, const std::uint8_t* on = nullptr);
// Y_j += a_j X_j
template <class T>
void axpy(std::size_t n, int k, const T* a, const T* X, T* Y, const std::uint8_t* on);
// Y_j = X_j + b_j Y_j
template <class T>
void xpby(std::size_t n, int k, const T* X, const T* b, T* Y, const std::uint8_t* on);
// Z_j = a_j X_j + b_j Y_j + c_j Z_j
template <class T>
void axpbypcz(std::size_t n, int k, const T* a, const T* X, const T* b, const T* Y, const T* c,
              T* Z, const std::uint8_t* on);
// true per lane if every entry of X_j is finite.
template <class T>
void all_finite(std::size_t n, int k, const T* X, std::uint8_t* out);

// Y (n x m) = the lanes keep[0..m) of X (n x k).
template <class T>
void select_lanes(std::size_t n, int k, const T* X, const int* keep, int m, T* Y);
// Lane j of the n x k block X <-> the contiguous vector v.
template <class T>
void get_lane(std::size_t n, int k, int j, const T* X, T* v);
template <class T>
void set_lane(std::size_t n, int k, int j, const T* v, T* X);

}  // namespace jaxamg::lanes
