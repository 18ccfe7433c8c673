// The CUDA backend's own kernels (see kernels.h). Element-wise kernels use a
// grid-stride loop; reductions are two-stage (per-block partial sums, then
// one block), deterministic for a given launch shape, accumulated in double.
#include <cmath>

#include "backend/cuda/cuda_check.h"
#include "backend/cuda/kernels.h"

namespace jaxamg::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

#define GRID_LOOP(i, n)                                                              \
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; \
       i < (n); i += static_cast<std::size_t>(blockDim.x) * gridDim.x)

template <class T>
__global__ void fill_kernel(std::size_t n, T v, T* x) {
  GRID_LOOP(i, n) x[i] = v;
}

template <class T>
__global__ void axpby_kernel(std::size_t n, T a, const T* x, T b, T* y) {
  GRID_LOOP(i, n) y[i] = a * x[i] + b * y[i];
}

template <class To, class From>
__global__ void convert_kernel(std::size_t n, const From* x, To* y) {
  GRID_LOOP(i, n) y[i] = static_cast<To>(x[i]);
}

template <class To, class From>
__global__ void add_converted_kernel(std::size_t n, const From* x, To* y) {
  GRID_LOOP(i, n) y[i] += static_cast<To>(x[i]);
}

template <class T>
__global__ void diag_scale_kernel(std::size_t n, const T* d, const T* b, T* x) {
  GRID_LOOP(i, n) x[i] = d[i] * b[i];
}

template <class T>
__global__ void diag_update_kernel(std::size_t n, const T* d, const T* r, T* x) {
  GRID_LOOP(i, n) x[i] += d[i] * r[i];
}

template <class T>
__global__ void cheby_kernel(std::size_t n, const T* d, const T* r, T alpha, T beta, bool first,
                             bool zero_x, T* p, T* x) {
  GRID_LOOP(i, n) {
    const T pi = first ? d[i] * r[i] : d[i] * r[i] + beta * p[i];
    p[i] = pi;
    x[i] = zero_x ? alpha * pi : x[i] + alpha * pi;
  }
}

template <class T>
__device__ inline double reduce_term(Reduce op, const T* x, const T* y, std::size_t i) {
  const double xi = static_cast<double>(x[i]);
  switch (op) {
    case Reduce::kDot: return xi * static_cast<double>(y[i]);
    case Reduce::kSumSquaresSqrt: return xi * xi;
    case Reduce::kSumAbs:
    case Reduce::kMaxAbs: return fabs(xi);
  }
  return 0.0;
}

__device__ inline double combine(Reduce op, double a, double b) {
  // fmax drops a NaN operand; a NaN must reach the convergence test.
  if (op == Reduce::kMaxAbs) return (isnan(a) || isnan(b)) ? NAN : fmax(a, b);
  return a + b;
}

// Block-wide reduction of `v` (all threads get the result in thread 0).
__device__ double block_reduce(Reduce op, double v) {
  __shared__ double shared[kThreads / 32];
  for (int off = 16; off > 0; off >>= 1) v = combine(op, v, __shfl_down_sync(0xffffffffu, v, off));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < kThreads / 32 ? shared[lane] : 0.0;
    for (int off = 16; off > 0; off >>= 1) v = combine(op, v, __shfl_down_sync(0xffffffffu, v, off));
  }
  return v;
}

template <class T>
__global__ void reduce_partial_kernel(Reduce op, std::size_t n, const T* x, const T* y,
                                      double* work) {
  double acc = 0.0;
  GRID_LOOP(i, n) acc = combine(op, acc, reduce_term(op, x, y, i));
  acc = block_reduce(op, acc);
  if (threadIdx.x == 0) work[blockIdx.x] = acc;
}

__global__ void reduce_final_kernel(Reduce op, int parts, const double* work, double* scal,
                                    int slot) {
  double acc = 0.0;
  for (int i = threadIdx.x; i < parts; i += blockDim.x) acc = combine(op, acc, work[i]);
  acc = block_reduce(op, acc);
  if (threadIdx.x == 0) scal[slot] = op == Reduce::kSumSquaresSqrt ? sqrt(acc) : acc;
}

// Thread j solves A x = e_j with the factors and writes column j of inv.
template <class T>
__global__ void dense_inverse_kernel(Index n, const T* lu, const Index* piv, T* inv) {
  const Index j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= n) return;
  auto X = [&](Index i) -> T& { return inv[static_cast<std::size_t>(i) * n + j]; };
  for (Index i = 0; i < n; ++i) X(i) = i == j ? T(1) : T(0);
  for (Index i = 0; i < n; ++i) {
    const Index k = piv[i];
    if (k != i) {
      const T t = X(i);
      X(i) = X(k);
      X(k) = t;
    }
  }
  for (Index i = 1; i < n; ++i) {
    const T* ri = lu + static_cast<std::size_t>(i) * n;
    T s = X(i);
    for (Index k = 0; k < i; ++k) s -= ri[k] * X(k);
    X(i) = s;
  }
  for (Index i = n - 1; i >= 0; --i) {
    const T* ri = lu + static_cast<std::size_t>(i) * n;
    T s = X(i);
    for (Index k = i + 1; k < n; ++k) s -= ri[k] * X(k);
    X(i) = s / ri[i];
  }
}

// One warp per row.
template <class T>
__global__ void dense_matvec_kernel(Index n, const T* M, const T* x, T* y) {
  const Index row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x & 31;
  if (row >= n) return;
  const T* m = M + static_cast<std::size_t>(row) * n;
  T acc = 0;
  for (Index k = lane; k < n; k += 32) acc += m[k] * x[k];
  for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
  if (lane == 0) y[row] = acc;
}

template <class T>
struct SameBits;
template <>
struct SameBits<float> {
  __device__ static bool eq(float a, float b) { return __float_as_uint(a) == __float_as_uint(b); }
};
template <>
struct SameBits<double> {
  __device__ static bool eq(double a, double b) {
    return __double_as_longlong(a) == __double_as_longlong(b);
  }
};

template <class T>
__global__ void inspect_kernel(std::size_t n, const T* a, const T* prev, int* flags) {
  bool bad = false, changed = false;
  GRID_LOOP(i, n) {
    const T v = a[i];
    bad |= !isfinite(v);
    if (prev) changed |= !SameBits<T>::eq(v, prev[i]);
  }
  if (__syncthreads_or(bad) && threadIdx.x == 0) flags[0] = 1;
  if (__syncthreads_or(changed) && threadIdx.x == 0) flags[1] = 1;
}

// splitmix64's finaliser: a bijective 64-bit mix.
__device__ inline unsigned long long mix64(unsigned long long z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

__global__ void structure_hash_kernel(std::size_t n_ptr, const Index* indptr, std::size_t nnz,
                                      const Index* indices, unsigned long long* out) {
  unsigned long long h0 = 0, h1 = 0;
  GRID_LOOP(i, n_ptr + nnz) {
    const bool in_ptr = i < n_ptr;
    const unsigned long long v = static_cast<unsigned int>(in_ptr ? indptr[i] : indices[i - n_ptr]);
    const unsigned long long w = (static_cast<unsigned long long>(i) << 32) ^ v;
    h0 += mix64(w + 0x9e3779b97f4a7c15ULL);
    h1 += mix64(w ^ 0xd1b54a32d192ed03ULL);
  }
  for (int off = 16; off > 0; off >>= 1) {
    h0 += __shfl_down_sync(0xffffffffu, h0, off);
    h1 += __shfl_down_sync(0xffffffffu, h1, off);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(out, h0);
    atomicAdd(out + 1, h1);
  }
}

}  // namespace

void structure_hash(Index n, const Index* indptr, std::size_t nnz, const Index* indices,
                    unsigned long long* out, cudaStream_t s) {
  check(cudaMemsetAsync(out, 0, 2 * sizeof(unsigned long long), s), "cudaMemsetAsync (hash)");
  const std::size_t total = static_cast<std::size_t>(n) + 1 + nnz;
  structure_hash_kernel<<<blocks_for(total), kThreads, 0, s>>>(static_cast<std::size_t>(n) + 1,
                                                               indptr, nnz, indices, out);
  check_launch("structure_hash_kernel");
}

template <class T>
void fill(std::size_t n, T value, T* x, cudaStream_t s) {
  if (n == 0) return;
  fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(n, value, x);
  check_launch("fill_kernel");
}

template <class T>
void axpby(std::size_t n, T a, const T* x, T b, T* y, cudaStream_t s) {
  if (n == 0) return;
  axpby_kernel<<<blocks_for(n), kThreads, 0, s>>>(n, a, x, b, y);
  check_launch("axpby_kernel");
}

template <class To, class From>
void convert(std::size_t n, const From* x, To* y, cudaStream_t s) {
  if (n == 0) return;
  convert_kernel<To, From><<<blocks_for(n), kThreads, 0, s>>>(n, x, y);
  check_launch("convert_kernel");
}

template <class To, class From>
void add_converted(std::size_t n, const From* x, To* y, cudaStream_t s) {
  if (n == 0) return;
  add_converted_kernel<To, From><<<blocks_for(n), kThreads, 0, s>>>(n, x, y);
  check_launch("add_converted_kernel");
}

template <class T>
void diag_scale(std::size_t n, const T* d, const T* b, T* x, cudaStream_t s) {
  if (n == 0) return;
  diag_scale_kernel<<<blocks_for(n), kThreads, 0, s>>>(n, d, b, x);
  check_launch("diag_scale_kernel");
}

template <class T>
void diag_update(std::size_t n, const T* d, const T* r, T* x, cudaStream_t s) {
  if (n == 0) return;
  diag_update_kernel<<<blocks_for(n), kThreads, 0, s>>>(n, d, r, x);
  check_launch("diag_update_kernel");
}

template <class T>
void cheby_step(std::size_t n, const T* d, const T* r, T alpha, T beta, bool first, bool zero_x,
                T* p, T* x, cudaStream_t s) {
  if (n == 0) return;
  cheby_kernel<<<blocks_for(n), kThreads, 0, s>>>(n, d, r, alpha, beta, first, zero_x, p, x);
  check_launch("cheby_kernel");
}

template <class T>
void reduce(Reduce op, std::size_t n, const T* x, const T* y, double* work, double* scal, int slot,
            cudaStream_t s) {
  const std::size_t want = (n + kThreads - 1) / kThreads;
  const int parts = static_cast<int>(want < 1 ? 1 : (want > kReduceBlocks ? kReduceBlocks : want));
  reduce_partial_kernel<<<parts, kThreads, 0, s>>>(op, n, x, y, work);
  check_launch("reduce_partial_kernel");
  reduce_final_kernel<<<1, kThreads, 0, s>>>(op, parts, work, scal, slot);
  check_launch("reduce_final_kernel");
}

template <class T>
void dense_inverse(Index n, const T* lu, const Index* piv, T* inv, cudaStream_t s) {
  if (n <= 0) return;
  dense_inverse_kernel<<<(n + 127) / 128, 128, 0, s>>>(n, lu, piv, inv);
  check_launch("dense_inverse_kernel");
}

template <class T>
void dense_matvec(Index n, const T* M, const T* x, T* y, cudaStream_t s) {
  if (n <= 0) return;
  const long long threads = 32LL * n;
  dense_matvec_kernel<<<static_cast<unsigned>((threads + kThreads - 1) / kThreads), kThreads, 0,
                        s>>>(n, M, x, y);
  check_launch("dense_matvec_kernel");
}

template <class T>
void inspect(std::size_t n, const T* a, const T* previous, int* flags, cudaStream_t s) {
  if (n == 0) return;
  inspect_kernel<<<blocks_for(n), kThreads, 0, s>>>(n, a, previous, flags);
  check_launch("inspect_kernel");
}

#define JAXAMG_CUDA_INSTANTIATE(T)                                                          \
  template void fill<T>(std::size_t, T, T*, cudaStream_t);                                  \
  template void axpby<T>(std::size_t, T, const T*, T, T*, cudaStream_t);                    \
  template void diag_scale<T>(std::size_t, const T*, const T*, T*, cudaStream_t);           \
  template void diag_update<T>(std::size_t, const T*, const T*, T*, cudaStream_t);          \
  template void cheby_step<T>(std::size_t, const T*, const T*, T, T, bool, bool, T*, T*,    \
                              cudaStream_t);                                                \
  template void reduce<T>(Reduce, std::size_t, const T*, const T*, double*, double*, int,   \
                          cudaStream_t);                                                    \
  template void dense_inverse<T>(Index, const T*, const Index*, T*, cudaStream_t);          \
  template void dense_matvec<T>(Index, const T*, const T*, T*, cudaStream_t);               \
  template void inspect<T>(std::size_t, const T*, const T*, int*, cudaStream_t);

JAXAMG_CUDA_INSTANTIATE(float)
JAXAMG_CUDA_INSTANTIATE(double)
#undef JAXAMG_CUDA_INSTANTIATE
template void convert<float, double>(std::size_t, const double*, float*, cudaStream_t);
template void convert<double, float>(std::size_t, const float*, double*, cudaStream_t);
template void add_converted<double, float>(std::size_t, const float*, double*, cudaStream_t);

}  // namespace jaxamg::cuda
