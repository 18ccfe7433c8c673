#include "device/krylov_steps.h"

#include "backend/cuda/csr_kernels.h"
#include "backend/cuda/device_array.h"

namespace jaxamg::device {

namespace {

template <class T>
__global__ void diagonal_scale_kernel(std::size_t n, const T* d, const T* r, T* z) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(blockDim.x) * gridDim.x) {
    z[i] = d[i] * r[i];
  }
}

template <class T>
std::vector<T> download(const cuda::DeviceArray<T>& a, cudaStream_t stream) {
  std::vector<T> host(a.size());
  cuda::check(cudaMemcpyAsync(host.data(), a.data(), a.size() * sizeof(T),
                              cudaMemcpyDeviceToHost, stream),
              "cudaMemcpyAsync D2H");
  cuda::check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return host;
}

KrylovShape shape_of(KrylovKind kind, bool precond, int restart, int window) {
  KrylovShape s;
  s.kind = kind;
  s.preconditioned = precond;
  s.restart = restart;
  s.window = window;
  s.track_residual = true;
  return s;
}

}  // namespace

bool cuda_device_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

template <class T>
struct KrylovSteps<T>::Impl : DeviceOperator<T> {
  Impl(KrylovKind kind, const CsrMatrix<T>& host, const std::vector<T>& diagonal, int restart,
       int window)
      : n(static_cast<std::size_t>(host.nrows)),
        method(shape_of(kind, !diagonal.empty(), restart, window), n, stream) {
    ptr.assign(host.row_ptr);
    col.assign(host.col);
    val.assign(host.val);
    A = {host.nrows, ptr.data(), col.data(), val.data(),
         cuda::csr_lanes(host.nrows, host.col.size())};
    if (!diagonal.empty()) d.assign(diagonal);
    b.resize(n);
    x.resize(n);
    r.resize(n);
    stop.resize(1);
  }

  void matvec(const T* in, T* out) override {
    cuda::csr_axpby(A, T(1), in, T(0), out, stream);
  }
  void precondition(const T* in, T* out) override {
    diagonal_scale_kernel<T><<<(n + 255) / 256, 256, 0, stream>>>(n, d.data(), in, out);
    cuda::check_launch("diagonal preconditioner");
  }
  void residual(const T* in, T* out) override {
    cuda::csr_residual(A, in, b.data(), out, stream);
  }

  cudaStream_t stream = nullptr;  // the default stream
  std::size_t n;
  cuda::DeviceArray<Index> ptr, col;
  cuda::DeviceArray<T> val, d;
  cuda::CsrRef<T> A;
  cuda::DeviceArray<T> b, x, r;
  cuda::DeviceArray<double> stop;
  OuterKrylov<T> method;
};

template <class T>
KrylovSteps<T>::KrylovSteps(KrylovKind kind, const CsrMatrix<T>& A, const std::vector<T>& diagonal,
                            int restart, int window)
    : impl_(std::make_unique<Impl>(kind, A, diagonal, restart, window)) {}

template <class T>
KrylovSteps<T>::~KrylovSteps() = default;

template <class T>
void KrylovSteps<T>::start(const std::vector<T>& b, const std::vector<T>& x0) {
  Impl& m = *impl_;
  m.b.assign(b);
  m.x.assign(x0);
  cuda::csr_residual(m.A, m.x.data(), m.b.data(), m.r.data(), m.stream);
  m.method.init(m.r.data());
}

template <class T>
IterationResult KrylovSteps<T>::iterate() {
  Impl& m = *impl_;
  m.method.iteration(m, m.x.data(), m.r.data(), m.stop.data());
  return m.method.outcome();
}

template <class T>
void KrylovSteps<T>::finalize() {
  Impl& m = *impl_;
  m.method.finalize(m, m.x.data());
}

template <class T>
std::vector<T> KrylovSteps<T>::x() const {
  return download(impl_->x, impl_->stream);
}
template <class T>
std::vector<T> KrylovSteps<T>::r() const {
  return download(impl_->r, impl_->stream);
}
template <class T>
std::vector<double> KrylovSteps<T>::slots() const {
  return impl_->method.slots();
}

template class KrylovSteps<float>;
template class KrylovSteps<double>;

}  // namespace jaxamg::device
