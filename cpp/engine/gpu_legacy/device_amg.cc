#include "gpu_legacy/device_amg.h"

#include <algorithm>

#include "backend/cuda/csr_kernels.h"
#include "backend/cuda/kernels.h"
#include "core/error.h"
#include "solvers/direct/dense_lu.h"
#include "solvers/smoothers/block_jacobi.h"
#include "solvers/smoothers/chebyshev.h"
#include "solvers/smoothers/common.h"

namespace jaxamg::cuda {

namespace {

// The diagonal of a Jacobi-type smoother whose one sweep is x += d .* (b - A x),
// or nullptr (a block smoother, or not a diagonal one).
template <class T>
const Vector<T>* jacobi_diagonal(const Solver<T>* s) {
  if (const auto* bj = dynamic_cast<const BlockJacobiSolver<T>*>(s)) {
    return bj->block_dim() == 1 ? &bj->scaled_inverse_diagonal() : nullptr;
  }
  if (const auto* d = dynamic_cast<const DiagonalScaling<T>*>(s)) {
    return &d->scaled_inverse_diagonal();
  }
  return nullptr;
}

// Why smoother `s` of level l cannot run on the device ("" if it can).
template <class T>
std::string smoother_unsupported(const Solver<T>* s, int l) {
  if (!s || jacobi_diagonal(s)) return "";
  if (const auto* c = dynamic_cast<const ChebyshevSolver<T>*>(s)) {
    if (c->diagonal_scale() != nullptr) return "";
    return "the CHEBYSHEV smoother of level " + std::to_string(l) +
           " has a non-diagonal preconditioner";
  }
  return "smoother " + s->name() + " (level " + std::to_string(l) + ")";
}

}  // namespace

template <class T>
std::string DeviceAmg<T>::unsupported(const AmgSolver<T>& amg) {
  const CycleParams& p = amg.cycle_params();
  if (p.type == CycleType::kCG || p.type == CycleType::kCGF) return "the K-cycle (cycle CG/CGF)";
  if (p.error_scaling >= 2) return "error_scaling " + std::to_string(p.error_scaling);
  if (amg.num_levels() < 1) return "an AMG solver without levels";
  const Solver<T>* coarse = amg.coarse_solver();
  if (coarse && !dynamic_cast<const DenseLUSolver<T>*>(coarse)) {
    return "coarse solver " + coarse->name();
  }
  for (int l = 0; l < amg.num_levels(); ++l) {
    const std::string why = smoother_unsupported(amg.levels()[l].smoother.get(), l);
    if (!why.empty()) return why;
  }
  return "";
}

template <class T>
DeviceAmg<T>::DeviceAmg(cusparseHandle_t handle, const AmgSolver<T>& amg)
    : handle_(handle), params_(amg.cycle_params()), max_iters_(amg.max_iters()) {
  const std::string why = unsupported(amg);
  if (!why.empty()) throw NotSupported("CUDA backend: " + why + " does not run on the GPU");
  const int nl = amg.num_levels();
  levels_.resize(nl);
  for (int l = 0; l < nl; ++l) {
    Level& L = levels_[l];
    L.A.upload(handle_, amg.level_matrix(l));
    const std::size_t n = L.rows();
    if (l + 1 < nl) {
      const TransferOperators<T>& ops = amg.transfer(l);
      L.P.upload(handle_, ops.P);
      L.R.upload(handle_, ops.R);
    }
    if (l > 0) {
      L.b.resize(n);
      L.x.resize(n);
    }
    L.r.resize(n);
    const Solver<T>* sm = amg.levels()[l].smoother.get();
    if (const Vector<T>* d = jacobi_diagonal(sm)) {
      L.smoother = SmootherKind::kDiagonal;
      L.diag.assign(*d);
    } else if (const auto* c = dynamic_cast<const ChebyshevSolver<T>*>(sm)) {
      L.smoother = SmootherKind::kChebyshev;
      L.diag.assign(c->diagonal_scale(), n);
      L.lmin = c->lambda_min();
      L.lmax = c->lambda_max();
      L.order = c->order();
      L.p.resize(n);
    }
  }
  if (const auto* lu = dynamic_cast<const DenseLUSolver<T>*>(amg.coarse_solver())) {
    set_coarse_inverse(*lu);
  }
}

template <class T>
void DeviceAmg<T>::set_coarse_inverse(const DenseLUSolver<T>& lu) {
  coarse_n_ = lu.size();
  DeviceArray<T> factors;
  DeviceArray<Index> piv;
  factors.assign(lu.factors());
  piv.assign(lu.pivots());
  coarse_inverse_.resize(static_cast<std::size_t>(coarse_n_) * coarse_n_);
  dense_inverse<T>(coarse_n_, factors.data(), piv.data(), coarse_inverse_.data(), nullptr);
  check(cudaStreamSynchronize(nullptr), "dense_inverse (coarse LU)");
}

template <class T>
void DeviceAmg<T>::spmv(const DeviceCsr<T>& M, T alpha, const T* x, T beta, T* y) {
  M.spmv(handle_, alpha, x, beta, y);
  traffic_.bytes += M.spmv_bytes() + (beta != T(0) ? M.rows() * sizeof(T) : 0);
}

template <class T>
void DeviceAmg<T>::residual(Level& L, const T* x, const T* b, T* r, cudaStream_t s) {
  const double vec = static_cast<double>(L.rows()) * sizeof(T);
  if (!L.A.uses_cusparse()) {
    csr_residual(L.A.ref(), x, b, r, s);
    traffic_.bytes += L.A.spmv_bytes() + vec;
    return;
  }
  check(cudaMemcpyAsync(r, b, L.rows() * sizeof(T), cudaMemcpyDeviceToDevice, s),
        "cudaMemcpyAsync (residual)");
  traffic_.bytes += 2.0 * vec;
  spmv(L.A, T(-1), x, T(1), r);
}

template <class T>
bool DeviceAmg<T>::fused_sweep(Level& L, const T* b, T*& cur, int step, double a, double bcoef,
                               cudaStream_t s) {
  if (L.A.uses_cusparse()) return false;
  // Out of place: every row's product needs the old iterate. L.r is free
  // while smoothing (fixed() fills it only afterwards), so it holds the other copy.
  T* next = L.other;
  const double vec = static_cast<double>(L.rows()) * sizeof(T);
  if (L.smoother == SmootherKind::kDiagonal) {
    csr_jacobi(L.A.ref(), L.diag.data(), cur, b, next, s);
    traffic_.bytes += L.A.spmv_bytes() + 2 * vec;
  } else {
    csr_chebyshev(L.A.ref(), L.diag.data(), cur, b, static_cast<T>(a), static_cast<T>(bcoef),
                  step == 0, L.p.data(), next, s);
    traffic_.bytes += L.A.spmv_bytes() + (step == 0 ? 3 : 4) * vec;
  }
  L.other = cur;
  cur = next;
  return true;
}

template <class T>
int DeviceAmg<T>::sweeps(int l, int n) const {
  if (l == 0 && params_.finest_sweeps != -1) return n == 0 ? 0 : params_.finest_sweeps;
  if (n != 0 && params_.intensive_smoothing) return std::max(n + l - 2, 0);
  return n;
}

template <class T>
void DeviceAmg<T>::smooth(Level& L, const T* b, T* x, bool x_is_zero, int sweeps_n,
                          cudaStream_t s) {
  const std::size_t n = L.rows();
  const double vec = static_cast<double>(n) * sizeof(T);
  if (L.smoother == SmootherKind::kNone || sweeps_n <= 0) {
    if (x_is_zero) {
      fill<T>(n, T(0), x, s);
      traffic_.bytes += vec;
    }
    return;
  }
  // The fused sweeps alternate between x and L.r; `cur` holds the iterate.
  T* cur = x;
  L.other = L.r.data();
  if (L.smoother == SmootherKind::kDiagonal) {
    // JacobiL1Solver / BlockJacobiSolver::solve_iteration (diagonal_sweep).
    for (int it = 0; it < sweeps_n; ++it) {
      if (x_is_zero && it == 0) {
        diag_scale<T>(n, L.diag.data(), b, x, s);
        traffic_.bytes += 3 * vec;
      } else if (!fused_sweep(L, b, cur, 0, 0, 0, s)) {
        residual(L, x, b, L.r.data(), s);
        diag_update<T>(n, L.diag.data(), L.r.data(), x, s);
        traffic_.bytes += 4 * vec;
      }
    }
  } else {
    // ChebyshevSolver::apply: the recurrence restarts at each apply and
    // runs `order` steps per sweep (step_diagonal).
    double alpha_prev = 0;
    int step = 0;
    for (int it = 0; it < sweeps_n; ++it) {
      for (int o = 0; o < L.order; ++o, ++step) {
        double a, bcoef;
        chebyshev_step_coefficients(L.lmin, L.lmax, step, alpha_prev, &a, &bcoef);
        const bool zero = x_is_zero && it == 0 && o == 0;
        if (step == 0 && zero) {
          cheby_step<T>(n, L.diag.data(), b, static_cast<T>(a), T(0), true, true, L.p.data(), x,
                        s);
          traffic_.bytes += 4 * vec;
        } else if (!fused_sweep(L, b, cur, step, a, bcoef, s)) {
          residual(L, x, b, L.r.data(), s);
          cheby_step<T>(n, L.diag.data(), L.r.data(), static_cast<T>(a), static_cast<T>(bcoef),
                        step == 0, false, L.p.data(), x, s);
          traffic_.bytes += 6 * vec;
        }
        alpha_prev = a;
      }
    }
  }
  if (cur != x) {
    check(cudaMemcpyAsync(x, cur, n * sizeof(T), cudaMemcpyDeviceToDevice, s),
          "cudaMemcpyAsync (smoothed iterate)");
    traffic_.bytes += 2 * vec;
  }
}

template <class T>
void DeviceAmg<T>::fixed(int l, CycleType type, const T* b, T* x, bool x_is_zero,
                         cudaStream_t s) {
  Level& L = levels_[l];
  const int coarsest = num_levels() - 1;
  if (l == coarsest) {
    if (coarse_n_ > 0) {
      dense_matvec<T>(coarse_n_, coarse_inverse_.data(), b, x, s);
      traffic_.bytes += static_cast<double>(coarse_n_) * (coarse_n_ + 2) * sizeof(T);
    } else {
      smooth(L, b, x, x_is_zero, params_.coarsest_sweeps, s);
    }
    return;
  }
  const int pre = sweeps(l, params_.presweeps);
  smooth(L, b, x, x_is_zero, pre, s);
  const bool x_still_zero = x_is_zero && (pre <= 0 || L.smoother == SmootherKind::kNone);
  Level& C = levels_[l + 1];
  if (x_still_zero) {
    spmv(L.R, T(1), b, T(0), C.b.data());
  } else {
    residual(L, x, b, L.r.data(), s);
    spmv(L.R, T(1), L.r.data(), T(0), C.b.data());
  }
  dispatch(l + 1, l + 1 == coarsest ? CycleType::kV : type, s);
  spmv(L.P, T(1), C.x.data(), T(1), x);
  smooth(L, b, x, false, sweeps(l, params_.postsweeps), s);
}

template <class T>
void DeviceAmg<T>::dispatch(int m, CycleType type, cudaStream_t s) {
  Level& L = levels_[m];
  switch (type) {
    case CycleType::kV:
      fixed(m, CycleType::kV, L.b.data(), L.x.data(), true, s);
      break;
    case CycleType::kW:
      fixed(m, CycleType::kW, L.b.data(), L.x.data(), true, s);
      fixed(m, CycleType::kW, L.b.data(), L.x.data(), false, s);
      break;
    case CycleType::kF:
      fixed(m, CycleType::kF, L.b.data(), L.x.data(), true, s);
      fixed(m, CycleType::kV, L.b.data(), L.x.data(), false, s);
      break;
    default:
      throw NotSupported("CUDA backend: cycle type not supported on the GPU");
  }
}

template <class T>
void DeviceAmg<T>::cycle(const T* b, T* x, bool x_is_zero, cudaStream_t s) {
  fixed(0, params_.type, b, x, x_is_zero, s);
}

template <class T>
void DeviceAmg<T>::precondition(const T* b, T* x, cudaStream_t s) {
  if (max_iters_ <= 0) {
    fill<T>(levels_.front().rows(), T(0), x, s);
    return;
  }
  for (int it = 0; it < max_iters_; ++it) cycle(b, x, it == 0, s);
}

template class DeviceAmg<float>;
template class DeviceAmg<double>;

}  // namespace jaxamg::cuda
