#include "solvers/krylov/krylov_solver.h"

#include "backend/cpu/blas.h"
#include "core/error.h"
#include "solvers/factory.h"

namespace jaxamg {

template <class T>
KrylovSolver<T>::KrylovSolver(SolverContext& ctx, const std::string& scope,
                              const std::string& name, bool preconditioned)
    : Solver<T>(ctx, scope, name), preconditioned_(preconditioned) {}

template <class T>
int KrylovSolver<T>::positive_param(const std::string& name) const {
  const int v = param_int(name);
  if (v <= 0) {
    throw ConfigError(name + ": " + name_ + " (scope '" + scope_ + "') needs a positive value, got " +
                      std::to_string(v) + "; set " + name + " to 1 or more");
  }
  return v;
}

template <class T>
void KrylovSolver<T>::solver_setup(bool reuse_structure) {
  if (preconditioned_ && !precond_created_) {
    // Created on first setup rather than in the constructor, so that a
    // transposed copy can receive a ready preconditioner instead.
    precond_ = this->create_child("preconditioner");
    precond_created_ = true;
  }
  if (precond_) {
    if (precond_ready_) {
      precond_ready_ = false;
    } else {
      precond_->setup(A_, reuse_structure);
    }
  }
  krylov_setup();
}

template <class T>
void KrylovSolver<T>::initial_residual(const T* b, T* x, bool x_is_zero) {
  const std::size_t n = rows();
  if (x_is_zero) {
    cpu::fill<T>(n, T(0), x);
    cpu::copy(n, b, r_.data());
  } else {
    this->residual_of(x, b, r_.data());
  }
}

template <class T>
void KrylovSolver<T>::precondition(const T* r, T* z) {
  if (precond_) {
    precond_->solve(r, z, /*x_is_zero=*/true);
  } else {
    cpu::copy(rows(), r, z);
  }
}

template <class T>
IterationResult KrylovSolver<T>::stop_recurrence() const {
  return this->global_norm(rows(), r_.data(), NormType::kL2) == 0.0 ? IterationResult::kConverged
                                                          : IterationResult::kBreakdown;
}

template <class T>
std::vector<LevelInfo> KrylovSolver<T>::hierarchy() const {
  return precond_ ? precond_->hierarchy() : std::vector<LevelInfo>{};
}

template <class T>
std::unique_ptr<Solver<T>> KrylovSolver<T>::make_transposed(
    std::shared_ptr<const CsrMatrix<T>> At) const {
  std::unique_ptr<Solver<T>> s = create_solver<T>(this->ctx_, SolverRef{name_, scope_});
  auto* k = dynamic_cast<KrylovSolver<T>*>(s.get());
  if (k == nullptr) return Solver<T>::make_transposed(std::move(At));
  // The settings may have been changed after construction (set_max_iters,
  // or cleared in the config for a default-scope solver): copy them.
  this->copy_loop_settings(*k);
  if (preconditioned_) {
    k->precond_created_ = true;
    if (precond_) {
      k->precond_ = precond_->make_transposed(At);
      k->precond_ready_ = true;
    }
  }
  k->setup(std::move(At));
  return s;
}

template class KrylovSolver<float>;
template class KrylovSolver<double>;

}  // namespace jaxamg
