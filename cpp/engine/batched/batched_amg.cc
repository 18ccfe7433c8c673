#include "batched/batched_amg.h"

#include <omp.h>

#include <vector>

#include "batched/batched_smoothers.h"
#include "backend/lanes/multivector.h"

namespace jaxamg::batched {

// The lane-interleaved kernels of the CPU lanes backend.
using namespace ::jaxamg::lanes;

namespace {

template <class T>
struct LevelWork {
  const AmgLevel<T>* level = nullptr;
  std::unique_ptr<Node<T>> smoother;  // nullptr: no smoothing on this level
  Vector<T> b, x;                     // levels > 0
  Vector<T> r;                        // explicit R only
  Vector<T> restrict_work;            // R = P^T: per-thread partial sums
};

template <class T>
class AmgNode final : public Node<T> {
 public:
  AmgNode(const AmgSolver<T>& amg, std::vector<LevelWork<T>> work,
          std::unique_ptr<Node<T>> coarse)
      : p_(amg.cycle_params()), work_(std::move(work)), coarse_(std::move(coarse)),
        coarsest_(static_cast<int>(work_.size()) - 1) {
    this->max_iters_ = amg.max_iters();
  }

  // AmgSolver::solve_iteration is one cycle; apply runs `iterations` of them.
  void apply(const T* B, T* X, int k, bool x_is_zero, int iterations) override {
    if (iterations <= 0) {
      if (x_is_zero) fill<T>(work_[0].level->rows(), k, T(0), X);
      return;
    }
    for (int it = 0; it < iterations; ++it) fixed(0, p_.type, B, X, k, x_is_zero && it == 0);
  }

 private:
  void fixed(int l, CycleType type, const T* b, T* x, int k, bool x_is_zero) {
    LevelWork<T>& W = work_[l];
    const AmgLevel<T>& L = *W.level;
    if (l == coarsest_) {
      if (coarse_) {
        coarse_->solve(b, x, k, x_is_zero);
      } else {
        smooth(W, b, x, k, x_is_zero, p_.coarsest_sweeps);
      }
      return;
    }
    const Index n = L.rows();
    const int pre = p_.sweeps(l, p_.presweeps);
    LevelWork<T>& C = work_[l + 1];
    const T* d = W.smoother ? W.smoother->zero_start_scale() : nullptr;
    if (x_is_zero && pre == 1 && d && L.r_is_pt) {
      // One Jacobi-type sweep from zero (x = d .* b), fused with b_c = P^T (b - A x).
      restrict_diagonal_start(*L.A, d, b, L.ops.P, x, C.b.data(), W.restrict_work.data(),
                              W.restrict_work.size(), k);
      coarse_correction(l, type, b, x, k);
      return;
    }
    smooth(W, b, x, k, x_is_zero, pre);
    const bool x_still_zero = x_is_zero && (pre <= 0 || !W.smoother);
    if (L.r_is_pt) {
      restrict_residual(*L.A, x_still_zero ? nullptr : x, b, L.ops.P, C.b.data(),
                        W.restrict_work.data(), W.restrict_work.size(), k);
    } else {
      if (x_still_zero) {
        copy<T>(n, k, b, W.r.data());
      } else {
        residual(*L.A, x, b, W.r.data(), k);
      }
      spmv(L.ops.R, W.r.data(), C.b.data(), k);
    }
    coarse_correction(l, type, b, x, k);
  }

  // With b_c on level l + 1: solve there, x += P x_c, post-smooth.
  void coarse_correction(int l, CycleType type, const T* b, T* x, int k) {
    dispatch(l + 1, l + 1 == coarsest_ ? CycleType::kV : type, k);
    spmv_add(work_[l].level->ops.P, work_[l + 1].x.data(), x, k);
    smooth(work_[l], b, x, k, false, p_.sweeps(l, p_.postsweeps));
  }

  void smooth(LevelWork<T>& W, const T* b, T* x, int k, bool x_is_zero, int sweeps) {
    if (W.smoother && sweeps > 0) {
      W.smoother->apply(b, x, k, x_is_zero, sweeps);
    } else if (x_is_zero) {
      fill<T>(W.level->rows(), k, T(0), x);
    }
  }

  void dispatch(int m, CycleType type, int k) {
    LevelWork<T>& W = work_[m];
    switch (type) {
      case CycleType::kW:
        fixed(m, CycleType::kW, W.b.data(), W.x.data(), k, true);
        fixed(m, CycleType::kW, W.b.data(), W.x.data(), k, false);
        break;
      case CycleType::kF:
        fixed(m, CycleType::kF, W.b.data(), W.x.data(), k, true);
        fixed(m, CycleType::kV, W.b.data(), W.x.data(), k, false);
        break;
      default:  // kV (make_amg_node rejects the K-cycles)
        fixed(m, CycleType::kV, W.b.data(), W.x.data(), k, true);
        break;
    }
  }

  const CycleParams& p_;
  std::vector<LevelWork<T>> work_;
  std::unique_ptr<Node<T>> coarse_;
  int coarsest_;
};

}  // namespace

template <class T>
std::unique_ptr<Node<T>> make_amg_node(const AmgSolver<T>& amg, int max_lanes) {
  const CycleParams& p = amg.cycle_params();
  if (p.type == CycleType::kCG || p.type == CycleType::kCGF) return nullptr;
  if (p.error_scaling >= 2) return nullptr;
  const std::vector<AmgLevel<T>>& levels = amg.levels();
  if (levels.empty()) return nullptr;
  std::unique_ptr<Node<T>> coarse;
  if (const Solver<T>* cs = amg.coarse_solver()) {
    coarse = make_node(*cs, max_lanes, /*as_solve=*/true);
    if (!coarse) return nullptr;
  }
  const std::size_t K = static_cast<std::size_t>(max_lanes);
  std::vector<LevelWork<T>> work(levels.size());
  for (std::size_t l = 0; l < levels.size(); ++l) {
    const AmgLevel<T>& L = levels[l];
    LevelWork<T>& W = work[l];
    W.level = &L;
    if (L.smoother) {
      // Smoothers are applied (Solver::apply), whatever their monitoring.
      W.smoother = make_node(*L.smoother, max_lanes, /*as_solve=*/false);
      if (!W.smoother) return nullptr;
    }
    const std::size_t n = static_cast<std::size_t>(L.rows());
    if (l > 0) {
      W.b.resize(n * K);
      W.x.resize(n * K);
    }
    if (L.has_coarser()) {
      if (L.r_is_pt) {
        W.restrict_work.resize(
            restrict_work_size(L.ops.P, static_cast<int>(omp_get_max_threads()), max_lanes));
      } else {
        W.r.resize(n * K);
      }
    }
  }
  return std::make_unique<AmgNode<T>>(amg, std::move(work), std::move(coarse));
}

template std::unique_ptr<Node<float>> make_amg_node(const AmgSolver<float>&, int);
template std::unique_ptr<Node<double>> make_amg_node(const AmgSolver<double>&, int);

}  // namespace jaxamg::batched
