// Conjugate gradients: CG (no preconditioner; the `preconditioner` key is not
// read, as in AmgX), PCG, and PCGF, the flexible variant whose Polak-Ribiere
// beta stays correct when the preconditioner changes between applications
// (an AMG cycle with nonsymmetric smoothing, an inner Krylov solve). The three
// differ only in how the search direction is formed, so they share one class.
//
// The direction for the next step is formed at the start of the following
// iteration: the loop tests convergence in between, and a converged solve then
// skips one preconditioner application, as AmgX's early exit does.
#include <cmath>

#include "backend/cpu/blas.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg {

namespace {

enum class CgVariant { kPlain, kPreconditioned, kFlexible };

const char* cg_name(CgVariant v) {
  switch (v) {
    case CgVariant::kPlain: return "CG";
    case CgVariant::kPreconditioned: return "PCG";
    case CgVariant::kFlexible: return "PCGF";
  }
  return "CG";
}

template <class T>
class ConjugateGradient final : public KrylovSolver<T> {
 public:
  ConjugateGradient(SolverContext& ctx, const std::string& scope, CgVariant variant)
      : KrylovSolver<T>(ctx, scope, cg_name(variant), variant != CgVariant::kPlain),
        variant_(variant) {}

 protected:
  using KrylovSolver<T>::A_;
  using KrylovSolver<T>::r_;
  using KrylovSolver<T>::norm_;
  using KrylovSolver<T>::rows;

  void krylov_setup() override {
    const std::size_t n = rows();
    p_.assign(n, T(0));
    q_.assign(n, T(0));
    // Without a preconditioner z is r itself: no copy, no extra vector. PCG
    // keeps z in q's storage, as hypre's PCG does: z = M r is consumed by
    // <r, z> and the new direction before q = A p overwrites it. PCGF's beta
    // needs the new z and the old q together, so it has its own z.
    if (variant_ == CgVariant::kFlexible) {
      z_.assign(n, T(0));
    } else {
      Vector<T>().swap(z_);
    }
  }

  void solve_init(const T* b, T* x, bool x_is_zero) override {
    this->initial_residual(b, x, x_is_zero);
    first_ = true;
    rr_valid_ = false;
    if (!this->has_preconditioner()) {
      rr_ = this->global_dot(rows(), r_.data(), r_.data());
      rr_valid_ = true;
    }
  }

  IterationResult solve_iteration(const T* /*b*/, T* x, bool /*x_is_zero*/) override {
    const std::size_t n = rows();
    T* r = r_.data();
    T* p = p_.data();
    T* q = q_.data();
    const bool precond = this->has_preconditioner();
    T* z = !precond ? r : variant_ == CgVariant::kFlexible ? z_.data() : q;

    // New search direction from the current residual.
    double rz_new;
    if (precond) {
      this->precondition(r, z);
      rz_new = this->global_dot(n, r, z);
    } else {
      rz_new = rr_;
    }
    // <r, M r> = 0 with r != 0 (an indefinite or singular preconditioner)
    // ends the recurrence; r = 0 is the exact solution.
    if (unusable_divisor(rz_new)) return this->stop_recurrence();
    if (first_) {
      cpu::copy(n, z, p);
      first_ = false;
    } else {
      double beta;
      if (variant_ == CgVariant::kFlexible) {
        // Polak-Ribiere: <z_new, r_new - r_old> / <z_old, r_old>, with
        // r_new - r_old = -alpha q (q = A p of the previous step).
        beta = -alpha_ * this->global_dot(n, z, q) / rz_;
      } else {
        beta = rz_new / rz_;
      }
      cpu::axpby<T>(n, T(1), z, static_cast<T>(beta), p);
    }
    rz_ = rz_new;

    this->matvec(p, q);
    const double pq = this->global_dot(n, p, q);
    if (unusable_divisor(pq)) return this->stop_recurrence();
    alpha_ = rz_ / pq;
    cpu::axpy<T>(n, static_cast<T>(alpha_), p, x);
    cpu::axpy<T>(n, static_cast<T>(-alpha_), q, r);
    if (!precond) {
      // Needed for the next beta anyway; it also gives the loop its L2 norm.
      rr_ = this->global_dot(n, r, r);
    }
    return IterationResult::kContinue;
  }

  bool residual_norm_estimate(double* norm) const override {
    if (!rr_valid_ || norm_ != NormType::kL2) return false;
    *norm = std::sqrt(rr_);
    return true;
  }

 private:
  CgVariant variant_;
  Vector<T> p_, q_, z_;
  bool first_ = true;
  bool rr_valid_ = false;
  double rr_ = 0;     // <r, r> (plain CG only)
  double rz_ = 0;     // <r, z> of the current direction
  double alpha_ = 0;  // step of the previous iteration (PCGF's beta)
};

}  // namespace

template <class T>
std::unique_ptr<Solver<T>> make_cg(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<ConjugateGradient<T>>(ctx, scope, CgVariant::kPlain);
}
template <class T>
std::unique_ptr<Solver<T>> make_pcg(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<ConjugateGradient<T>>(ctx, scope, CgVariant::kPreconditioned);
}
template <class T>
std::unique_ptr<Solver<T>> make_pcgf(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<ConjugateGradient<T>>(ctx, scope, CgVariant::kFlexible);
}

#define JAXAMG_INSTANTIATE(T)                                                        \
  template std::unique_ptr<Solver<T>> make_cg<T>(SolverContext&, const std::string&); \
  template std::unique_ptr<Solver<T>> make_pcg<T>(SolverContext&, const std::string&); \
  template std::unique_ptr<Solver<T>> make_pcgf<T>(SolverContext&, const std::string&);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg
