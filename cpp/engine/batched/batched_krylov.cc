#include "batched/batched_krylov.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>

#include "batched/batched_node.h"
#include "batched/multivector.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg::batched {

namespace {

enum class Method { kPcg, kPcgf, kBicgstab };

using Mask = std::vector<std::uint8_t>;

bool any(const Mask& m) { return std::find(m.begin(), m.end(), 1) != m.end(); }

// One right-hand side: Solver<T>::solve's loop state plus the method's
// recurrence scalars.
struct Lane {
  int id = 0;
  LaneResult res;
  double initial = -1, largest = -1;
  bool first_pass = true;       // solve_init has not run yet
  bool need_init = true;        // solve_init due (start or restart)
  bool from_recurrence = false;  // the last norm came from the recurrence
  bool done = false;            // the method's inner loop stopped
  bool finished = false;        // final: to be written out and dropped
  bool first = true;            // no search direction yet
  // The true residual of the last failed check (a restart must halve it).
  double rejected_true_norm = std::numeric_limits<double>::infinity();
  double rho = 0, alpha = 0, omega = 0, rz = 0;
};

template <class T>
class KrylovBatch final : public BatchSolver<T> {
 public:
  // Work space for blocks of up to `cap` lanes, kept for every later solve.
  KrylovBatch(const Solver<T>& s, Method method, std::unique_ptr<Node<T>> precond, int cap)
      : s_(s), A_(s.matrix()), method_(method), precond_(std::move(precond)), n_(A_.nrows),
        cap_(cap), k_(0) {
    const std::size_t size = static_cast<std::size_t>(n_) * cap;
    for (Vector<T>* v : {&x_, &b_, &r_, &p_, &v_, &w_, &spare_}) v->resize(size);
    if (precond_) z_.resize(size);
    if (method_ == Method::kBicgstab) {
      shadow_.resize(size);
      t_.resize(size);
      if (precond_) shat_.resize(size);
    }
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
  // Lanes [0, k) of one block; their results go to out[0, k).
  void run(const T* B, T* X, int k, bool use_x0, LaneResult* out) {
    x_is_zero_ = !use_x0;
    k_ = k;
    lanes_.assign(k, Lane());
    for (int j = 0; j < k; ++j) lanes_[j].id = j;
    for (int j = 0; j < k_; ++j) {
      set_lane<T>(n_, k_, j, B + static_cast<std::size_t>(j) * n_, b_.data());
      if (use_x0) set_lane<T>(n_, k_, j, X + static_cast<std::size_t>(j) * n_, x_.data());
    }
    const bool monitor = s_.monitors_residual();
    std::vector<double> nrm(k_);
    if (monitor) {
      if (x_is_zero_) {
        copy<T>(n_, k_, b_.data(), r_.data());
      } else {
        residual(A_, x_.data(), b_.data(), r_.data(), k_);
      }
      norm(n_, k_, r_.data(), s_.norm_type(), nrm.data());
      for (int j = 0; j < k_; ++j) {
        Lane& L = lanes_[j];
        L.initial = L.largest = L.res.residual = nrm[j];
        if (s_.stores_history()) L.res.history.push_back(nrm[j]);
        if (!std::isfinite(nrm[j])) {
          L.res.status = Status::kFailed;
          L.finished = true;
        } else if (s_.converged_with(nrm[j], nrm[j], nrm[j])) {
          L.finished = true;
        }
      }
    }
    for (Lane& L : lanes_) {
      if (!L.finished && s_.max_iters() == 0) {
        L.res.status = monitor ? Status::kNotConverged : Status::kSuccess;
        L.finished = true;
      }
    }
    retire(X, out);
    while (k_ > 0) {
      init_lanes();
      step();
      iteration_end(monitor, nrm);
      retire(X, out);
    }
  }

  // solve_init for the lanes that need it: r = b - A x (x = 0, r = b on the
  // first pass from a zero guess), the shadow residual, no direction yet.
  void init_lanes() {
    Mask zero(k_, 0), from_x(k_, 0), all(k_, 0);
    for (int j = 0; j < k_; ++j) {
      Lane& L = lanes_[j];
      if (!L.need_init) continue;
      all[j] = 1;
      (x_is_zero_ && L.first_pass ? zero : from_x)[j] = 1;
      L.need_init = L.first_pass = L.from_recurrence = false;
      L.first = true;
    }
    if (!any(all)) return;
    if (any(zero)) {
      fill<T>(n_, k_, T(0), x_.data(), zero.data());
      copy<T>(n_, k_, b_.data(), r_.data(), zero.data());
    }
    if (any(from_x)) {
      residual(A_, x_.data(), b_.data(), w_.data(), k_);
      copy<T>(n_, k_, w_.data(), r_.data(), from_x.data());
    }
    if (method_ == Method::kBicgstab) copy<T>(n_, k_, r_.data(), shadow_.data(), all.data());
  }

  // KrylovSolver::stop_recurrence for the lanes in `stop`: kConverged if r
  // is exactly zero, else kBreakdown.
  void stop_lanes(const Mask& stop) {
    if (!any(stop)) return;
    std::vector<double> nr(k_);
    norm(n_, k_, r_.data(), NormType::kL2, nr.data());
    for (int j = 0; j < k_; ++j) {
      if (stop[j]) result_[j] = nr[j] == 0.0 ? IterationResult::kConverged : IterationResult::kBreakdown;
    }
  }

  void precondition(const T* r, T* z) {
    if (precond_) precond_->solve(r, z, k_, /*x_is_zero=*/true);
  }

  void step() {
    result_.assign(k_, IterationResult::kContinue);
    if (method_ == Method::kBicgstab) {
      step_bicgstab();
    } else {
      step_cg();
    }
  }

  // ConjugateGradient::solve_iteration (preconditioned), per lane.
  void step_cg() {
    const std::size_t n = n_;
    const int k = k_;
    T* r = r_.data();
    T* p = p_.data();
    T* q = v_.data();
    T* z = z_.data();
    T* x = x_.data();
    Mask go(k, 1), stop(k, 0), first(k, 0), next(k, 0);
    std::vector<double> rz_new(k), zq(k), pq(k);
    std::vector<T> c1(k), c2(k);
    precondition(r, z);
    dot(n, k, r, z, rz_new.data());
    for (int j = 0; j < k; ++j) {
      if (unusable_divisor(rz_new[j])) {
        go[j] = 0;
        stop[j] = 1;
      } else {
        (lanes_[j].first ? first : next)[j] = 1;
      }
    }
    if (method_ == Method::kPcgf && any(next)) dot(n, k, z, q, zq.data());
    for (int j = 0; j < k; ++j) {
      Lane& L = lanes_[j];
      if (!go[j]) continue;
      if (!L.first) {
        // Polak-Ribiere for PCGF: <z_new, r_new - r_old> / <z_old, r_old>.
        const double beta =
            method_ == Method::kPcgf ? -L.alpha * zq[j] / L.rz : rz_new[j] / L.rz;
        c1[j] = static_cast<T>(beta);
      }
      L.first = false;
      L.rz = rz_new[j];
    }
    copy<T>(n, k, z, p, first.data());
    xpby<T>(n, k, z, c1.data(), p, next.data());
    spmv(A_, p, q, k);
    dot(n, k, p, q, pq.data());
    for (int j = 0; j < k; ++j) {
      if (!go[j]) continue;
      if (unusable_divisor(pq[j])) {
        go[j] = 0;
        stop[j] = 1;
        continue;
      }
      Lane& L = lanes_[j];
      L.alpha = L.rz / pq[j];
      c1[j] = static_cast<T>(L.alpha);
      c2[j] = static_cast<T>(-L.alpha);
    }
    axpy<T>(n, k, c1.data(), p, x, go.data());
    axpy<T>(n, k, c2.data(), q, r, go.data());
    stop_lanes(stop);
  }

  // BiCGStab::solve_iteration (right preconditioned, or plain), per lane.
  void step_bicgstab() {
    const std::size_t n = n_;
    const int k = k_;
    T* r = r_.data();
    T* p = p_.data();
    T* v = v_.data();
    T* t = t_.data();
    T* x = x_.data();
    const T* rs = shadow_.data();
    T* phat = precond_ ? z_.data() : p;
    T* shat = precond_ ? shat_.data() : r;
    Mask go(k, 1), stop(k, 0), first(k, 0), next(k, 0), half(k, 0);
    std::vector<double> d(k), tt(k);
    std::vector<T> c1(k), c2(k), c3(k);
    auto halt = [&](int j) {
      go[j] = 0;
      stop[j] = 1;
    };

    dot(n, k, rs, r, d.data());  // rho_new
    for (int j = 0; j < k; ++j) {
      Lane& L = lanes_[j];
      if (unusable_divisor(d[j])) {
        halt(j);
        continue;
      }
      if (L.first) {
        first[j] = 1;
        L.first = false;
      } else {
        const double beta = (d[j] / L.rho) * (L.alpha / L.omega);
        next[j] = 1;
        c1[j] = T(1);
        c2[j] = static_cast<T>(-beta * L.omega);
        c3[j] = static_cast<T>(beta);
      }
      L.rho = d[j];
    }
    copy<T>(n, k, r, p, first.data());
    // p = r + beta (p - omega v), in one pass.
    axpbypcz<T>(n, k, c1.data(), r, c2.data(), v, c3.data(), p, next.data());

    precondition(p, phat);
    spmv(A_, phat, v, k);
    dot(n, k, rs, v, d.data());  // <r0, v>
    for (int j = 0; j < k; ++j) {
      if (!go[j]) continue;
      if (unusable_divisor(d[j])) {
        halt(j);
        continue;
      }
      Lane& L = lanes_[j];
      L.alpha = L.rho / d[j];
      c1[j] = static_cast<T>(-L.alpha);
    }
    axpy<T>(n, k, c1.data(), v, r, go.data());  // r now holds s = r - alpha v

    precondition(r, shat);
    spmv(A_, shat, t, k);
    dot(n, k, t, t, tt.data());
    dot(n, k, t, r, d.data());  // <t, s>
    for (int j = 0; j < k; ++j) {
      if (!go[j]) continue;
      Lane& L = lanes_[j];
      c1[j] = static_cast<T>(L.alpha);
      if (unusable_divisor(tt[j])) {
        // t = A M s = 0: the half step is kept; with s = 0 it is the solution.
        half[j] = 1;
        halt(j);
        continue;
      }
      L.omega = d[j] / tt[j];
      if (unusable_divisor(L.omega)) {
        // The minimal-residual step is zero: keep the half step and stop.
        half[j] = 1;
        halt(j);
        continue;
      }
      c2[j] = static_cast<T>(L.omega);
      c3[j] = T(1);
    }
    axpy<T>(n, k, c1.data(), phat, x, half.data());
    axpbypcz<T>(n, k, c1.data(), phat, c2.data(), shat, c3.data(), x, go.data());
    for (int j = 0; j < k; ++j) c2[j] = static_cast<T>(-lanes_[j].omega);
    axpy<T>(n, k, c2.data(), t, r, go.data());
    stop_lanes(stop);
  }

  // The bookkeeping of Solver<T>::solve after one iteration, per lane, then
  // the end of its inner loop for lanes that stopped or ran out of
  // iterations (the true-residual check, which may restart a lane).
  void iteration_end(bool monitor, std::vector<double>& nrm) {
    if (monitor) norm(n_, k_, r_.data(), s_.norm_type(), nrm.data());
    const int max_iters = s_.max_iters();
    Mask check(k_, 0);
    for (int j = 0; j < k_; ++j) {
      Lane& L = lanes_[j];
      const IterationResult step = result_[j];
      ++L.res.iterations;
      if (monitor) {
        L.from_recurrence = true;
        L.res.residual = nrm[j];
        L.largest = std::max(L.largest, nrm[j]);
        if (s_.stores_history()) L.res.history.push_back(nrm[j]);
        if (!std::isfinite(nrm[j])) {
          L.res.status = Status::kFailed;
          L.done = true;
        } else if (step == IterationResult::kConverged ||
                   s_.converged_with(nrm[j], L.initial, L.largest)) {
          L.res.status = Status::kSuccess;
          L.done = true;
        }
      } else if (step == IterationResult::kConverged) {
        L.done = true;
      }
      if (!L.done && step == IterationResult::kBreakdown) {
        L.res.status = Status::kDiverged;
        L.done = true;
      }
      if (!L.done && L.res.iterations < max_iters) continue;
      if (!L.done) {
        // Krylov methods report SUCCESS after max_iters when not monitoring.
        L.res.status = monitor ? Status::kNotConverged : Status::kSuccess;
        L.finished = true;
      } else if (L.res.status == Status::kSuccess && L.from_recurrence) {
        check[j] = 1;
      } else {
        L.finished = true;
      }
    }
    if (!any(check)) return;
    residual(A_, x_.data(), b_.data(), w_.data(), k_);
    std::vector<double> true_norm(k_);
    norm(n_, k_, w_.data(), s_.norm_type(), true_norm.data());
    for (int j = 0; j < k_; ++j) {
      if (!check[j]) continue;
      Lane& L = lanes_[j];
      const double tn = true_norm[j];
      L.finished = true;
      if (std::isfinite(tn) && !s_.converged_with(tn, L.initial, L.largest)) {
        L.res.residual = tn;
        if (s_.stores_history() && !L.res.history.empty()) L.res.history.back() = tn;
        // A restart that did not halve the last rejected true residual has
        // hit the precision floor: stop as NOT_CONVERGED (Solver<T>::solve).
        const bool progressing = tn <= 0.5 * L.rejected_true_norm;
        L.rejected_true_norm = tn;
        if (L.res.iterations < max_iters && progressing) {
          // Restart the method from the current iterate.
          L.done = L.finished = false;
          L.need_init = true;
        } else {
          L.res.status = Status::kNotConverged;
        }
      }
    }
  }

  // Writes out the finished lanes and drops them from every block.
  void retire(T* X, LaneResult* out) {
    std::vector<int> keep;
    for (int j = 0; j < k_; ++j) {
      Lane& L = lanes_[j];
      if (!L.finished) {
        keep.push_back(j);
        continue;
      }
      T* xo = X + static_cast<std::size_t>(L.id) * n_;
      if (x_is_zero_ && L.res.iterations == 0) {
        // A zero guess that needed no iteration is the answer.
        std::fill(xo, xo + n_, T(0));
      } else {
        get_lane<T>(n_, k_, j, x_.data(), xo);
      }
      std::uint8_t finite = 1;
      all_finite<T>(n_, 1, xo, &finite);
      if (!finite) L.res.status = Status::kFailed;
      out[L.id] = std::move(L.res);
    }
    const int m = static_cast<int>(keep.size());
    if (m == k_) return;
    for (Vector<T>* v : {&x_, &b_, &r_, &p_, &v_, &shadow_}) {
      if (v->empty()) continue;
      select_lanes<T>(n_, k_, v->data(), keep.data(), m, spare_.data());
      v->swap(spare_);
    }
    std::vector<Lane> kept;
    for (int j : keep) kept.push_back(std::move(lanes_[j]));
    lanes_ = std::move(kept);
    k_ = m;
  }

  const Solver<T>& s_;
  const CsrMatrix<T>& A_;
  Method method_;
  std::unique_ptr<Node<T>> precond_;
  Index n_;
  int cap_;  // the widest block the work space holds
  int k_;    // lanes still going in the current block
  bool x_is_zero_ = true;
  std::vector<Lane> lanes_;
  std::vector<IterationResult> result_;
  // Lane-interleaved blocks. Kept across iterations: x, b, r, p, v (A p),
  // shadow; scratch: z (M^-1 r or M^-1 p), shat, t, w; spare serves the
  // compaction.
  Vector<T> x_, b_, r_, p_, v_, shadow_, z_, shat_, t_, w_, spare_;
};

}  // namespace

template <class T>
std::unique_ptr<BatchSolver<T>> make_batch_solver(const Solver<T>& s, int lanes) {
  if (lanes < 1 || s.matrix().dist || prints_statistics(s)) return nullptr;
  const int cap = std::min(lanes, kMaxBlockLanes);
  const auto* krylov = dynamic_cast<const KrylovSolver<T>*>(&s);
  if (!krylov) return nullptr;
  Method method;
  if (s.name() == "PCG") {
    method = Method::kPcg;
  } else if (s.name() == "PCGF") {
    method = Method::kPcgf;
  } else if (s.name() == "PBICGSTAB" || s.name() == "BICGSTAB") {
    method = Method::kBicgstab;
  } else {
    return nullptr;
  }
  std::unique_ptr<Node<T>> precond;
  if (const Solver<T>* pc = krylov->preconditioner()) {
    precond = make_node(*pc, cap, /*as_solve=*/true);
    if (!precond) return nullptr;
  } else if (method != Method::kBicgstab) {
    return nullptr;  // plain CG tests its recurrence norm <r, r> instead
  }
  return std::make_unique<KrylovBatch<T>>(s, method, std::move(precond), cap);
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
