// Restarted GMRES(m), right preconditioned (AmgX's GMRES): the basis spans
// A M^{-1}; the correction M^{-1} V y is formed once per restart, which costs
// one extra preconditioner application per cycle but stores only V. A fixed
// (linear) preconditioner is required; FGMRES is the method for variable ones.
//
// One iteration is one Arnoldi step. m is gmres_n_restart (capped at
// max_iters); the basis vectors are allocated as the steps reach them
// (lazy_basis.h), so a solve that converges in k < m steps stores k + 1 of
// them, and nothing is allocated at setup. In the L2 norm the loop
// reads the residual norm from the rotated right-hand side; for L1/LMAX the
// residual vector is carried by its own recurrence. Each restart recomputes
// the true residual b - A x.
#include <algorithm>
#include <cmath>

#include "backend/cpu/blas.h"
#include "solvers/krylov/arnoldi.h"
#include "solvers/krylov/gmres_cycle.h"
#include "solvers/krylov/lazy_basis.h"

namespace jaxamg {

namespace {

template <class T>
class Gmres final : public krylov::GmresCycle<T> {
 public:
  Gmres(SolverContext& ctx, const std::string& scope)
      : krylov::GmresCycle<T>(ctx, scope, "GMRES") {}

 protected:
  using Base = krylov::GmresCycle<T>;
  using Base::g_;
  using Base::j_;
  using Base::restart_;
  using Base::rot_;
  using Base::rows;
  using Base::y_;
  using KrylovSolver<T>::max_iters_;
  using KrylovSolver<T>::norm_;
  using KrylovSolver<T>::monitor_residual_;

  void krylov_setup() override {
    capacity_ = 0;
    reserve(std::min(restart_, std::max(1, max_iters_)));
  }

  void solve_init(const T* b, T* x, bool x_is_zero) override {
    this->initial_residual(b, x, x_is_zero);
    // max_iters may have grown since setup. The basis vectors themselves
    // are allocated on first use, once per solver.
    cycle_ = std::min(restart_, std::max(1, max_iters_));
    reserve(cycle_);
    const std::size_t n = rows();
    if (this->has_preconditioner() && z_.size() != n) z_.assign(n, T(0));
    this->begin_solve(monitor_residual_ && norm_ != NormType::kL2);
  }

  IterationResult solve_iteration(const T* b, T* x, bool /*x_is_zero*/) override {
    const std::size_t n = rows();
    if (j_ == 0) {
      T* v0 = basis(0);
      ptrs_[0] = v0;
      const IterationResult start = this->start_cycle(b, x, v0);
      if (start != IterationResult::kContinue) return start;
    }
    const int j = j_;
    T* w = basis(j + 1);
    ptrs_[j + 1] = w;
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
    bool invariant = false;
    if (!this->rotate_column(h, 0, j, hn, col2, &invariant)) return IterationResult::kBreakdown;
    h[j + 1] = 0;
    if (!invariant) cpu::scale<T>(n, static_cast<T>(1.0 / hn), w);
    this->advance_residual(j, w, invariant);
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
    return this->estimate_from_rotations(norm, true);
  }

 public:
  std::size_t stored_vectors() const override { return V_.allocated() + (z_.empty() ? 0 : 1); }

 private:
  std::size_t ld() const { return static_cast<std::size_t>(capacity_) + 1; }
  T* basis(int i) { return V_[static_cast<std::size_t>(i)]; }

  // Room for m Arnoldi steps: the small dense arrays now, the m + 1 basis
  // vectors as they are first used. ptrs_[i] is basis(i) once step i has
  // run.
  void reserve(int m) {
    if (m <= capacity_ && V_.slots() == static_cast<std::size_t>(capacity_) + 1 &&
        rows_ == static_cast<std::size_t>(rows())) {
      return;
    }
    capacity_ = m;
    rows_ = rows();
    V_.shape(static_cast<std::size_t>(m) + 1, rows_);
    H_.assign(ld() * m, 0.0);
    this->resize_least_squares(m);
    ptrs_.assign(m + 1, nullptr);
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

  int cycle_ = 1;
  int capacity_ = 0;
  std::size_t rows_ = 0;
  krylov::LazyBasis<T> V_;  // capacity_ + 1 basis vectors
  Vector<T> z_;             // M^{-1} v_j (with a preconditioner only)
  std::vector<const T*> ptrs_;
  std::vector<double> H_;
};

}  // namespace

template <class T>
std::unique_ptr<Solver<T>> make_gmres(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<Gmres<T>>(ctx, scope);
}

template std::unique_ptr<Solver<float>> make_gmres<float>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<double>> make_gmres<double>(SolverContext&, const std::string&);

}  // namespace jaxamg
