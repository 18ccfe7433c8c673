// What every Krylov method of the engine shares: an optional preconditioner
// built from the `preconditioner` key of the solver's scope, the AmgX status
// rule for Krylov methods (SUCCESS after max_iters when not monitoring), the
// initial residual, and a transposed solve that reuses the preconditioner's
// setup.
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/vector_backend.h"
#include "backend/slots.h"
#include "solvers/solver.h"

namespace jaxamg {

template <class T>
class KrylovSolver : public Solver<T> {
 public:
  // `preconditioned` false gives the plain methods (CG, BICGSTAB), which, as
  // in AmgX, never read the `preconditioner` key of their scope.
  KrylovSolver(SolverContext& ctx, const std::string& scope, const std::string& name,
               bool preconditioned);

  // Builds the same method for A^T around the preconditioner's own
  // transposed solver, so that an AMG preconditioner keeps its hierarchy.
  std::unique_ptr<Solver<T>> make_transposed(std::shared_ptr<const CsrMatrix<T>> At) const override;
  std::vector<LevelInfo> hierarchy() const override;
  void print_setup_stats() const override {
    if (precond_) precond_->print_setup_stats();
  }
  // The preconditioner, nullptr without one (read by batched/).
  const Solver<T>* preconditioner() const { return precond_.get(); }

 protected:
  using Solver<T>::A_;
  using Solver<T>::r_;
  using Solver<T>::max_iters_;
  using Solver<T>::norm_;
  using Solver<T>::monitor_residual_;
  using Solver<T>::rows;
  using Solver<T>::param_int;
  using Solver<T>::scope_;
  using Solver<T>::name_;

  // Sets the preconditioner up on A_, then lets the method size its
  // workspaces (krylov_setup), so that solve_iteration never allocates.
  void solver_setup(bool reuse_structure) final;
  virtual void krylov_setup() = 0;

  bool is_krylov() const override { return true; }
  // The methods use only matvec/residual_of/global_dot/global_norm.
  bool supports_distribution() const override { return true; }
  // Every method here updates r_ by its recurrence, as AmgX's do.
  bool keeps_residual() const override { return true; }

  // r_ = b - A x; with x_is_zero, x's content is ignored: x = 0 and r_ = b
  // without a product.
  void initial_residual(const T* b, T* x, bool x_is_zero);
  // z = M^{-1} r: one solve of the preconditioner from a zero guess (it runs
  // its own max_iters), or a copy without one.
  void precondition(const T* r, T* z);
  bool has_preconditioner() const { return precond_ != nullptr; }

  // The operator and the preconditioner as the methods written over
  // backends (cg_method.h, bicgstab_method.h) call them: products exchange
  // halo values on a distributed matrix.
  struct HostOperator {
    KrylovSolver* solver;
    void matvec(const T* x, T* y) const { solver->matvec(x, y); }
    void precondition(const T* r, T* z) const { solver->precondition(r, z); }
  };
  HostOperator host_operator() { return HostOperator{this}; }
  // The CPU backend for this solver's rows, with `slots` scalars; its inner
  // products are summed over the processes of a distributed matrix.
  cpu::VectorBackend<T> host_backend(int slots) const {
    return cpu::VectorBackend<T>(rows(), slots, this->distribution());
  }
  // What a recurrence that cannot continue reports: kConverged if r_ is
  // exactly zero (the previous step solved the system, which an unmonitored
  // solve has not noticed), kBreakdown otherwise.
  IterationResult stop_recurrence() const;

  // Reads a positive integer parameter of this scope (gmres_n_restart, ...);
  // throws ConfigError naming the parameter, the value and the fix.
  int positive_param(const std::string& name) const;

  std::unique_ptr<Solver<T>> precond_;

 private:
  bool preconditioned_;
  bool precond_created_ = false;
  // Set by make_transposed: the preconditioner arrives set up on A^T.
  bool precond_ready_ = false;
};

// A denominator of a Krylov recurrence that cannot be divided by (one
// definition for every backend, in backend/slots.h).
using backend::unusable_divisor;

// The unit roundoff of T, for relative tests on small dense quantities.
template <class T>
constexpr double unit_roundoff() {
  return std::is_same<T, float>::value ? 5.960464477539063e-08 : 1.1102230246251565e-16;
}

// Creators registered under AmgX names (krylov/register.cc).
template <class T> std::unique_ptr<Solver<T>> make_cg(SolverContext& ctx, const std::string& scope);
template <class T> std::unique_ptr<Solver<T>> make_pcg(SolverContext& ctx, const std::string& scope);
template <class T> std::unique_ptr<Solver<T>> make_pcgf(SolverContext& ctx, const std::string& scope);
template <class T> std::unique_ptr<Solver<T>> make_bicgstab(SolverContext& ctx, const std::string& scope);
template <class T> std::unique_ptr<Solver<T>> make_pbicgstab(SolverContext& ctx, const std::string& scope);
template <class T> std::unique_ptr<Solver<T>> make_gmres(SolverContext& ctx, const std::string& scope);
template <class T> std::unique_ptr<Solver<T>> make_fgmres(SolverContext& ctx, const std::string& scope);
template <class T> std::unique_ptr<Solver<T>> make_idr(SolverContext& ctx, const std::string& scope);
template <class T> std::unique_ptr<Solver<T>> make_idrmsync(SolverContext& ctx, const std::string& scope);

}  // namespace jaxamg
