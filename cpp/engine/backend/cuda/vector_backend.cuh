// The CUDA backend of the algorithms written once over backends
// (solvers/krylov/*_method.h, amg/cycle.h): one vector of n entries in device
// memory, the method's scalar slots in device memory too. A slot update is a
// one-thread kernel running the method's own functor (backend/slots.h), an
// inner product a two-stage reduction that writes its slot, and a vector
// update a kernel that reads its coefficients and its mask from the slots:
// the host never waits between the kernels of an iteration, and a stopped
// recurrence leaves its vectors as the CPU backend's early return does.
//
// Only nvcc compiles this header (the functors become kernels where the
// method is instantiated, in a .cu file). Every kernel runs on the stream
// given at construction; reductions sum in a fixed order, so two runs give
// the same bits.
//
// The smoothers' row sweeps (solvers/smoothers/*_method.h): the diagonal
// sweep is csr_kernels.h's fused Jacobi kernel, the Chebyshev direction one
// thread per CSR row; the update of x that neighbours read goes to a second
// buffer or a second kernel. The multicolour sweeps are smoother_sweeps.cuh's.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "backend/cuda/smoother_sweeps.cuh"
#include "backend/cuda/csr_kernels.h"
#include "backend/cuda/cuda_check.h"
#include "backend/cuda/device_array.h"
#include "backend/slots.h"
#include "core/distribution.h"

namespace jaxamg::cuda {

namespace vector_kernels {

constexpr int kVectorThreads = 256;
constexpr int kDotBlocks = 264;

inline unsigned blocks_for(std::size_t n) {
  const std::size_t b = (n + kVectorThreads - 1) / kVectorThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 8 ? 65535 * 8 : b));
}

#define JAXAMG_GRID_LOOP(i, n)                                                        \
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; \
       i < (n); i += static_cast<std::size_t>(blockDim.x) * gridDim.x)

template <class F>
__global__ void update_kernel(F f, double* s) {
  f(s);
}

// What a masked update reads besides its vectors: the slots, its mask, and
// the device counter its bytes are added to.
struct Lane {
  const double* s;
  int mask;
  double* traffic;
};

// False if the update's lane is not selected; otherwise counts its bytes
// (one thread: kernels on one stream never overlap).
__device__ inline bool enter(const Lane& lane, double bytes) {
  if (!backend::selected(lane.s, lane.mask)) return false;
  if (blockIdx.x == 0 && threadIdx.x == 0) *lane.traffic += bytes;
  return true;
}

struct SetSlot {
  int slot;
  double v;
  __device__ void operator()(double* s) const { s[slot] = v; }
};

// Block-wide sum of v (the result in thread 0), in a fixed order.
__device__ inline double block_sum(double v) {
  __shared__ double shared[kVectorThreads / 32];
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = 0.0;
  if (warp == 0) {
    v = lane < kVectorThreads / 32 ? shared[lane] : 0.0;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  }
  return v;
}

template <class T>
__global__ void dot_partial_kernel(std::size_t n, const T* x, const T* y, double* work,
                                   const double* s, int mask) {
  // An unselected lane's product is never read: skip the reads.
  if (!backend::selected(s, mask)) return;
  double acc = 0.0;
  JAXAMG_GRID_LOOP(i, n) acc += static_cast<double>(x[i]) * static_cast<double>(y[i]);
  acc = block_sum(acc);
  if (threadIdx.x == 0) work[blockIdx.x] = acc;
}

// Products of several vectors with one y, taken in one pass over y (IDR's
// P^T g): at most kDotsAtOnce a launch.
constexpr int kDotsAtOnce = 8;
template <class T>
struct DotSources {
  const T* x[kDotsAtOnce];
};

// dot_partial_kernel for count <= kDotsAtOnce vectors: the same loop and
// block sums, so each product has the bits of its own dot. Block b's
// partial sum of product k goes to work[k * gridDim.x + b].
template <class T>
__global__ void dots_partial_kernel(std::size_t n, DotSources<T> xs, int count, const T* y,
                                    double* work, const double* s, int mask) {
  if (!backend::selected(s, mask)) return;
  double acc[kDotsAtOnce];
  for (int k = 0; k < kDotsAtOnce; ++k) acc[k] = 0.0;
  JAXAMG_GRID_LOOP(i, n) {
    const double yi = static_cast<double>(y[i]);
#pragma unroll
    for (int k = 0; k < kDotsAtOnce; ++k) {
      if (k < count) acc[k] += static_cast<double>(xs.x[k][i]) * yi;
    }
  }
  for (int k = 0; k < count; ++k) {
    const double v = block_sum(acc[k]);
    if (threadIdx.x == 0) work[k * gridDim.x + blockIdx.x] = v;
    __syncthreads();  // the next block_sum reuses its shared memory
  }
}

// static: each translation unit that instantiates a method has its own.
// Block k sums product k's `parts` partial sums into s[slot + k].
static __global__ void dots_final_kernel(int parts, const double* work, double* s, int slot,
                                         int mask, double* traffic, double bytes) {
  if (!backend::selected(s, mask)) return;
  const int k = blockIdx.x;
  double acc = 0.0;
  for (int i = threadIdx.x; i < parts; i += blockDim.x) acc += work[k * parts + i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) {
    s[slot + k] = acc;
    if (k == 0) *traffic += bytes;
  }
}

// static: each translation unit that instantiates a method has its own.
static __global__ void dot_final_kernel(int parts, const double* work, double* s, int slot,
                                        int mask, double* traffic, double bytes) {
  if (!backend::selected(s, mask)) return;
  double acc = 0.0;
  for (int i = threadIdx.x; i < parts; i += blockDim.x) acc += work[i];
  acc = block_sum(acc);
  if (threadIdx.x == 0) {
    s[slot] = acc;
    *traffic += bytes;
  }
}

template <class T>
__global__ void copy_kernel(std::size_t n, Lane lane, const T* x, T* y) {
  if (!enter(lane, 2.0 * n * sizeof(T))) return;
  JAXAMG_GRID_LOOP(i, n) y[i] = x[i];
}

template <class T>
__global__ void fill_zero_kernel(std::size_t n, Lane lane, T* y) {
  if (!enter(lane, 1.0 * n * sizeof(T))) return;
  JAXAMG_GRID_LOOP(i, n) y[i] = T(0);
}

template <class T>
__global__ void axpy_kernel(std::size_t n, Lane lane, backend::Coef a, const T* x, T* y) {
  if (!enter(lane, 3.0 * n * sizeof(T))) return;
  const T ca = static_cast<T>(a.value(lane.s));
  JAXAMG_GRID_LOOP(i, n) y[i] += ca * x[i];
}

// y = 1 x + b y, as cpu::axpby(1, x, b, y).
template <class T>
__global__ void xpby_kernel(std::size_t n, Lane lane, const T* x, backend::Coef b, T* y) {
  if (!enter(lane, 3.0 * n * sizeof(T))) return;
  const T cb = static_cast<T>(b.value(lane.s));
  JAXAMG_GRID_LOOP(i, n) y[i] = T(1) * x[i] + cb * y[i];
}

template <class T>
__global__ void axpbypcz_kernel(std::size_t n, Lane lane, backend::Coef a, const T* x,
                                backend::Coef b, const T* y, backend::Coef c, T* z) {
  if (!enter(lane, 4.0 * n * sizeof(T))) return;
  const T ca = static_cast<T>(a.value(lane.s)), cb = static_cast<T>(b.value(lane.s)),
          cc = static_cast<T>(c.value(lane.s));
  JAXAMG_GRID_LOOP(i, n) z[i] = ca * x[i] + cb * y[i] + cc * z[i];
}

template <class T>
__global__ void diagonal_scale_kernel(std::size_t n, const T* d, const T* b, T* x) {
  JAXAMG_GRID_LOOP(i, n) x[i] = d[i] * b[i];
}

template <class T>
__global__ void chebyshev_start_kernel(std::size_t n, const T* d, const T* b, T alpha, T* p,
                                       T* x) {
  JAXAMG_GRID_LOOP(i, n) {
    const T pi = d[i] * b[i];
    p[i] = pi;
    x[i] = alpha * pi;
  }
}

template <class T>
__global__ void axpby_kernel(std::size_t n, Lane lane, backend::Coef a, const T* x,
                             backend::Coef b, T* y) {
  if (!enter(lane, 3.0 * n * sizeof(T))) return;
  const T ca = static_cast<T>(a.value(lane.s)), cb = static_cast<T>(b.value(lane.s));
  JAXAMG_GRID_LOOP(i, n) y[i] = ca * x[i] + cb * y[i];
}

template <class T>
__global__ void scale_kernel(std::size_t n, Lane lane, backend::Coef a, T* x) {
  if (!enter(lane, 2.0 * n * sizeof(T))) return;
  const T ca = static_cast<T>(a.value(lane.s));
  JAXAMG_GRID_LOOP(i, n) x[i] *= ca;
}

#undef JAXAMG_GRID_LOOP

}  // namespace vector_kernels

template <class T>
class VectorBackend {
 public:
  using value_type = T;
  using vector_type = DeviceArray<T>;
  using matrix_type = CsrRef<T>;

  // n entries per vector, `slots` scalars, kernels on `stream`.
  VectorBackend(std::size_t n, int slots, cudaStream_t stream)
      : n_(n), m_(slots), stream_(stream), slots_(slots),
        work_(vector_kernels::kDotBlocks * vector_kernels::kDotsAtOnce),
        traffic_(1) {
    check(cudaMemsetAsync(slots_.data(), 0, slots * sizeof(double), stream_), "cudaMemsetAsync");
    reset_traffic();
  }

  // A distributed vector: `capacity` entries per vector made (the owned n
  // and a ghost tail that products fill, device_halo.h), and the inner
  // products summed over processes by `reducer` (each waits for the stream).
  void distribute(std::size_t capacity, const Reducer* reducer) {
    capacity_ = capacity < n_ ? n_ : capacity;
    reducer_ = reducer;
  }

  std::size_t size() const { return n_; }
  int lanes() const { return 1; }
  cudaStream_t stream() const { return stream_; }
  // Later kernels run on `stream` (e.g. the stream of a CUDA graph capture).
  void set_stream(cudaStream_t stream) { stream_ = stream; }
  vector_type make_vector() const {
    const std::size_t m = capacity_ < n_ ? n_ : capacity_;
    vector_type v(m);
    check(cudaMemsetAsync(v.data(), 0, m * sizeof(T), stream_), "cudaMemsetAsync");
    return v;
  }
  // The slots in device memory, and a copy of them on the host (waits for
  // the stream).
  double* device_slots() { return slots_.data(); }
  std::vector<double> read_slots() const {
    std::vector<double> host(m_);
    check(cudaMemcpyAsync(host.data(), slots_.data(), m_ * sizeof(double),
                          cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync (slots)");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (slots)");
    return host;
  }
  // Bytes moved by the inner products and the slot-coefficient updates
  // (each operand read once, each result written once), counted on the
  // device by the updates whose lane was selected, so skipped branches of a
  // recurrence add nothing. read_traffic waits for the stream.
  void reset_traffic() {
    check(cudaMemsetAsync(traffic_.data(), 0, sizeof(double), stream_), "cudaMemsetAsync");
  }
  double read_traffic() const {
    double bytes = 0;
    check(cudaMemcpyAsync(&bytes, traffic_.data(), sizeof(double), cudaMemcpyDeviceToHost,
                          stream_),
          "cudaMemcpyAsync (traffic)");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (traffic)");
    return bytes;
  }
  void set_slot(int slot, double v) {
    vector_kernels::update_kernel<<<1, 1, 0, stream_>>>(vector_kernels::SetSlot{slot, v},
                                                        slots_.data());
    check_launch("slot update");
  }

  template <class F>
  void update(const F& f) {
    vector_kernels::update_kernel<<<1, 1, 0, stream_>>>(f, slots_.data());
    check_launch("slot update");
  }
  // The slots stay on the device: a lane may be selected, so every masked
  // kernel is launched and tests its mask itself.
  bool any(int /*mask*/) const { return true; }

  void dot(const T* x, const T* y, int slot, int mask = backend::kAllLanes) {
    using namespace vector_kernels;
    dot_partial_kernel<T>
        <<<kDotBlocks, kVectorThreads, 0, stream_>>>(n_, x, y, work_.data(), slots_.data(), mask);
    check_launch("dot (partial sums)");
    const double bytes = (x == y ? 1.0 : 2.0) * n_ * sizeof(T);
    dot_final_kernel<<<1, kVectorThreads, 0, stream_>>>(kDotBlocks, work_.data(), slots_.data(),
                                                        slot, mask, traffic_.data(), bytes);
    check_launch("dot (final sum)");
    if (reducer_) sum_over_processes(slot, 1, mask);
  }
  // s[slot + i] = <xs[i], y> for i < count: y is read once for up to
  // kDotsAtOnce products, each equal to its own dot bit for bit.
  void dots(const T* const* xs, int count, const T* y, int slot, int mask = backend::kAllLanes) {
    using namespace vector_kernels;
    for (int first = 0; first < count; first += kDotsAtOnce) {
      const int m = count - first < kDotsAtOnce ? count - first : kDotsAtOnce;
      DotSources<T> sources{};
      for (int k = 0; k < m; ++k) sources.x[k] = xs[first + k];
      dots_partial_kernel<T><<<kDotBlocks, kVectorThreads, 0, stream_>>>(
          n_, sources, m, y, work_.data(), slots_.data(), mask);
      check_launch("dots (partial sums)");
      const double bytes = (m + 1.0) * n_ * sizeof(T);
      dots_final_kernel<<<m, kVectorThreads, 0, stream_>>>(kDotBlocks, work_.data(), slots_.data(),
                                                           slot + first, mask, traffic_.data(),
                                                           bytes);
      check_launch("dots (final sums)");
    }
    if (reducer_ && count > 0) sum_over_processes(slot, count, mask);
  }
  // y = the host array `values` (setup: waits for the copy).
  void upload(const T* values, T* y) {
    check(cudaMemcpyAsync(y, values, n_ * sizeof(T), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (upload)");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (upload)");
  }
  // y = 0; with a mask, only if it selects the lane (tested by a kernel,
  // as copy's, instead of the memset).
  void fill_zero(T* y, int mask = backend::kAllLanes) {
    using namespace vector_kernels;
    if (mask == backend::kAllLanes) {
      check(cudaMemsetAsync(y, 0, n_ * sizeof(T), stream_), "cudaMemsetAsync (fill_zero)");
      return;
    }
    fill_zero_kernel<T><<<blocks_for(n_), kVectorThreads, 0, stream_>>>(n_, lane(mask), y);
    check_launch("fill_zero");
  }
  void copy(const T* x, T* y, int mask) {
    using namespace vector_kernels;
    copy_kernel<T><<<blocks_for(n_), kVectorThreads, 0, stream_>>>(n_, lane(mask), x, y);
    check_launch("copy");
  }
  void axpy(backend::Coef a, const T* x, T* y, int mask) {
    using namespace vector_kernels;
    axpy_kernel<T><<<blocks_for(n_), kVectorThreads, 0, stream_>>>(n_, lane(mask), a, x, y);
    check_launch("axpy");
  }
  void xpby(const T* x, backend::Coef b, T* y, int mask) {
    using namespace vector_kernels;
    xpby_kernel<T><<<blocks_for(n_), kVectorThreads, 0, stream_>>>(n_, lane(mask), x, b, y);
    check_launch("xpby");
  }
  void axpbypcz(backend::Coef a, const T* x, backend::Coef b, const T* y, backend::Coef c, T* z,
                int mask) {
    using namespace vector_kernels;
    axpbypcz_kernel<T>
        <<<blocks_for(n_), kVectorThreads, 0, stream_>>>(n_, lane(mask), a, x, b, y, c, z);
    check_launch("axpbypcz");
  }
  void axpby(backend::Coef a, const T* x, backend::Coef b, T* y, int mask) {
    using namespace vector_kernels;
    axpby_kernel<T>
        <<<blocks_for(n_), kVectorThreads, 0, stream_>>>(n_, lane(mask), a, x, b, y);
    check_launch("axpby");
  }
  void scale(backend::Coef a, T* x, int mask) {
    using namespace vector_kernels;
    scale_kernel<T><<<blocks_for(n_), kVectorThreads, 0, stream_>>>(n_, lane(mask), a, x);
    check_launch("scale");
  }
  // out += sum_i s[coef + i] v[i] over i in [s[range], s[range + 1]), paired
  // as the CPU backend pairs them. The range is read on the host (a wait).
  void combine(T* const* v, int coef, int range, T* out, int mask) {
    const std::vector<double> h = read_slots();
    int i = static_cast<int>(h[range]);
    const int end = static_cast<int>(h[range + 1]);
    for (; i + 1 < end; i += 2) {
      axpbypcz(backend::slot(coef + i), v[i], backend::slot(coef + i + 1), v[i + 1],
               backend::constant(1.0), out, mask);
    }
    if (i < end) axpy(backend::slot(coef + i), v[i], out, mask);
  }
  // One lane: table[s[index] + offset] itself (the index is read on the
  // host, a wait); scatter() of it back is a no-op.
  T* gather(T* const* table, int index, int offset, vector_type* /*scratch*/, int /*mask*/,
            bool /*read*/) {
    return table[static_cast<int>(read_slots()[index]) + offset];
  }
  void scatter(const T* x, T* const* table, int index, int offset, int mask) {
    T* y = table[static_cast<int>(read_slots()[index]) + offset];
    if (y != x) copy(x, y, mask);
  }
  // Work space for a vector that only the selected lanes need: one lane,
  // but any() cannot tell the host whether it is selected, so a vector of
  // its own.
  T* lane_work(T* /*reusable*/, vector_type* scratch) {
    if (scratch->size() != n_) *scratch = make_vector();
    return scratch->data();
  }

  // ---- row sweeps of the smoothers (see the CPU backend) ----

  // x = d .* b.
  void diagonal_scale(const T* d, const T* b, T* x) {
    using namespace vector_kernels;
    diagonal_scale_kernel<T><<<blocks_for(n_), kVectorThreads, 0, stream_>>>(n_, d, b, x);
    check_launch("diagonal_scale");
  }
  // x_out = x + d .* (b - A x): the fused row kernel of csr_kernels.h
  // (A.lanes threads per row), x_out apart from x.
  void diagonal_sweep(const CsrRef<T>& A, const T* d, const T* b, const T* x, T* x_out) {
    csr_jacobi(A, d, x, b, x_out, stream_);
  }
  // p = d .* b, x = alpha p.
  void chebyshev_start(const T* d, const T* b, T alpha, T* p, T* x) {
    using namespace vector_kernels;
    chebyshev_start_kernel<T>
        <<<blocks_for(n_), kVectorThreads, 0, stream_>>>(n_, d, b, alpha, p, x);
    check_launch("chebyshev_start");
  }
  // p = d .* (b - A x) + beta p (without beta p when `first`), x_out =
  // x + alpha p: the fused row kernel of csr_kernels.h, x_out apart from x.
  void chebyshev_step(const CsrRef<T>& A, const T* d, const T* b, T alpha, T beta, bool first, T* p,
                      const T* x, T* x_out) {
    csr_chebyshev(A, d, x, b, alpha, beta, first, p, x_out, stream_);
  }

  // The colour-ordered sweeps of the multicolour smoothers (smoother_sweeps.cuh).
  void gs_rows(const CsrRef<T>& A, const Index* rows, Index p0, Index p1,
               backend::BlockScale<T> scale, const T* b, T* x) {
    cuda::gs_rows(A, rows, p0, p1, scale, b, x, stream_);
  }
  // A block Jacobi sweep by node (smoother_sweeps.cuh), r: n entries of work.
  void block_jacobi_sweep(const CsrRef<T>& A, backend::BlockScale<T> scale, const T* b, T* x,
                          bool x_is_zero, T* r) {
    cuda::block_jacobi_sweep(A, scale, b, x, x_is_zero, r, stream_);
  }
  template <class Factors>
  void lower_solve(const Factors& f, Index p0, Index p1, const T* b, const T* x, bool x_is_zero,
                   T* z) {
    cuda::lower_solve(f, p0, p1, b, x, x_is_zero, z, stream_);
  }
  template <class Factors>
  void upper_solve(const Factors& f, Index p0, Index p1, T w, T* z, T* x, bool x_is_zero) {
    cuda::upper_solve(f, p0, p1, w, z, x, x_is_zero, stream_);
  }

 private:
  vector_kernels::Lane lane(int mask) { return {slots_.data(), mask, traffic_.data()}; }

  // s[slot .. slot + count) summed over processes, if `mask` selects the
  // lane (an unselected lane's slots were not written: summing them would
  // change them). The mask reads the same slots on every process.
  void sum_over_processes(int slot, int count, int mask) {
    std::vector<double> host = read_slots();
    if (!backend::selected(host.data(), mask)) return;
    reducer_->sum(host.data() + slot, count);
    check(cudaMemcpyAsync(slots_.data() + slot, host.data() + slot, count * sizeof(double),
                          cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (summed slots)");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (summed slots)");
  }

  std::size_t n_;
  std::size_t capacity_ = 0;
  const Reducer* reducer_ = nullptr;
  int m_;
  cudaStream_t stream_;
  DeviceArray<double> slots_;
  DeviceArray<double> work_;
  DeviceArray<double> traffic_;  // bytes counted by the masked kernels
};

}  // namespace jaxamg::cuda
