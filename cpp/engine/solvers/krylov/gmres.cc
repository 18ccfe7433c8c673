// Restarted GMRES(m), right preconditioned (AmgX's GMRES): the basis spans
// A M^{-1}; the correction M^{-1} V y is formed once per restart, which costs
// one extra preconditioner application per cycle but stores only V. A fixed
// (linear) preconditioner is required; FGMRES is the method for variable ones.
//
// One iteration is one Arnoldi step. m is gmres_n_restart (capped at
// max_iters, so short solves allocate short bases). In the L2 norm the loop
// reads the residual norm from the rotated right-hand side; for L1/LMAX the
// residual vector is carried by its own recurrence. Each restart recomputes
// the true residual b - A x.
#include <algorithm>
#include <cmath>

#include "backend/cpu/blas.h"
#include "solvers/krylov/arnoldi.h"
#include "solvers/krylov/hessenberg.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg {

namespace {

template <class T>
class Gmres final : public KrylovSolver<T> {
 public:
  Gmres(SolverContext& ctx, const std::string& scope)
      : KrylovSolver<T>(ctx, scope, "GMRES", true) {
    restart_ = this->positive_param("gmres_n_restart");
  }

 protected:
  using KrylovSolver<T>::A_;
  using KrylovSolver<T>::r_;
  using KrylovSolver<T>::rows;
  using KrylovSolver<T>::max_iters_;
  using KrylovSolver<T>::norm_;
  using KrylovSolver<T>::monitor_residual_;

  void krylov_setup() override {
    capacity_ = 0;
    reserve(std::min(restart_, std::max(1, max_iters_)));
  }

  void solve_init(const T* b, T* x, bool x_is_zero) override {
    this->initial_residual(b, x, x_is_zero);
    // max_iters may have grown since setup; sizing here keeps
    // solve_iteration free of allocation.
    cycle_ = std::min(restart_, std::max(1, max_iters_));
    reserve(cycle_);
    j_ = 0;
    first_cycle_ = true;
    estimate_ = -1;
    track_residual_ = monitor_residual_ && norm_ != NormType::kL2;
  }

  IterationResult solve_iteration(const T* b, T* x, bool /*x_is_zero*/) override {
    const std::size_t n = rows();
    T* r = r_.data();
    if (j_ == 0) {
      if (!first_cycle_) this->residual_of(x, b, r);
      first_cycle_ = false;
      const double beta = this->global_norm(n, r, NormType::kL2);
      estimate_ = beta;
      if (beta == 0.0) return IterationResult::kConverged;
      if (!std::isfinite(beta)) return IterationResult::kBreakdown;
      cpu::copy(n, r, basis(0));
      cpu::scale<T>(n, static_cast<T>(1.0 / beta), basis(0));
      std::fill(g_.begin(), g_.end(), 0.0);
      g_[0] = beta;
    }
    const int j = j_;
    T* w = basis(j + 1);
    if (this->has_preconditioner()) {
      this->precondition(basis(j), z_.data());
      this->matvec(z_.data(), w);
    } else {
      this->matvec(basis(j), w);
    }
    double* h = &H_[static_cast<std::size_t>(j) * ld()];
    const double hn = krylov::orthogonalize<T>(n, ptrs_.data(), j + 1, h, w, this->distribution());
    double col2 = hn * hn;
    for (int i = 0; i <= j; ++i) col2 += h[i] * h[i];
    const double tiny = unit_roundoff<T>() * std::sqrt(col2);
    for (int i = 0; i < j; ++i) rot_[i].apply(h[i], h[i + 1]);
    // A zero rotated diagonal makes the Hessenberg matrix singular: the new
    // direction adds nothing and the least-squares update cannot use it.
    if (!krylov::make_givens(h[j], hn, rot_[j]) || !(h[j] > tiny)) return IterationResult::kBreakdown;
    h[j + 1] = 0;
    g_[j + 1] = -rot_[j].s * g_[j];
    g_[j] = rot_[j].c * g_[j];
    estimate_ = std::abs(g_[j + 1]);
    // hn ~ 0: the Krylov space is invariant and holds the solution (a
    // "happy" breakdown); close the cycle instead of normalising noise.
    const bool invariant = !(hn > tiny);
    if (!invariant) cpu::scale<T>(n, static_cast<T>(1.0 / hn), w);
    if (track_residual_) {
      // r_j = s_j^2 r_{j-1} + c_j g_{j+1} v_{j+1}: the residual of the
      // least-squares iterate, without forming it.
      const double s2 = rot_[j].s * rot_[j].s;
      if (invariant) {
        cpu::scale<T>(n, static_cast<T>(s2), r);
      } else {
        cpu::axpby<T>(n, static_cast<T>(rot_[j].c * g_[j + 1]), w, static_cast<T>(s2), r);
      }
    }
    j_ = j + 1;
    if (j_ == cycle_ || invariant) {
      update_solution(x);
      j_ = 0;
    }
    return IterationResult::kContinue;
  }

  void solve_finalize(const T* /*b*/, T* x) override {
    if (j_ > 0) update_solution(x);
    j_ = 0;
  }

  bool residual_norm_estimate(double* norm) const override {
    if (norm_ != NormType::kL2 || estimate_ < 0) return false;
    *norm = estimate_;
    return true;
  }

 private:
  std::size_t ld() const { return static_cast<std::size_t>(capacity_) + 1; }
  T* basis(int i) { return V_.data() + static_cast<std::size_t>(i) * rows(); }

  void reserve(int m) {
    if (m <= capacity_ && z_.size() == static_cast<std::size_t>(rows())) return;
    const std::size_t n = rows();
    capacity_ = m;
    V_.assign((static_cast<std::size_t>(m) + 1) * n, T(0));
    z_.assign(n, T(0));
    H_.assign(ld() * m, 0.0);
    g_.assign(m + 1, 0.0);
    y_.assign(m + 1, 0.0);
    rot_.assign(m, krylov::Givens{});
    ptrs_.resize(m + 1);
    for (int i = 0; i <= m; ++i) ptrs_[i] = basis(i);
  }

  // x += M^{-1} V y with R y = g over the first j_ columns.
  void update_solution(T* x) {
    const std::size_t n = rows();
    const int k = j_;
    std::copy(g_.begin(), g_.begin() + k, y_.begin());
    krylov::back_substitute(H_, static_cast<int>(ld()), k, y_);
    if (this->has_preconditioner()) {
      cpu::fill<T>(n, T(0), z_.data());
      krylov::add_combination<T>(n, ptrs_.data(), k, y_.data(), z_.data());
      // The basis is rebuilt at the next restart, so v_0 can take M^{-1} z.
      this->precondition(z_.data(), basis(0));
      cpu::axpy<T>(n, T(1), basis(0), x);
    } else {
      krylov::add_combination<T>(n, ptrs_.data(), k, y_.data(), x);
    }
  }

  int restart_ = 20;
  int cycle_ = 1;
  int capacity_ = 0;
  Vector<T> V_;  // capacity_ + 1 basis vectors, contiguous
  Vector<T> z_;
  std::vector<const T*> ptrs_;
  std::vector<double> H_, g_, y_;
  std::vector<krylov::Givens> rot_;
  int j_ = 0;
  bool first_cycle_ = true;
  bool track_residual_ = false;
  double estimate_ = -1;
};

}  // namespace

template <class T>
std::unique_ptr<Solver<T>> make_gmres(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<Gmres<T>>(ctx, scope);
}

template std::unique_ptr<Solver<float>> make_gmres<float>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<double>> make_gmres<double>(SolverContext&, const std::string&);

}  // namespace jaxamg
