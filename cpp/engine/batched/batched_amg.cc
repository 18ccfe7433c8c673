#include "batched/batched_amg.h"

#include <omp.h>

#include <vector>

#include "amg/cycle.h"
#include "backend/lanes/multivector.h"
#include "backend/lanes/vector_backend.h"
#include "batched/batched_smoothers.h"

namespace jaxamg::batched {

using namespace ::jaxamg::lanes;

namespace {

template <class T>
struct LevelWork {
  const AmgLevel<T>* level = nullptr;
  std::unique_ptr<Node<T>> smoother;  // nullptr: no smoothing on this level
  std::unique_ptr<VectorBackend<T>> backend;
  Vector<T> b, x;                     // levels > 0
  Vector<T> r;                        // explicit R or error scaling
  Vector<T> restrict_work;            // R = P^T: per-thread partial sums
  Vector<T> e, ae;                    // error scaling
  Vector<T> kr, kz, kp, ky;           // K-cycle (levels > 0)
  int scale_counter = 0;
};

// The levels of an AmgSolver on blocks of k lanes, as amg/cycle.h sees them.
template <class T>
class LaneLevels : public LevelVectors<LaneLevels<T>, T> {
 public:
  using value_type = T;

  LaneLevels(std::vector<LevelWork<T>> work, std::unique_ptr<Node<T>> coarse)
      : work_(std::move(work)), coarse_(std::move(coarse)) {}

  // The width of the block the next cycles run on.
  void set_lanes(int k) {
    k_ = k;
    for (LevelWork<T>& W : work_) W.backend->set_lanes(k);
  }

  int count() const { return static_cast<int>(work_.size()); }
  Index rows(int l) const { return work_[l].level->rows(); }
  VectorBackend<T>& backend(int l) { return *work_[l].backend; }
  LevelWork<T>& work(int l) { return work_[l]; }

  bool has_smoother(int l) const { return work_[l].smoother != nullptr; }
  void smooth(int l, const T* b, T* x, bool x_is_zero, int sweeps) {
    LevelWork<T>& W = work_[l];
    if (W.smoother && sweeps > 0) {
      W.smoother->apply(b, x, k_, x_is_zero, sweeps);
    } else if (x_is_zero) {
      fill<T>(rows(l), k_, T(0), x);
    }
  }
  void coarsest(const T* b, T* x, bool x_is_zero, int sweeps) {
    if (coarse_) {
      coarse_->solve(b, x, k_, x_is_zero);
    } else {
      smooth(count() - 1, b, x, x_is_zero, sweeps);
    }
  }
  // The specialisation of the lanes backend: one Jacobi-type sweep from zero
  // (x = d .* b) fused with b_c = P^T (b - A x), reading b once.
  bool zero_start_restrict(int l, const T* b, T* x) {
    LevelWork<T>& W = work_[l];
    const T* d = W.smoother ? W.smoother->zero_start_scale() : nullptr;
    if (!d || !W.level->r_is_pt || !W.r.empty()) return false;
    restrict_diagonal_start(*W.level->A, d, b, W.level->ops.P, x, work_[l + 1].b.data(),
                            W.restrict_work.data(), W.restrict_work.size(), k_);
    return true;
  }
  void restrict_residual(int l, const T* x, const T* b) {
    LevelWork<T>& W = work_[l];
    const AmgLevel<T>& L = *W.level;
    T* bc = work_[l + 1].b.data();
    if (L.r_is_pt && W.r.empty()) {
      lanes::restrict_residual(*L.A, x, b, L.ops.P, bc, W.restrict_work.data(),
                        W.restrict_work.size(), k_);
      return;
    }
    if (x) {
      residual(*L.A, x, b, W.r.data(), k_);
    } else {
      copy<T>(rows(l), k_, b, W.r.data());
    }
    if (L.r_is_pt) {
      lanes::restrict_residual(*L.A, static_cast<const T*>(nullptr), W.r.data(), L.ops.P, bc,
                        W.restrict_work.data(), W.restrict_work.size(), k_);
    } else {
      spmv(L.ops.R, W.r.data(), bc, k_);
    }
  }
  void prolongate(int l, T* e) { spmv(work_[l].level->ops.P, this->x(l + 1), e, k_); }
  void prolongate_add(int l, backend::Coef scale, T* x) {
    if (scale.slot < 0 && scale.factor == 1.0) {
      spmv_add(work_[l].level->ops.P, this->x(l + 1), x, k_);
      return;
    }
    // x + a P x_c is P x_c's a multiple added, as cpu::spmv_axpby adds it.
    prolongate(l, this->e(l));
    backend(l).axpy(scale, this->e(l), x, backend::kAllLanes);
  }
  void matvec(int l, const T* x, T* y) { spmv(*work_[l].level->A, x, y, k_); }

 private:
  std::vector<LevelWork<T>> work_;
  std::unique_ptr<Node<T>> coarse_;
  int k_ = 1;
};

template <class T>
class AmgNode final : public Node<T> {
 public:
  AmgNode(const AmgSolver<T>& amg, LaneLevels<T> levels)
      : p_(amg.cycle_params()), levels_(std::move(levels)) {
    this->max_iters_ = amg.max_iters();
  }

  // AmgSolver::solve_iteration is one cycle; apply runs `iterations` of them.
  void apply(const T* B, T* X, int k, bool x_is_zero, int iterations) override {
    if (iterations <= 0) {
      if (x_is_zero) fill<T>(levels_.rows(0), k, T(0), X);
      return;
    }
    levels_.set_lanes(k);
    Cycle<LaneLevels<T>> cycle(levels_, p_);
    for (int it = 0; it < iterations; ++it) cycle.run(B, X, x_is_zero && it == 0);
  }

 private:
  const CycleParams& p_;
  LaneLevels<T> levels_;
};

}  // namespace

template <class T>
std::unique_ptr<Node<T>> make_amg_node(const AmgSolver<T>& amg, int max_lanes) {
  const CycleParams& p = amg.cycle_params();
  // A reused scale is per lane and would not follow the lanes when a batch
  // drops the finished ones; scales computed every cycle are batched.
  if (p.error_scaling >= 2 && p.reuse_scale > 0) return nullptr;
  const std::vector<AmgLevel<T>>& levels = amg.levels();
  if (levels.empty()) return nullptr;
  std::unique_ptr<Node<T>> coarse;
  if (const Solver<T>* cs = amg.coarse_solver()) {
    coarse = make_node(*cs, max_lanes, /*as_solve=*/true);
    if (!coarse) return nullptr;
  }
  const bool kcycle = p.type == CycleType::kCG || p.type == CycleType::kCGF;
  const bool scaling = p.error_scaling >= 2;
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
    W.backend = std::make_unique<VectorBackend<T>>(n, max_lanes, CycleSlots::kCount);
    if (l > 0) {
      W.b.resize(n * K);
      W.x.resize(n * K);
    }
    if (L.has_coarser()) {
      if (L.r_is_pt) {
        W.restrict_work.resize(
            restrict_work_size(L.ops.P, static_cast<int>(omp_get_max_threads()), max_lanes));
      }
      if (!L.r_is_pt || scaling) W.r.resize(n * K);
      if (scaling) {
        W.e.resize(n * K);
        W.ae.resize(n * K);
      }
      if (kcycle && l > 0) {
        for (Vector<T>* v : {&W.kr, &W.kz, &W.kp, &W.ky}) v->resize(n * K);
      }
    }
  }
  return std::make_unique<AmgNode<T>>(amg, LaneLevels<T>(std::move(work), std::move(coarse)));
}

template std::unique_ptr<Node<float>> make_amg_node(const AmgSolver<float>&, int);
template std::unique_ptr<Node<double>> make_amg_node(const AmgSolver<double>&, int);

}  // namespace jaxamg::batched
