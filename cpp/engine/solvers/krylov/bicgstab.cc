// The host solvers BICGSTAB and PBICGSTAB: the one BiCGStab method
// (bicgstab_method.h) on the CPU backend, inside the generic loop of
// Solver<T>. BICGSTAB does not read the `preconditioner` key of its scope,
// as in AmgX.
#include <optional>

#include "solvers/krylov/bicgstab_method.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg {

namespace {

template <class T>
class BiCGStab final : public KrylovSolver<T> {
 public:
  BiCGStab(SolverContext& ctx, const std::string& scope, bool preconditioned)
      : KrylovSolver<T>(ctx, scope, preconditioned ? "PBICGSTAB" : "BICGSTAB", preconditioned) {}

 protected:
  using KrylovSolver<T>::r_;
  using Method = BicgstabMethod<cpu::VectorBackend<T>>;

  void krylov_setup() override {
    method_.reset();
    backend_.emplace(this->host_backend(BicgstabSlots::kCount));
    method_.emplace(*backend_, this->has_preconditioner());
  }

  void solve_init(const T* b, T* x, bool x_is_zero) override {
    this->initial_residual(b, x, x_is_zero);
    backend_->slots()[BicgstabSlots::kInit] = 1.0;
    method_->init(r_.data());
  }

  IterationResult solve_iteration(const T* /*b*/, T* x, bool /*x_is_zero*/) override {
    auto op = this->host_operator();
    method_->iteration(op, x, r_.data());
    return Method::outcome(backend_->slots());
  }

 private:
  std::optional<cpu::VectorBackend<T>> backend_;
  std::optional<Method> method_;
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
