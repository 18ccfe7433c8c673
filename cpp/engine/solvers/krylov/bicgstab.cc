// BiCGStab for nonsymmetric systems: BICGSTAB (no preconditioner; the
// `preconditioner` key is not read, as in AmgX) and PBICGSTAB, right
// preconditioned so that r stays the true residual's recurrence and the
// convergence test sees b - A x, not a preconditioned residual. The shadow
// vector is the initial residual.
#include <cmath>

#include "backend/cpu/blas.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg {

namespace {

template <class T>
class BiCGStab final : public KrylovSolver<T> {
 public:
  BiCGStab(SolverContext& ctx, const std::string& scope, bool preconditioned)
      : KrylovSolver<T>(ctx, scope, preconditioned ? "PBICGSTAB" : "BICGSTAB", preconditioned) {}

 protected:
  using KrylovSolver<T>::A_;
  using KrylovSolver<T>::r_;
  using KrylovSolver<T>::rows;

  void krylov_setup() override {
    const std::size_t n = rows();
    shadow_.assign(n, T(0));
    p_.assign(n, T(0));
    v_.assign(n, T(0));
    t_.assign(n, T(0));
    if (this->has_preconditioner()) {
      phat_.assign(n, T(0));
      shat_.assign(n, T(0));
    } else {
      phat_.clear();
      shat_.clear();
    }
  }

  void solve_init(const T* b, T* x, bool x_is_zero) override {
    this->initial_residual(b, x, x_is_zero);
    cpu::copy(rows(), r_.data(), shadow_.data());
    first_ = true;
  }

  IterationResult solve_iteration(const T* /*b*/, T* x, bool /*x_is_zero*/) override {
    const std::size_t n = rows();
    T* r = r_.data();
    T* p = p_.data();
    T* v = v_.data();
    T* t = t_.data();
    const T* rs = shadow_.data();
    const bool precond = this->has_preconditioner();
    // Without a preconditioner the preconditioned vectors are p and s (= r).
    T* phat = precond ? phat_.data() : p;
    T* shat = precond ? shat_.data() : r;

    const double rho_new = this->global_dot(n, rs, r);
    // <r0, r> = 0: the shadow space is exhausted, unless r = 0.
    if (unusable_divisor(rho_new)) return this->stop_recurrence();
    if (first_) {
      cpu::copy(n, r, p);
      first_ = false;
    } else {
      // omega_ was checked to be usable when it was computed.
      const double beta = (rho_new / rho_) * (alpha_ / omega_);
      // p = r + beta (p - omega v), in one pass.
      cpu::axpbypcz<T>(n, T(1), r, static_cast<T>(-beta * omega_), v, static_cast<T>(beta), p);
    }
    rho_ = rho_new;

    if (precond) this->precondition(p, phat);
    this->matvec(phat, v);
    const double rv = this->global_dot(n, rs, v);
    if (unusable_divisor(rv)) return this->stop_recurrence();
    alpha_ = rho_ / rv;
    cpu::axpy<T>(n, static_cast<T>(-alpha_), v, r);  // r now holds s = r - alpha v

    if (precond) this->precondition(r, shat);
    this->matvec(shat, t);
    const double tt = this->global_dot(n, t, t);
    if (unusable_divisor(tt)) {
      // t = A M s = 0: the half step is kept; with s = 0 it is the solution.
      cpu::axpy<T>(n, static_cast<T>(alpha_), phat, x);
      return this->stop_recurrence();
    }
    omega_ = this->global_dot(n, t, r) / tt;
    if (unusable_divisor(omega_)) {
      // The minimal-residual step is zero: keep the half step (x, r = s
      // consistent) and stop, since the next beta divides by omega.
      cpu::axpy<T>(n, static_cast<T>(alpha_), phat, x);
      return this->stop_recurrence();
    }
    cpu::axpbypcz<T>(n, static_cast<T>(alpha_), phat, static_cast<T>(omega_), shat, T(1), x);
    cpu::axpy<T>(n, static_cast<T>(-omega_), t, r);
    return IterationResult::kContinue;
  }

 private:
  Vector<T> shadow_, p_, v_, t_, phat_, shat_;
  bool first_ = true;
  double rho_ = 0, alpha_ = 0, omega_ = 0;
};

}  // namespace

template <class T>
std::unique_ptr<Solver<T>> make_bicgstab(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<BiCGStab<T>>(ctx, scope, false);
}
template <class T>
std::unique_ptr<Solver<T>> make_pbicgstab(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<BiCGStab<T>>(ctx, scope, true);
}

template std::unique_ptr<Solver<float>> make_bicgstab<float>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<double>> make_bicgstab<double>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<float>> make_pbicgstab<float>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<double>> make_pbicgstab<double>(SolverContext&, const std::string&);

}  // namespace jaxamg
