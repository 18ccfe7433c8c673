// Row-group CSR kernels (see csr_kernels.h). One kernel template walks the
// rows; what is done with a row's product A_i x is its epilogue, so each
// fused operation is one small functor.
#include "backend/cuda/csr_kernels.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/device_halo.h"

namespace jaxamg::cuda {

namespace {

constexpr int kThreads = 256;

// Threads [K*g, K*g + K) of a warp form group g; its shuffle mask.
template <int K>
__device__ inline unsigned group_mask() {
  if (K == 32) return 0xffffffffu;
  const unsigned first = (threadIdx.x & 31u) & ~static_cast<unsigned>(K - 1);
  return ((1u << (K % 32)) - 1u) << first;
}

// Each epilogue loads what it needs of row i before the product (Row), so
// those loads are in flight with the matrix's, then stores from A_i x.
template <class T, int K, class Epilogue>
__global__ void __launch_bounds__(kThreads)
    csr_rows_kernel(CsrRef<T> A, const T* __restrict__ x, Epilogue ep) {
  const std::size_t t = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x;
  const std::size_t row = t / K;
  // A group's threads share the row, so a group leaves or stays as a whole.
  if (row >= static_cast<std::size_t>(A.rows)) return;
  const int lane = static_cast<int>(threadIdx.x) & (K - 1);
  const Index begin = __ldg(A.ptr + row), end = __ldg(A.ptr + row + 1);
  const typename Epilogue::Row pre = ep.load(static_cast<Index>(row));
  T sum = 0;
#pragma unroll 4
  for (Index j = begin + lane; j < end; j += K) {
    sum += __ldg(A.val + j) * __ldg(x + __ldg(A.col + j));
  }
  if (K > 1) {
    const unsigned mask = group_mask<K>();
    for (int off = K / 2; off > 0; off >>= 1) sum += __shfl_down_sync(mask, sum, off, K);
  }
  if (lane == 0) ep.store(static_cast<Index>(row), sum, pre);
}

template <class T>
struct AxpbyEpilogue {
  T alpha, beta;
  T* y;
  struct Row {
    T y;
  };
  __device__ Row load(Index i) const { return {beta == T(0) ? T(0) : y[i]}; }
  __device__ void store(Index i, T ax, const Row& r) const {
    y[i] = beta == T(0) ? alpha * ax : alpha * ax + beta * r.y;
  }
};

template <class T>
struct ResidualEpilogue {
  const T* b;
  T* r;
  struct Row {
    T b;
  };
  __device__ Row load(Index i) const { return {__ldg(b + i)}; }
  __device__ void store(Index i, T ax, const Row& p) const { r[i] = p.b - ax; }
};

template <class T>
struct JacobiEpilogue {
  const T *d, *x, *b;
  T* out;
  struct Row {
    T d, x, b;
  };
  __device__ Row load(Index i) const { return {__ldg(d + i), __ldg(x + i), __ldg(b + i)}; }
  __device__ void store(Index i, T ax, const Row& r) const { out[i] = r.x + r.d * (r.b - ax); }
};

template <class T>
struct ChebyshevEpilogue {
  const T *d, *x, *b;
  T alpha, beta;
  bool first;
  T *p, *out;
  struct Row {
    T d, x, b, p;
  };
  __device__ Row load(Index i) const {
    return {__ldg(d + i), __ldg(x + i), __ldg(b + i), first ? T(0) : p[i]};
  }
  __device__ void store(Index i, T ax, const Row& r) const {
    const T dr = r.d * (r.b - ax);
    const T pi = first ? dr : dr + beta * r.p;
    p[i] = pi;
    out[i] = r.x + alpha * pi;
  }
};

template <class T, class Epilogue>
void launch_rows(const CsrRef<T>& A, const T* x, const Epilogue& ep, cudaStream_t s) {
  if (A.halo) A.halo->fill(x, s);
  if (A.rows == 0) return;
  const std::size_t threads = static_cast<std::size_t>(A.rows) * A.lanes;
  const unsigned blocks = static_cast<unsigned>((threads + kThreads - 1) / kThreads);
  switch (A.lanes) {
    case 1: csr_rows_kernel<T, 1><<<blocks, kThreads, 0, s>>>(A, x, ep); break;
    case 2: csr_rows_kernel<T, 2><<<blocks, kThreads, 0, s>>>(A, x, ep); break;
    case 4: csr_rows_kernel<T, 4><<<blocks, kThreads, 0, s>>>(A, x, ep); break;
    case 8: csr_rows_kernel<T, 8><<<blocks, kThreads, 0, s>>>(A, x, ep); break;
    case 16: csr_rows_kernel<T, 16><<<blocks, kThreads, 0, s>>>(A, x, ep); break;
    case 32: csr_rows_kernel<T, 32><<<blocks, kThreads, 0, s>>>(A, x, ep); break;
    default: throw CudaError("csr_rows_kernel: lanes per row must be 1, 2, 4, 8, 16 or 32");
  }
  check_launch("csr_rows_kernel");
}

}  // namespace

int csr_lanes(Index rows, std::size_t nnz) {
  // Measured on the H200 (CsrKernelsBench, 7-point Poisson 256^3, float32):
  // one thread per row moves 3.7 TB/s, two 2.9, four 2.2, eight 1.4 -- the
  // L1 cache absorbs the uncoalesced row reads and a thread with several
  // entries keeps several loads in flight. So a row gets another thread
  // only for every kEntriesPerLane entries beyond the first.
  constexpr double kEntriesPerLane = 6;
  int lanes = 1;
  while (rows > 0 && lanes < 32 &&
         2 * lanes * kEntriesPerLane * rows <= static_cast<double>(nnz)) {
    lanes *= 2;
  }
  return lanes;
}

template <class T>
void csr_axpby(const CsrRef<T>& A, T alpha, const T* x, T beta, T* y, cudaStream_t s) {
  launch_rows(A, x, AxpbyEpilogue<T>{alpha, beta, y}, s);
}

template <class T>
void csr_residual(const CsrRef<T>& A, const T* x, const T* b, T* r, cudaStream_t s) {
  launch_rows(A, x, ResidualEpilogue<T>{b, r}, s);
}

template <class T>
void csr_jacobi(const CsrRef<T>& A, const T* d, const T* x, const T* b, T* x_out,
                cudaStream_t s) {
  launch_rows(A, x, JacobiEpilogue<T>{d, x, b, x_out}, s);
}

template <class T>
void csr_chebyshev(const CsrRef<T>& A, const T* d, const T* x, const T* b, T alpha, T beta,
                   bool first, T* p, T* x_out, cudaStream_t s) {
  launch_rows(A, x, ChebyshevEpilogue<T>{d, x, b, alpha, beta, first, p, x_out}, s);
}

#define JAXAMG_CSR_KERNELS(T)                                                                 \
  template void csr_axpby<T>(const CsrRef<T>&, T, const T*, T, T*, cudaStream_t);             \
  template void csr_residual<T>(const CsrRef<T>&, const T*, const T*, T*, cudaStream_t);      \
  template void csr_jacobi<T>(const CsrRef<T>&, const T*, const T*, const T*, T*,             \
                              cudaStream_t);                                                  \
  template void csr_chebyshev<T>(const CsrRef<T>&, const T*, const T*, const T*, T, T, bool, \
                                 T*, T*, cudaStream_t);
JAXAMG_CSR_KERNELS(float)
JAXAMG_CSR_KERNELS(double)
#undef JAXAMG_CSR_KERNELS

}  // namespace jaxamg::cuda
