#include "device/krylov_steps.h"

#include "backend/cuda/csr_kernels.h"
#include "backend/cuda/vector_backend.cuh"
#include "solvers/krylov/bicgstab_method.h"
#include "solvers/krylov/cg_method.h"

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

}  // namespace

bool cuda_device_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

template <class T>
struct KrylovSteps<T>::Impl {
  using Backend = cuda::VectorBackend<T>;

  // The operator and preconditioner as the methods call them.
  struct Operator {
    Impl* impl;
    void matvec(const T* x, T* y) const {
      cuda::csr_axpby(impl->A, T(1), x, T(0), y, impl->stream);
    }
    void precondition(const T* r, T* z) const {
      const std::size_t n = impl->n;
      diagonal_scale_kernel<T><<<(n + 255) / 256, 256, 0, impl->stream>>>(n, impl->d.data(), r, z);
      cuda::check_launch("diagonal preconditioner");
    }
  };

  Impl(KrylovKind kind, const CsrMatrix<T>& host, const std::vector<T>& diagonal)
      : n(static_cast<std::size_t>(host.nrows)), be(n, slot_count(kind), stream) {
    ptr.assign(host.row_ptr);
    col.assign(host.col);
    val.assign(host.val);
    A = {host.nrows, ptr.data(), col.data(), val.data(),
         cuda::csr_lanes(host.nrows, host.col.size())};
    if (!diagonal.empty()) d.assign(diagonal);
    const bool precond = !diagonal.empty();
    b = be.make_vector();
    x = be.make_vector();
    r = be.make_vector();
    if (kind == KrylovKind::kBicgstab || kind == KrylovKind::kPbicgstab) {
      bicgstab = std::make_unique<BicgstabMethod<Backend>>(be, precond);
    } else {
      cg = std::make_unique<CgMethod<Backend>>(be, precond, kind == KrylovKind::kPcgf);
    }
  }

  static int slot_count(KrylovKind kind) {
    const bool bicgstab = kind == KrylovKind::kBicgstab || kind == KrylovKind::kPbicgstab;
    return bicgstab ? static_cast<int>(BicgstabSlots::kCount) : static_cast<int>(CgSlots::kCount);
  }
  int init_slot() const {
    return cg ? static_cast<int>(CgSlots::kInit) : static_cast<int>(BicgstabSlots::kInit);
  }

  cudaStream_t stream = nullptr;  // the default stream
  std::size_t n;
  Backend be;
  cuda::DeviceArray<Index> ptr, col;
  cuda::DeviceArray<T> val, d;
  cuda::CsrRef<T> A;
  cuda::DeviceArray<T> b, x, r;
  std::unique_ptr<CgMethod<Backend>> cg;
  std::unique_ptr<BicgstabMethod<Backend>> bicgstab;
};

template <class T>
KrylovSteps<T>::KrylovSteps(KrylovKind kind, const CsrMatrix<T>& A, const std::vector<T>& diagonal)
    : impl_(std::make_unique<Impl>(kind, A, diagonal)) {}

template <class T>
KrylovSteps<T>::~KrylovSteps() = default;

template <class T>
void KrylovSteps<T>::start(const std::vector<T>& b, const std::vector<T>& x0) {
  Impl& m = *impl_;
  m.b.assign(b);
  m.x.assign(x0);
  cuda::csr_residual(m.A, m.x.data(), m.b.data(), m.r.data(), m.stream);
  m.be.set_slot(m.init_slot(), 1.0);
  if (m.cg) {
    m.cg->init(m.r.data());
  } else {
    m.bicgstab->init(m.r.data());
  }
}

template <class T>
IterationResult KrylovSteps<T>::iterate() {
  Impl& m = *impl_;
  typename Impl::Operator op{&m};
  if (m.cg) {
    m.cg->iteration(op, m.x.data(), m.r.data());
    return CgMethod<typename Impl::Backend>::outcome(slots().data());
  }
  m.bicgstab->iteration(op, m.x.data(), m.r.data());
  return BicgstabMethod<typename Impl::Backend>::outcome(slots().data());
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
  return impl_->be.read_slots();
}

template class KrylovSteps<float>;
template class KrylovSteps<double>;

}  // namespace jaxamg::device
