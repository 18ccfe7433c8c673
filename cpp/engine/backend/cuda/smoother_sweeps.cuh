// The CUDA backend's block and colour-ordered sweeps (solvers/smoothers/
// multicolor_methods.h, diagonal_sweep_method.h; the CPU backend's are
// backend/cpu/smoother_sweeps.h): one thread per row (or per node of
// block_dim rows) of a colour. Rows of one colour share no coupling, so each
// thread reads only other colours' values and its own row's; the next
// colour's kernel, on the same stream, sees them. Only nvcc compiles this
// header.
#pragma once
#include <cuda_runtime.h>

#include "backend/cuda/csr_kernels.h"
#include "backend/cuda/device_halo.h"
#include "backend/cuda/cuda_check.h"
#include "backend/sweep_data.h"
#include "core/error.h"

namespace jaxamg::cuda {

namespace color_kernels {

constexpr int kThreads = 256;
constexpr Index kMaxBlock = backend::kMaxDeviceBlock;

inline unsigned blocks_for(Index items) {
  return static_cast<unsigned>((items + kThreads - 1) / kThreads);
}

template <class T>
__global__ void gs_rows_kernel(CsrRef<T> A, const Index* rows, Index p0, Index p1, const T* s,
                               const T* b, T* x) {
  const Index p = p0 + static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
  if (p >= p1) return;
  const Index i = rows[p];
  x[i] += s[i] * backend::row_residual<T>(A.ptr, A.col, A.val, i, b, x, A.rows, nullptr);
}

// Node q of the colour: rows rows[p0 + q*k] .. + k - 1.
template <class T>
__global__ void gs_nodes_kernel(CsrRef<T> A, Index k, const Index* rows, Index p0, Index p1,
                                const T* binv, const T* b, T* x) {
  const Index p = p0 + k * static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
  if (p >= p1) return;
  T r[kMaxBlock];
  backend::gs_node<T>(A.ptr, A.col, A.val, rows[p], k, binv, b, x, A.rows, nullptr, r);
}

template <class Factors, class T>
__global__ void lower_kernel(Factors f, Index p0, Index p1, const T* b, const T* x,
                             bool x_is_zero, T* z) {
  const Index p = p0 + static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
  if (p < p1) backend::lower_row(f, p, b, x, x_is_zero, z);
}

template <class Factors, class T>
__global__ void upper_kernel(Factors f, Index p0, Index p1, T w, T* z, T* x, bool x_is_zero) {
  const Index p = p0 + static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
  if (p < p1) backend::upper_row(f, p, w, z, x, x_is_zero);
}

// r = b - A x (r = b when x_is_zero), one thread per row.
template <class T>
__global__ void residual_rows_kernel(CsrRef<T> A, const T* b, const T* x, bool x_is_zero, T* r) {
  const Index i = static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= A.rows) return;
  r[i] = x_is_zero ? b[i]
                  : backend::row_residual<T>(A.ptr, A.col, A.val, i, b, x, A.rows, nullptr);
}

// x_I (+)= scale_I r_I, one thread per node of k rows.
template <class T>
__global__ void block_update_kernel(Index nodes, Index k, const T* scale, const T* r, T* x,
                                    bool accumulate) {
  const Index I = static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
  if (I < nodes) backend::apply_block(scale + I * k * k, r + I * k, x + I * k, k, accumulate);
}

}  // namespace color_kernels

// x_i += scale_i (b - A x)_i for the rows rows[p0 .. p1) (by node for
// block_dim k > 1, up to color_kernels::kMaxBlock), on `stream`.
template <class T>
void gs_rows(const CsrRef<T>& A, const Index* rows, Index p0, Index p1,
             backend::BlockScale<T> scale, const T* b, T* x, cudaStream_t stream) {
  using namespace color_kernels;
  // Every process exchanges for every colour, also where it has no row of it.
  if (A.halo) A.halo->fill(x, stream);
  if (p1 <= p0) return;
  const Index k = scale.block_dim;
  if (k > 1) {
    if (k > kMaxBlock) throw NotSupported("CUDA backend: block Gauss-Seidel with block_dim > 8");
    gs_nodes_kernel<T><<<blocks_for((p1 - p0) / k), kThreads, 0, stream>>>(A, k, rows, p0, p1,
                                                                           scale.scale, b, x);
  } else {
    gs_rows_kernel<T>
        <<<blocks_for(p1 - p0), kThreads, 0, stream>>>(A, rows, p0, p1, scale.scale, b, x);
  }
  check_launch("gs_rows");
}

// A block Jacobi sweep by node (block_dim k > 1; see the CPU backend): the
// residual into r (A.rows entries), then the node updates, on `stream`.
template <class T>
void block_jacobi_sweep(const CsrRef<T>& A, backend::BlockScale<T> scale, const T* b, T* x,
                        bool x_is_zero, T* r, cudaStream_t stream) {
  using namespace color_kernels;
  if (A.halo && !x_is_zero) A.halo->fill(x, stream);
  if (A.rows <= 0) return;
  residual_rows_kernel<T><<<blocks_for(A.rows), kThreads, 0, stream>>>(A, b, x, x_is_zero, r);
  check_launch("block_jacobi_sweep (residual)");
  const Index k = scale.block_dim, nodes = A.rows / k;
  block_update_kernel<T>
      <<<blocks_for(nodes), kThreads, 0, stream>>>(nodes, k, scale.scale, r, x, !x_is_zero);
  check_launch("block_jacobi_sweep (update)");
}

// The lower and upper solves of a colour-ordered factorisation (Factors:
// backend::DiluFactors or IluFactors) for the rows at colour positions
// [p0, p1), on `stream`.
template <class Factors, class T>
void lower_solve(const Factors& f, Index p0, Index p1, const T* b, const T* x, bool x_is_zero,
                 T* z, cudaStream_t stream) {
  using namespace color_kernels;
  if (p1 <= p0) return;
  lower_kernel<<<blocks_for(p1 - p0), kThreads, 0, stream>>>(f, p0, p1, b, x, x_is_zero, z);
  check_launch("lower_solve");
}

template <class Factors, class T>
void upper_solve(const Factors& f, Index p0, Index p1, T w, T* z, T* x, bool x_is_zero,
                 cudaStream_t stream) {
  using namespace color_kernels;
  if (p1 <= p0) return;
  upper_kernel<<<blocks_for(p1 - p0), kThreads, 0, stream>>>(f, p0, p1, w, z, x, x_is_zero);
  check_launch("upper_solve");
}

}  // namespace jaxamg::cuda
