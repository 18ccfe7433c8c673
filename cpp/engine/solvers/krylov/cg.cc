// The host solvers CG, PCG and PCGF: the one conjugate-gradient method
// (cg_method.h) on the CPU backend, inside the generic loop of Solver<T>.
// CG does not read the `preconditioner` key of its scope, as in AmgX.
#include <optional>

#include "solvers/krylov/cg_method.h"
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
  using KrylovSolver<T>::r_;
  using KrylovSolver<T>::norm_;
  using Method = CgMethod<cpu::VectorBackend<T>>;

  void krylov_setup() override {
    method_.reset();
    backend_.emplace(this->host_backend(CgSlots::kCount));
    method_.emplace(*backend_, this->has_preconditioner(), variant_ == CgVariant::kFlexible);
  }

  void solve_init(const T* b, T* x, bool x_is_zero) override {
    this->initial_residual(b, x, x_is_zero);
    backend_->slots()[CgSlots::kInit] = 1.0;
    method_->init(r_.data());
  }

  IterationResult solve_iteration(const T* /*b*/, T* x, bool /*x_is_zero*/) override {
    auto op = this->host_operator();
    method_->iteration(op, x, r_.data());
    return Method::outcome(backend_->slots());
  }

  bool residual_norm_estimate(double* norm) const override {
    return norm_ == NormType::kL2 && method_->l2_residual_norm(backend_->slots(), norm);
  }
  bool error_falls_in_energy_norm() const override { return true; }

 private:
  CgVariant variant_;
  std::optional<cpu::VectorBackend<T>> backend_;
  std::optional<Method> method_;
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
