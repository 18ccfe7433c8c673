#include "batched/batched_krylov.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>

#include "backend/lanes/multivector.h"
#include "backend/lanes/vector_backend.h"
#include "batched/batched_node.h"
#include "solvers/krylov/bicgstab_method.h"
#include "solvers/krylov/cg_method.h"
#include "solvers/krylov/gmres_cycle.h"
#include "solvers/krylov/gmres_method.h"
#include "solvers/krylov/idr_method.h"
#include "solvers/krylov/idr_solver.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg::batched {

using namespace ::jaxamg::lanes;

namespace {

using Mask = std::vector<std::uint8_t>;

bool any(const Mask& m) { return std::find(m.begin(), m.end(), 1) != m.end(); }

// One right-hand side: its SolveTracker (Solver<T>::solve's decisions; the
// method's recurrence scalars are the lane's slots in the backend).
struct Lane {
  explicit Lane(const LoopSettings& s) : track(s) {}
  int id = 0;
  SolveTracker track;
  // solve_init due (start or restart); still set after init_lanes, the
  // lane is held by the method and takes no step.
  bool need_init = true;
  bool finished = false;  // final: to be written out and dropped
};

// The batched solve of one Krylov method M (CgMethod, BicgstabMethod,
// GmresMethod or IdrMethod on the lanes backend): the per-lane loop of
// Solver<T>::solve around M's iterations. The loop asks the same of every M:
// init(r, every) and can_start_lanes() to (re)start lanes, iteration(),
// outcome() and l2_residual_norm() per lane, finalize() for the lanes whose
// solve ends, state_vectors() and lanes_dropped() when lanes leave the block.
template <class T, class M>
class KrylovBatch final : public BatchSolver<T> {
 public:
  using Backend = VectorBackend<T>;

  // Work space for blocks of up to `cap` lanes with M's `slots` scalars
  // each (and the loop's own), kept for every later solve;
  // make_method(backend) builds M on it.
  template <class MakeMethod>
  KrylovBatch(const Solver<T>& s, std::unique_ptr<Node<T>> precond, int cap, int slots,
              MakeMethod make_method)
      : s_(s), A_(s.matrix()), precond_(std::move(precond)), n_(A_.nrows), cap_(cap),
        ending_(slots), be_(static_cast<std::size_t>(n_), cap, slots + 1),
        method_(make_method(be_)) {
    for (Vector<T>* v : {&x_, &b_, &r_, &w_, &spare_}) *v = be_.make_vector();
  }

  int block_lanes() const override { return cap_; }

  void solve(const T* B, T* X, int nrhs, bool use_x0, std::vector<LaneResult>* out) override {
    out->assign(std::max(nrhs, 0), LaneResult());
    const std::size_t n = static_cast<std::size_t>(n_);
    for (int j0 = 0; j0 < nrhs; j0 += cap_) {
      run(B + j0 * n, X + j0 * n, std::min(cap_, nrhs - j0), use_x0, out->data() + j0);
    }
  }

 private:
  // Lanes [0, width) of one block; their results go to out[0, width).
  void run(const T* B, T* X, int width, bool use_x0, LaneResult* out) {
    x_is_zero_ = !use_x0;
    be_.start(width);
    for (int j = 0; j < width; ++j) {
      set_lane<T>(n_, k(), j, B + static_cast<std::size_t>(j) * n_, b_.data());
      if (use_x0) set_lane<T>(n_, k(), j, X + static_cast<std::size_t>(j) * n_, x_.data());
    }
    const LoopSettings settings = s_.loop_settings();
    lanes_.assign(width, Lane(settings));
    for (int j = 0; j < width; ++j) lanes_[j].id = j;
    std::vector<double> nrm(k(), -1.0);
    if (settings.monitor) {
      if (x_is_zero_) {
        copy<T>(n_, k(), b_.data(), r_.data());
      } else {
        residual(A_, x_.data(), b_.data(), r_.data(), k());
      }
      norm(n_, k(), r_.data(), s_.norm_type(), nrm.data());
    }
    for (int j = 0; j < k(); ++j) {
      Lane& L = lanes_[j];
      L.track.start(nrm[j]);
      L.finished = L.track.finished();
    }
    retire(X, out);
    while (k() > 0) {
      init_lanes();
      step();
      iteration_end(settings.monitor, nrm);
      retire(X, out);
    }
  }

  // solve_init for the lanes that need it: r = b - A x (x = 0, r = b on the
  // first pass from a zero guess), then the method's own start. While the
  // others go on, a method may not be able to start lanes (IDR within a
  // cycle): they keep their kInit slot and need_init, and M holds them.
  void init_lanes() {
    const int k = be_.lanes();
    const auto due = [](const Lane& L) { return L.need_init; };
    if (std::none_of(lanes_.begin(), lanes_.end(), due)) return;
    const bool every = std::all_of(lanes_.begin(), lanes_.end(), due);
    for (int j = 0; j < k; ++j) {
      if (lanes_[j].need_init) be_.slots(j)[M::S::kInit] = 1.0;
    }
    if (!every && !method_.can_start_lanes()) return;
    Mask zero(k, 0), from_x(k, 0);
    for (int j = 0; j < k; ++j) {
      Lane& L = lanes_[j];
      if (!L.need_init) continue;
      // The first pass may start from the zero guess.
      (L.track.begin_pass() && x_is_zero_ ? zero : from_x)[j] = 1;
      L.need_init = false;
    }
    if (any(zero)) {
      fill<T>(n_, k, T(0), x_.data(), zero.data());
      copy<T>(n_, k, b_.data(), r_.data(), zero.data());
    }
    if (any(from_x)) {
      residual(A_, x_.data(), b_.data(), w_.data(), k);
      copy<T>(n_, k, w_.data(), r_.data(), from_x.data());
    }
    method_.init(r_.data(), every);
  }

  // The operator and preconditioner of M's iterations on the current block
  // (without a preconditioner, z = r, as KrylovSolver<T>::precondition).
  struct LaneOperator {
    KrylovBatch* batch;
    void matvec(const T* x, T* y) const { spmv(batch->A_, x, y, batch->be_.lanes()); }
    void precondition(const T* r, T* z) const {
      if (!batch->precond_) {
        copy<T>(batch->n_, batch->be_.lanes(), r, z);
        return;
      }
      batch->precond_->solve(r, z, batch->be_.lanes(), /*x_is_zero=*/true);
    }
    void residual(const T* x, T* r) const {
      lanes::residual(batch->A_, x, batch->b_.data(), r, batch->be_.lanes());
    }
  };

  void step() {
    LaneOperator op{this};
    method_.iteration(op, x_.data(), r_.data());
  }

  // Each lane's tracker after one iteration, then the end of its pass for
  // lanes that stopped or ran out of iterations (the true-residual check,
  // which may restart a lane).
  void iteration_end(bool monitor, std::vector<double>& nrm) {
    if (monitor) norm(n_, k(), r_.data(), s_.norm_type(), nrm.data());
    Mask check(k(), 0), ending(k(), 0);
    for (int j = 0; j < k(); ++j) {
      Lane& L = lanes_[j];
      if (L.need_init) continue;  // held by M (init_lanes): it took no step
      // Where M's recurrence gives the norm, it replaces |r| (as
      // Solver<T>::solve's residual_norm_estimate).
      if (monitor && s_.norm_type() == NormType::kL2) {
        method_.l2_residual_norm(be_.slots(j), &nrm[j]);
      }
      L.track.record(M::outcome(be_.slots(j)), nrm[j], /*from_recurrence=*/true);
      if (L.track.running()) continue;
      ending[j] = 1;
      if (L.track.end_pass()) {
        check[j] = 1;
      } else {
        L.finished = true;
      }
    }
    if (any(ending)) {
      // M completes the iterate of the ending lanes (GMRES: a cycle in
      // progress), as Solver<T>::solve's solve_finalize.
      for (int j = 0; j < k(); ++j) be_.slots(j)[ending_] = ending[j];
      LaneOperator op{this};
      method_.finalize(op, x_.data(), ending_);
    }
    if (!any(check)) return;
    residual(A_, x_.data(), b_.data(), w_.data(), k());
    std::vector<double> true_norm(k());
    norm(n_, k(), w_.data(), s_.norm_type(), true_norm.data());
    for (int j = 0; j < k(); ++j) {
      if (!check[j]) continue;
      Lane& L = lanes_[j];
      L.track.check_true_residual(true_norm[j]);
      L.finished = L.track.finished();
      L.need_init = !L.finished;  // restart the method from the current iterate
    }
  }

  // Writes out the finished lanes and drops them from every block.
  void retire(T* X, LaneResult* out) {
    std::vector<int> keep;
    for (int j = 0; j < k(); ++j) {
      Lane& L = lanes_[j];
      if (!L.finished) {
        keep.push_back(j);
        continue;
      }
      T* xo = X + static_cast<std::size_t>(L.id) * n_;
      if (L.track.answer_is_zero_guess(x_is_zero_)) {
        // A zero guess that needed no iteration is the answer.
        std::fill(xo, xo + n_, T(0));
      } else {
        get_lane<T>(n_, k(), j, x_.data(), xo);
      }
      std::uint8_t finite = 1;
      all_finite<T>(n_, 1, xo, &finite);
      if (!finite) L.track.fail();
      LaneResult& res = out[L.id];
      res.status = L.track.status();
      res.iterations = L.track.iterations();
      res.residual = L.track.final_norm();
      res.history = std::move(L.track.history());
    }
    if (static_cast<int>(keep.size()) == k()) return;
    std::vector<Vector<T>*> blocks{&x_, &b_, &r_};
    for (Vector<T>* v : method_.state_vectors()) blocks.push_back(v);
    const int before = k();
    be_.keep_lanes(keep, blocks, &spare_);
    method_.lanes_dropped(before);
    std::vector<Lane> kept;
    for (int j : keep) kept.push_back(std::move(lanes_[j]));
    lanes_ = std::move(kept);
  }

  // Lanes still going in the current block.
  int k() const { return be_.lanes(); }

  const Solver<T>& s_;
  const CsrMatrix<T>& A_;
  std::unique_ptr<Node<T>> precond_;
  Index n_;
  int cap_;  // the widest block the work space holds
  // The loop's own slot after M's: the lanes whose solve ends (the mask
  // of M::finalize).
  int ending_;
  bool x_is_zero_ = true;
  std::vector<Lane> lanes_;
  Backend be_;
  M method_;
  // Lane-interleaved blocks of the loop: x, b, r; w (a true residual);
  // spare serves the compaction.
  Vector<T> x_, b_, r_, w_, spare_;
};

}  // namespace

template <class T>
std::unique_ptr<BatchSolver<T>> make_batch_solver(const Solver<T>& s, int lanes) {
  if (lanes < 1 || s.matrix().dist || prints_statistics(s)) return nullptr;
  const int cap = std::min(lanes, kMaxBlockLanes);
  const auto* krylov = dynamic_cast<const KrylovSolver<T>*>(&s);
  if (!krylov) return nullptr;
  const bool cg = s.name() == "PCG" || s.name() == "PCGF";
  const auto* gmres = dynamic_cast<const krylov::GmresCycle<T>*>(&s);
  const auto* idr = dynamic_cast<const krylov::IdrSolver<T>*>(&s);
  if (!cg && !gmres && !idr && s.name() != "PBICGSTAB" && s.name() != "BICGSTAB") {
    return nullptr;
  }
  std::unique_ptr<Node<T>> precond;
  if (const Solver<T>* pc = krylov->preconditioner()) {
    precond = make_node(*pc, cap, /*as_solve=*/true);
    if (!precond) return nullptr;
  } else if (cg) {
    return nullptr;  // CG without M tests its recurrence norm <r, r> instead
  }
  const bool preconditioned = precond != nullptr;
  if (cg) {
    const bool flexible = s.name() == "PCGF";
    return std::make_unique<KrylovBatch<T, CgMethod<VectorBackend<T>>>>(
        s, std::move(precond), cap, CgSlots::kCount, [&](VectorBackend<T>& be) {
          return CgMethod<VectorBackend<T>>(be, preconditioned, flexible);
        });
  }
  if (gmres) {
    using Method = GmresMethod<VectorBackend<T>>;
    const GmresShape shape = gmres->shape();
    const bool track = gmres->tracks_residual();
    return std::make_unique<KrylovBatch<T, Method>>(
        s, std::move(precond), cap, Method::layout(shape).count(),
        [&](VectorBackend<T>& be) { return Method(be, shape, track); });
  }
  if (idr) {
    using Method = IdrMethod<VectorBackend<T>>;
    const IdrShape shape = idr->shape(s.matrix().nrows, 0);
    return std::make_unique<KrylovBatch<T, Method>>(
        s, std::move(precond), cap, Method::layout(shape).count(),
        [&](VectorBackend<T>& be) { return Method(be, shape); });
  }
  return std::make_unique<KrylovBatch<T, BicgstabMethod<VectorBackend<T>>>>(
      s, std::move(precond), cap, BicgstabSlots::kCount, [&](VectorBackend<T>& be) {
        return BicgstabMethod<VectorBackend<T>>(be, preconditioned);
      });
}

template <class T>
bool solve_batched(const Solver<T>& s, const T* B, T* X, Index n, int nrhs, bool use_x0,
                   std::vector<LaneResult>* results) {
  if (n != s.matrix().nrows) return false;
  const std::unique_ptr<BatchSolver<T>> batch = make_batch_solver(s, nrhs);
  if (!batch) return false;
  batch->solve(B, X, nrhs, use_x0, results);
  return true;
}

template std::unique_ptr<BatchSolver<float>> make_batch_solver(const Solver<float>&, int);
template std::unique_ptr<BatchSolver<double>> make_batch_solver(const Solver<double>&, int);
template bool solve_batched(const Solver<float>&, const float*, float*, Index, int, bool,
                            std::vector<LaneResult>*);
template bool solve_batched(const Solver<double>&, const double*, double*, Index, int, bool,
                            std::vector<LaneResult>*);

}  // namespace jaxamg::batched
