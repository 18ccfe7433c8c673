// The device hierarchy as amg/cycle.h sees it (DeviceLevels), and the cycle
// run on it (see amg_cycle.h).
#include "device/amg_cycle.h"

#include "amg/cycle.h"
#include "backend/cuda/kernels.h"
#include "backend/cuda/vector_backend.cuh"
#include "solvers/smoothers/chebyshev_method.h"
#include "solvers/smoothers/diagonal_sweep_method.h"
#include "solvers/smoothers/multicolor_methods.h"

namespace jaxamg::device {

namespace {

template <class T>
using Backend = cuda::VectorBackend<T>;
template <class T>
using Vec = typename Backend<T>::vector_type;

// What a level adds to its DeviceAmgLevel for running cycles.
template <class T>
struct LevelWork {
  std::unique_ptr<Backend<T>> be;
  cuda::CsrRef<T> A;  // the smoothers' view of the level matrix
  Vec<T> b, x;        // levels > 0
  Vec<T> r;           // the residual to restrict (levels above the coarsest)
  Vec<T> e, ae;       // error scaling
  Vec<T> kr, kz, kp, ky;  // K-cycle
  std::unique_ptr<DiagonalSweepMethod<Backend<T>>> sweep;
  std::unique_ptr<BlockJacobiSweepMethod<Backend<T>>> block_jacobi;
  std::unique_ptr<ChebyshevMethod<Backend<T>>> chebyshev;
  std::unique_ptr<MulticolorGSMethod<Backend<T>>> gs;
  std::unique_ptr<MulticolorDILUMethod<Backend<T>>> dilu;
  std::unique_ptr<MulticolorILUMethod<Backend<T>>> ilu;
  int scale_counter = 0;
};

template <class T>
class DeviceLevels : public LevelVectors<DeviceLevels<T>, T> {
 public:
  using value_type = T;

  DeviceLevels(cusparseHandle_t handle, const DeviceAmgData<T>& data, double* bytes)
      : handle_(handle), data_(data), bytes_(bytes) {
    // Sized and zeroed on the handle's stream now, waited for below.
    cuda::check(cusparseGetStream(handle, &stream_), "cusparseGetStream");
    const CycleParams& p = data.params;
    const int nl = static_cast<int>(data.levels.size());
    const bool kcycle = p.type == CycleType::kCG || p.type == CycleType::kCGF;
    work_.resize(nl);  // sized once: the methods keep references into it
    for (int l = 0; l < nl; ++l) {
      const DeviceAmgLevel<T>& L = data.levels[l];
      LevelWork<T>& W = work_[l];
      W.be = std::make_unique<Backend<T>>(static_cast<std::size_t>(L.rows()),
                                          static_cast<int>(CycleSlots::kCount), stream_);
      if (data.reducer || L.capacity > L.rows()) {
        W.be->distribute(static_cast<std::size_t>(L.capacity), data.reducer);
      }
      W.A = L.A.ref();
      if (l > 0) {
        W.b = W.be->make_vector();
        W.x = W.be->make_vector();
        if (kcycle) {
          W.kr = W.be->make_vector();
          W.kz = W.be->make_vector();
          W.kp = W.be->make_vector();
          W.ky = W.be->make_vector();
        }
      }
      if (l + 1 < nl) {
        W.r = W.be->make_vector();
        if (p.error_scaling >= 2) {
          W.e = W.be->make_vector();
          W.ae = W.be->make_vector();
        }
      }
      if (L.smoother == DeviceSmoother::kDiagonal) {
        W.sweep = std::make_unique<DiagonalSweepMethod<Backend<T>>>(*W.be, W.A, L.diag.data());
      } else if (L.smoother == DeviceSmoother::kBlockJacobi) {
        W.block_jacobi = std::make_unique<BlockJacobiSweepMethod<Backend<T>>>(
            *W.be, W.A, backend::BlockScale<T>{L.block_dim, L.diag.data()});
      } else if (L.smoother == DeviceSmoother::kChebyshev) {
        W.chebyshev = std::make_unique<ChebyshevMethod<Backend<T>>>(*W.be, W.A, L.diag.data(),
                                                                    L.lmin, L.lmax, L.order);
      } else if (L.smoother == DeviceSmoother::kMulticolorGS) {
        W.gs = std::make_unique<MulticolorGSMethod<Backend<T>>>(
            *W.be, W.A, L.color_rows.data(), L.color_ptr,
            backend::BlockScale<T>{L.block_dim, L.diag.data()}, L.symmetric);
      } else if (L.smoother == DeviceSmoother::kMulticolorDILU) {
        const backend::DiluFactors<T> f{L.color_rows.data(), L.split_ptr.data(),
                                        L.split_col.data(),  L.split_diag.data(),
                                        L.split_val.data(),  L.diag.data()};
        W.dilu = std::make_unique<MulticolorDILUMethod<Backend<T>>>(*W.be, f, L.color_ptr, L.w);
      } else if (L.smoother == DeviceSmoother::kMulticolorILU) {
        const backend::IluFactors<T> f{L.color_rows.data(), L.split_ptr.data(),
                                       L.split_col.data(),  L.split_diag.data(),
                                       L.split_val.data(),  L.split_lu.data(),
                                       L.diag.data()};
        W.ilu = std::make_unique<MulticolorILUMethod<Backend<T>>>(*W.be, f, L.color_ptr, L.w);
      }
    }
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (cycle work vectors)");
  }

  void set_stream(cudaStream_t stream) {
    stream_ = stream;
    for (LevelWork<T>& W : work_) W.be->set_stream(stream);
  }

  int count() const { return static_cast<int>(work_.size()); }
  Backend<T>& backend(int l) { return *work_[l].be; }
  LevelWork<T>& work(int l) { return work_[l]; }

  bool has_smoother(int l) const { return data_.levels[l].smoother != DeviceSmoother::kNone; }

  void smooth(int l, const T* b, T* x, bool x_is_zero, int sweeps) {
    LevelWork<T>& W = work_[l];
    const DeviceAmgLevel<T>& L = data_.levels[l];
    const double vec = vector_bytes(l);
    if (!has_smoother(l) || sweeps <= 0) {
      if (x_is_zero) {
        W.be->fill_zero(x);
        *bytes_ += vec;
      }
      return;
    }
    // The Jacobi-type sweeps alternate the iterate between x and a scratch
    // vector: one copy when an odd count starts from a nonzero guess.
    const auto copies = [&](int steps) { return !x_is_zero && steps % 2 == 1 ? 2 * vec : 0.0; };
    if (W.sweep) {
      // A sweep reads A, x, D and b and writes the new iterate.
      W.sweep->apply(b, x, x_is_zero, sweeps);
      const double sweep = L.A.spmv_bytes() + 2 * vec;
      *bytes_ += (x_is_zero ? 3 * vec + (sweeps - 1) * sweep : sweeps * sweep) + copies(sweeps);
    } else if (W.block_jacobi) {
      W.block_jacobi->apply(b, x, x_is_zero, sweeps);
      // The residual (A, b, x, r), then the nodes (their blocks: block_dim
      // values per row, r, x read and written).
      const double update = (L.block_dim + 3) * vec;
      *bytes_ += sweeps * (L.A.spmv_bytes() + 3 * vec + update) -
                 (x_is_zero ? L.A.spmv_bytes() + vec : 0);
    } else if (W.gs) {
      W.gs->apply(b, x, x_is_zero, sweeps);
      // A direction reads A, b, the scale and the row list, and updates x.
      const double pass = L.A.spmv_bytes() + 5 * vec;
      *bytes_ += sweeps * (W.gs->symmetric() ? 2 : 1) * pass + (x_is_zero ? vec : 0);
    } else if (W.dilu || W.ilu) {
      if (W.dilu) {
        W.dilu->apply(b, x, x_is_zero, sweeps);
      } else {
        W.ilu->apply(b, x, x_is_zero, sweeps);
      }
      // Forward: the split rows, b, x, z and the inverted diagonal;
      // backward: the rows again (counted whole), z read and written, x
      // updated. (ILU also reads its factors' L part: not counted.)
      *bytes_ += sweeps * (2 * L.A.spmv_bytes() + 10 * vec);
    } else {
      W.chebyshev->apply(b, x, x_is_zero, sweeps);
      // A step reads A, x, S, b and p (not the first) and writes p and the
      // new iterate; the start from a zero guess reads S and b.
      const int steps = sweeps * L.order;
      const double step = L.A.spmv_bytes() + 4 * vec;
      *bytes_ += (x_is_zero ? 4 * vec : step - vec) + (steps - 1) * step + copies(steps);
    }
  }

  void coarsest(const T* b, T* x, bool x_is_zero, int sweeps) {
    if (data_.host_coarse) {
      host_coarse(b, x);
    } else if (data_.coarse_n > 0) {
      const Index n = data_.coarse_n;
      cuda::dense_matvec<T>(n, data_.coarse_inverse.data(), b, x, stream_);
      *bytes_ += static_cast<double>(n) * (n + 2) * sizeof(T);
    } else {
      smooth(count() - 1, b, x, x_is_zero, sweeps);
    }
  }

  bool zero_start_restrict(int /*l*/, const T* /*b*/, T* /*x*/) { return false; }

  void restrict_residual(int l, const T* x, const T* b) {
    const DeviceAmgLevel<T>& L = data_.levels[l];
    LevelWork<T>& W = work_[l];
    const double vec = vector_bytes(l);
    const T* src = b;
    if (x) {
      residual(L, x, b, W.r.data());
      src = W.r.data();
    } else if (!W.e.empty()) {
      // Error scaling reads the restricted residual r later.
      W.be->copy(b, W.r.data(), backend::kAllLanes);
      *bytes_ += 2 * vec;
      src = W.r.data();
    }
    spmv(L.R, T(1), src, T(0), work_[l + 1].b.data());
  }

  void prolongate(int l, T* e) { spmv(data_.levels[l].P, T(1), this->x(l + 1), T(0), e); }

  void prolongate_add(int l, backend::Coef scale, T* x) {
    if (scale.slot < 0) {
      spmv(data_.levels[l].P, static_cast<T>(scale.factor), work_[l + 1].x.data(), T(1), x);
      return;
    }
    // The scale is a slot in device memory: prolongate, then add it scaled.
    prolongate(l, this->e(l));
    backend(l).axpy(scale, this->e(l), x, backend::kAllLanes);
    *bytes_ += 3 * vector_bytes(l);
  }

  void matvec(int l, const T* x, T* y) { spmv(data_.levels[l].A, T(1), x, T(0), y); }

 private:
  // The coarsest solve on the host: b down, x up (the rows of this process).
  void host_coarse(const T* b, T* x) {
    const std::size_t n = static_cast<std::size_t>(data_.levels.back().rows());
    host_b_.resize(n);
    host_x_.resize(n);
    if (n > 0) {
      cuda::check(cudaMemcpyAsync(host_b_.data(), b, n * sizeof(T), cudaMemcpyDeviceToHost,
                                  stream_),
                  "cudaMemcpyAsync (coarsest right-hand side)");
    }
    cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (coarsest solve)");
    data_.host_coarse(host_b_.data(), host_x_.data());
    if (n > 0) {
      cuda::check(cudaMemcpyAsync(x, host_x_.data(), n * sizeof(T), cudaMemcpyHostToDevice,
                                  stream_),
                  "cudaMemcpyAsync (coarsest correction)");
      // host_x_ is pageable: the copy has read it once the stream reaches it.
      cuda::check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (coarsest solve)");
    }
    *bytes_ += 2.0 * n * sizeof(T);
  }

  double vector_bytes(int l) const { return static_cast<double>(data_.levels[l].rows()) * sizeof(T); }

  void spmv(const cuda::DeviceCsr<T>& M, T alpha, const T* x, T beta, T* y) {
    M.spmv(handle_, alpha, x, beta, y);
    *bytes_ += M.spmv_bytes() + (beta != T(0) ? M.rows() * sizeof(T) : 0);
  }

  // r = b - A x: one fused pass with the backend's kernels, or a copy and a
  // cuSPARSE product.
  void residual(const DeviceAmgLevel<T>& L, const T* x, const T* b, T* r) {
    const double vec = static_cast<double>(L.rows()) * sizeof(T);
    if (!L.A.uses_cusparse()) {
      cuda::csr_residual(L.A.ref(), x, b, r, stream_);
      *bytes_ += L.A.spmv_bytes() + vec;
      return;
    }
    cuda::check(cudaMemcpyAsync(r, b, L.rows() * sizeof(T), cudaMemcpyDeviceToDevice, stream_),
                "cudaMemcpyAsync (residual)");
    *bytes_ += 2 * vec;
    spmv(L.A, T(-1), x, T(1), r);
  }

  cusparseHandle_t handle_;
  cudaStream_t stream_ = nullptr;
  const DeviceAmgData<T>& data_;
  double* bytes_;
  std::vector<LevelWork<T>> work_;
  std::vector<T> host_b_, host_x_;  // host_coarse's staging
};

}  // namespace

template <class T>
struct AmgCycle<T>::Impl {
  DeviceLevels<T> levels;
  Cycle<DeviceLevels<T>> cycle;
  Impl(cusparseHandle_t handle, const DeviceAmgData<T>& data, double* bytes)
      : levels(handle, data, bytes), cycle(levels, data.params) {}
};

template <class T>
AmgCycle<T>::AmgCycle(cusparseHandle_t handle, const DeviceAmgData<T>& data, double* bytes)
    : impl_(std::make_unique<Impl>(handle, data, bytes)) {}

template <class T>
AmgCycle<T>::~AmgCycle() = default;

template <class T>
void AmgCycle<T>::run(const T* b, T* x, bool x_is_zero, cudaStream_t stream) {
  impl_->levels.set_stream(stream);
  impl_->cycle.run(b, x, x_is_zero);
}

template class AmgCycle<float>;
template class AmgCycle<double>;

}  // namespace jaxamg::device
