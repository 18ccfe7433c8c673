// The host solvers GMRES and FGMRES (gmres.cc, fgmres.cc): the one restarted
// (F)GMRES method (gmres_method.h) on the CPU backend, inside the generic
// loop of Solver<T>. m is gmres_n_restart capped at max_iters. The basis
// vectors are allocated as the Arnoldi steps reach them: nothing at setup,
// and a solve that converges in k < m steps stores k + 1 of them; later
// solves of the same shape reuse them. In the L2 norm the loop reads the
// residual norm from the rotated right-hand side; otherwise the residual
// vector is carried by its own recurrence.
#pragma once
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "solvers/krylov/gmres_method.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg::krylov {

template <class T>
class GmresCycle : public KrylovSolver<T> {
 public:
  GmresCycle(SolverContext& ctx, const std::string& scope, const std::string& name, bool flexible)
      : KrylovSolver<T>(ctx, scope, name, true), flexible_(flexible) {
    restart_ = this->positive_param("gmres_n_restart");
  }

  // The shape of a solve with the current max_iters.
  GmresShape shape() const {
    GmresShape sh;
    sh.cycle = std::min(restart_, std::max(1, this->max_iters_));
    sh.window = window_ > 0 ? std::min(window_, sh.cycle) : sh.cycle;
    sh.flexible = flexible_;
    sh.preconditioned = this->has_preconditioner();
    return sh;
  }
  // Whether the loop measures r, which the method then carries.
  bool tracks_residual() const {
    return this->monitor_residual_ && (this->norm_ != NormType::kL2 || shape().truncated());
  }

  // The n-vectors the method holds besides the residual (basis vectors and
  // work space): none after setup, they are allocated as a solve needs them.
  std::size_t stored_vectors() const { return method_ ? method_->stored_vectors() : 0; }

 protected:
  using Method = GmresMethod<cpu::VectorBackend<T>>;

  void krylov_setup() override { configure(); }

  void solve_init(const T* b, T* x, bool x_is_zero) override {
    this->initial_residual(b, x, x_is_zero);
    configure();  // max_iters may have changed since setup
    method_->set_tracking(tracks_residual());
    backend_->slots()[GmresSlots::kInit] = 1.0;
    method_->init(this->r_.data());
  }

  IterationResult solve_iteration(const T* b, T* x, bool /*x_is_zero*/) override {
    Operator op{this, b};
    method_->iteration(op, x, this->r_.data());
    return Method::outcome(backend_->slots());
  }

  void solve_finalize(const T* b, T* x) override {
    Operator op{this, b};
    method_->finalize(op, x, backend::kAllLanes);
  }

  bool residual_norm_estimate(double* norm) const override {
    if (this->norm_ != NormType::kL2 || !method_) return false;
    return method_->l2_residual_norm(backend_->slots(), norm);
  }

  int restart_ = 20;
  int window_ = 0;  // FGMRES's gmres_krylov_dim (0: the cycle)

 private:
  struct Operator {
    GmresCycle* solver;
    const T* b;
    void matvec(const T* x, T* y) const { solver->matvec(x, y); }
    void precondition(const T* r, T* z) const { solver->precondition(r, z); }
    void residual(const T* x, T* r) const { solver->residual_of(x, b, r); }
  };

  // The method for the current shape; one of the same shape and size is
  // kept with its vectors.
  void configure() {
    const GmresShape sh = shape();
    const std::size_t n = this->rows();
    if (method_ && rows_ == n && same(method_->shape(), sh)) return;
    method_.reset();
    rows_ = n;
    backend_.emplace(this->host_backend(Method::layout(sh).count()));
    method_.emplace(*backend_, sh, tracks_residual());
  }
  static bool same(const GmresShape& a, const GmresShape& b) {
    return a.cycle == b.cycle && a.window == b.window && a.flexible == b.flexible &&
           a.preconditioned == b.preconditioned;
  }

  bool flexible_;
  std::size_t rows_ = 0;
  std::optional<cpu::VectorBackend<T>> backend_;
  std::optional<Method> method_;
};

}  // namespace jaxamg::krylov
