#include "device/device_amg.h"

#include <algorithm>

#include "backend/cuda/kernels.h"
#include "core/error.h"
#include "solvers/direct/dense_lu.h"
#include "solvers/smoothers/block_jacobi.h"
#include "solvers/smoothers/chebyshev.h"
#include "solvers/smoothers/common.h"
#include "solvers/smoothers/multicolor_dilu.h"
#include "solvers/smoothers/multicolor_gs.h"
#include "solvers/smoothers/multicolor_ilu.h"

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
  if (dynamic_cast<const BlockJacobiSolver<T>*>(s)) return "";  // block_dim > 1
  if (const auto* gs = dynamic_cast<const MulticolorGSSolver<T>*>(s)) {
    if (gs->block_dim() <= backend::kMaxDeviceBlock) return "";
    return "MULTICOLOR_GS with block_dim " + std::to_string(gs->block_dim()) + " > " +
           std::to_string(backend::kMaxDeviceBlock) + " (level " + std::to_string(l) + ")";
  }
  if (dynamic_cast<const MulticolorDILUSolver<T>*>(s)) return "";
  if (dynamic_cast<const MulticolorILUSolver<T>*>(s)) return "";
  if (const auto* c = dynamic_cast<const ChebyshevSolver<T>*>(s)) {
    if (c->diagonal_scale() != nullptr) return "";
    return "the CHEBYSHEV smoother of level " + std::to_string(l) +
           " has a non-diagonal preconditioner";
  }
  return "smoother " + s->name() + " (level " + std::to_string(l) + ")";
}

// The colouring, colour-split matrix, inverted diagonal and relaxation
// factor of a colour-ordered factorisation (MULTICOLOR_DILU or _ILU).
template <class T, class Smoother>
void copy_color_split(const Smoother& s, device::DeviceAmgLevel<T>& L) {
  const smoothers::ColorSplit& split = s.split();
  L.diag.assign(s.inverse_diagonal());
  L.color_rows.assign(s.coloring().rows);
  L.color_ptr = s.coloring().color_ptr;
  L.w = s.relaxation_factor();
  L.split_ptr.assign(split.row_ptr);
  L.split_col.assign(split.col);
  L.split_diag.assign(split.diag);
  L.split_val.assign(s.split_values());
}

// The device data of the set-up host smoother `sm` (nullptr: none), for
// the level whose matrix L.A holds.
template <class T>
void copy_smoother(const Solver<T>* sm, device::DeviceAmgLevel<T>& L) {
  if (const Vector<T>* d = jacobi_diagonal(sm)) {
    L.smoother = device::DeviceSmoother::kDiagonal;
    L.diag.assign(*d);
  } else if (const auto* bj = dynamic_cast<const BlockJacobiSolver<T>*>(sm)) {
    L.smoother = device::DeviceSmoother::kBlockJacobi;
    L.diag.assign(bj->scaled_block_inverses());
    L.block_dim = bj->block_dim();
  } else if (const auto* c = dynamic_cast<const ChebyshevSolver<T>*>(sm)) {
    L.smoother = device::DeviceSmoother::kChebyshev;
    L.diag.assign(c->diagonal_scale(), L.rows());
    L.lmin = c->lambda_min();
    L.lmax = c->lambda_max();
    L.order = c->order();
  } else if (const auto* gs = dynamic_cast<const MulticolorGSSolver<T>*>(sm)) {
    L.smoother = device::DeviceSmoother::kMulticolorGS;
    L.diag.assign(gs->scale());
    L.color_rows.assign(gs->color_rows());
    L.color_ptr = gs->color_ptr();
    L.block_dim = gs->block_dim();
    L.symmetric = gs->symmetric();
  } else if (const auto* dilu = dynamic_cast<const MulticolorDILUSolver<T>*>(sm)) {
    L.smoother = device::DeviceSmoother::kMulticolorDILU;
    copy_color_split(*dilu, L);
  } else if (const auto* ilu = dynamic_cast<const MulticolorILUSolver<T>*>(sm)) {
    L.smoother = device::DeviceSmoother::kMulticolorILU;
    copy_color_split(*ilu, L);
    L.split_lu.assign(ilu->factor_values());
  }
}

}  // namespace

std::string cycle_unsupported(const CycleParams& p) {
  if (p.error_scaling >= 2 && p.reuse_scale > 0) {
    return "error_scaling " + std::to_string(p.error_scaling) + " with reuse_scale " +
           std::to_string(p.reuse_scale) + " (set reuse_scale 0)";
  }
  return "";
}

template <class T>
std::string DeviceAmg<T>::unsupported(const AmgSolver<T>& amg) {
  return unsupported(amg.view());
}

template <class T>
std::string DeviceAmg<T>::unsupported(const HierarchyView<T>& h) {
  const std::string cycle = cycle_unsupported(h.cycle);
  if (!cycle.empty()) return cycle;
  if (h.levels.empty()) return "an AMG solver without levels";
  const Solver<T>* coarse = h.coarse_solver;
  if (coarse && !dynamic_cast<const DenseLUSolver<T>*>(coarse)) {
    return "coarse solver " + coarse->name();
  }
  for (std::size_t l = 0; l < h.levels.size(); ++l) {
    const Solver<T>* sm = h.levels[l].smoother;
    const int level = static_cast<int>(l);
    const std::string why = smoother_unsupported(sm, level);
    if (!why.empty()) return why;
    // The colour-split factors read no ghost values.
    if (h.levels[l].A->dist && (dynamic_cast<const MulticolorDILUSolver<T>*>(sm) ||
                                dynamic_cast<const MulticolorILUSolver<T>*>(sm))) {
      return "smoother " + sm->name() + " on a distributed matrix (level " + std::to_string(level) +
             ")";
    }
  }
  return "";
}

template <class T>
DeviceAmg<T>::DeviceAmg(cusparseHandle_t handle, const AmgSolver<T>& amg)
    : DeviceAmg(handle, amg.view(), amg.max_iters()) {}

template <class T>
DeviceAmg<T>::DeviceAmg(cusparseHandle_t handle, const HierarchyView<T>& h, int max_iters)
    : handle_(handle), max_iters_(max_iters) {
  const std::string why = unsupported(h);
  if (!why.empty()) throw NotSupported("CUDA backend: " + why + " does not run on the GPU");
  data_.params = h.cycle;
  data_.reducer = h.reducer;
  data_.host_coarse = h.host_coarse;
  const std::size_t nl = h.levels.size();
  data_.levels.resize(nl);
  for (std::size_t l = 0; l < nl; ++l) {
    const HierarchyLevelView<T>& V = h.levels[l];
    device::DeviceAmgLevel<T>& L = data_.levels[l];
    L.A.upload(handle_, *V.A);
    if (V.A->dist) L.A.set_halos(&V.A->dist->packed_halo(), V.A->nrows, nullptr, 0);
    L.capacity = std::max(V.A->nrows, V.A->ncols);
    if (l > 0) L.capacity = std::max(L.capacity, h.levels[l - 1].P->ncols);
    if (V.P) {
      L.P.upload(handle_, *V.P);
      if (V.R) {
        L.R.upload(handle_, *V.R);
      } else {
        L.R.upload(handle_, transpose(*V.P));
      }
      if (V.p_halo) {
        // P's ghost coarse columns: prolongation reads them, restriction
        // returns their partial sums (R's rows past the owned coarse rows).
        const Index nc = h.levels[l + 1].A->nrows;
        L.P.set_halos(V.p_halo, nc, nullptr, 0);
        L.R.set_halos(nullptr, 0, V.p_halo, nc);
      }
    }
    copy_smoother(V.smoother, L);
  }
  if (const auto* lu = dynamic_cast<const DenseLUSolver<T>*>(h.coarse_solver)) {
    set_coarse_inverse(*lu);
  }
  make_cycle();
}

template <class T>
std::string DeviceAmg<T>::unsupported_smoother(const Solver<T>& smoother) {
  HierarchyView<T> h;
  h.levels.push_back({&smoother.matrix(), nullptr, nullptr, nullptr, &smoother});
  return unsupported(h);
}

template <class T>
DeviceAmg<T>::DeviceAmg(cusparseHandle_t handle, const Solver<T>& smoother)
    : handle_(handle), max_iters_(1) {
  const std::string why = unsupported_smoother(smoother);
  if (!why.empty()) throw NotSupported("CUDA backend: " + why + " does not run on the GPU");
  // One cycle of a one-level hierarchy is the coarsest level's sweeps: the
  // smoother's max_iters of them from a zero guess (Solver::apply).
  data_.params.coarsest_sweeps = smoother.max_iters();
  data_.levels.resize(1);
  device::DeviceAmgLevel<T>& L = data_.levels[0];
  const CsrMatrix<T>& A = smoother.matrix();
  L.A.upload(handle_, A);
  L.capacity = std::max(A.nrows, A.ncols);
  if (A.dist) {
    L.A.set_halos(&A.dist->packed_halo(), A.nrows, nullptr, 0);
    data_.reducer = A.dist.get();
  }
  copy_smoother(&smoother, L);
  make_cycle();
}

template <class T>
DeviceAmg<T>::~DeviceAmg() = default;

template <class T>
void DeviceAmg<T>::make_cycle() {
  cycle_ = std::make_unique<device::AmgCycle<T>>(handle_, data_, &traffic_.bytes);
}

template <class T>
void DeviceAmg<T>::set_coarse_inverse(const DenseLUSolver<T>& lu) {
  const Index n = lu.size();
  DeviceArray<T> factors;
  DeviceArray<Index> piv;
  factors.assign(lu.factors());
  piv.assign(lu.pivots());
  data_.coarse_inverse.resize(static_cast<std::size_t>(n) * n);
  dense_inverse<T>(n, factors.data(), piv.data(), data_.coarse_inverse.data(), nullptr);
  check(cudaStreamSynchronize(nullptr), "dense_inverse (coarse LU)");
  data_.coarse_n = n;
}

template <class T>
void DeviceAmg<T>::cycle(const T* b, T* x, bool x_is_zero, cudaStream_t s) {
  cycle_->run(b, x, x_is_zero, s);
}

template <class T>
void DeviceAmg<T>::precondition(const T* b, T* x, cudaStream_t s) {
  if (max_iters_ <= 0) {
    fill<T>(static_cast<std::size_t>(fine_matrix().rows()), T(0), x, s);
    return;
  }
  for (int it = 0; it < max_iters_; ++it) cycle(b, x, it == 0, s);
}

template class DeviceAmg<float>;
template class DeviceAmg<double>;

}  // namespace jaxamg::cuda
