// The backend's own CSR products, each with the vector update that follows
// it fused into the same pass: a smoother sweep or a residual reads the
// matrix once and every vector at most once, where a cuSPARSE SpMV followed
// by element-wise kernels reads and writes the vectors two or three times.
//
// A group of `lanes` threads (a power of two, 1 to 32) reduces one row in a
// fixed order, so every product gives the same bits on every run.
#pragma once
#include <cuda_runtime.h>

#include "core/types.h"

namespace jaxamg::cuda {

template <class T>
class DeviceHalo;

// A distributed matrix's products first fill the ghost tail of their input
// vector through `halo` (device_halo.h); nullptr on one process.
template <class T>
struct CsrRef {
  Index rows = 0;
  const Index* ptr = nullptr;
  const Index* col = nullptr;
  const T* val = nullptr;
  int lanes = 1;
  const DeviceHalo<T>* halo = nullptr;
};

// Threads per row for a matrix with `nnz` entries in `rows` rows: a power of
// two with at least 6 entries each on average, 1 to 32.
int csr_lanes(Index rows, std::size_t nnz);

// y = alpha A x + beta y (y is not read when beta is 0).
template <class T>
void csr_axpby(const CsrRef<T>& A, T alpha, const T* x, T beta, T* y, cudaStream_t s);

// r = b - A x.
template <class T>
void csr_residual(const CsrRef<T>& A, const T* x, const T* b, T* r, cudaStream_t s);

// One damped-Jacobi sweep out of place: x_out = x + d .* (b - A x).
template <class T>
void csr_jacobi(const CsrRef<T>& A, const T* d, const T* x, const T* b, T* x_out,
                cudaStream_t s);

// One Chebyshev step out of place (ChebyshevSolver::step_diagonal):
// p = d .* (b - A x) + beta p (beta ignored when `first`), x_out = x + alpha p.
template <class T>
void csr_chebyshev(const CsrRef<T>& A, const T* d, const T* x, const T* b, T alpha, T beta,
                   bool first, T* p, T* x_out, cudaStream_t s);

}  // namespace jaxamg::cuda
