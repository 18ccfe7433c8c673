// The host solvers IDR and IDRMSYNC: the one IDR(s) method (idr_method.h)
// on the CPU backend, inside the generic loop of Solver<T> (the shape:
// idr_solver.h).
#include <algorithm>
#include <cstdint>
#include <optional>

#include "solvers/krylov/idr_method.h"
#include "solvers/krylov/idr_solver.h"

namespace jaxamg {

namespace {

template <class T>
class Idr final : public krylov::IdrSolver<T> {
 public:
  using krylov::IdrSolver<T>::IdrSolver;

 protected:
  using KrylovSolver<T>::r_;
  using Method = IdrMethod<cpu::VectorBackend<T>>;

  // A method of the same shape is kept with its shadow space: P depends
  // only on the rows and s, so a resetup need not rebuild it.
  void krylov_setup() override {
    const Distribution<T>* dist = this->distribution();
    const int64_t global_n = dist ? dist->global_rows() : this->rows();
    const IdrShape sh = this->shape(global_n, dist ? dist->row_start() : 0);
    if (method_ && backend_->size() == static_cast<std::size_t>(this->rows()) && dist_ == dist &&
        same(method_->shape(), sh)) {
      return;
    }
    method_.reset();
    dist_ = dist;
    backend_.emplace(this->host_backend(Method::layout(sh).count()));
    method_.emplace(*backend_, sh);
  }

  void solve_init(const T* b, T* x, bool x_is_zero) override {
    this->initial_residual(b, x, x_is_zero);
    backend_->slots()[IdrSlots::kInit] = 1.0;
    method_->init(r_.data());
  }

  IterationResult solve_iteration(const T* b, T* x, bool /*x_is_zero*/) override {
    Operator op{this, b};
    method_->iteration(op, x, r_.data());
    return Method::outcome(backend_->slots());
  }

 private:
  struct Operator {
    Idr* solver;
    const T* b;
    void matvec(const T* x, T* y) const { solver->matvec(x, y); }
    void precondition(const T* r, T* z) const { solver->precondition(r, z); }
    void residual(const T* x, T* r) const { solver->residual_of(x, b, r); }
  };

  static bool same(const IdrShape& a, const IdrShape& b) {
    return a.s == b.s && a.synchronised == b.synchronised &&
           a.preconditioned == b.preconditioned && a.first_row == b.first_row;
  }

  const Distribution<T>* dist_ = nullptr;  // the kept backend's reducer
  std::optional<cpu::VectorBackend<T>> backend_;
  std::optional<Method> method_;
};

}  // namespace

template <class T>
std::unique_ptr<Solver<T>> make_idr(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<Idr<T>>(ctx, scope, false);
}
template <class T>
std::unique_ptr<Solver<T>> make_idrmsync(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<Idr<T>>(ctx, scope, true);
}

template std::unique_ptr<Solver<float>> make_idr<float>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<double>> make_idr<double>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<float>> make_idrmsync<float>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<double>> make_idrmsync<double>(SolverContext&, const std::string&);

}  // namespace jaxamg
