// The base of every solver, smoother and preconditioner, as in AmgX: a
// solver is built from a config scope, set up on a matrix, and solved by a
// generic loop (monitoring, convergence test, residual history, statistics)
// around the subclass's `solve_iteration`. Because smoothers, Krylov methods,
// AMG and dense LU are all Solvers, they nest arbitrarily.
#pragma once
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/csr_matrix.h"
#include "core/near_nullspace.h"
#include "core/types.h"
#include "solvers/solve_tracker.h"
#include "solvers/stopping_rule.h"

namespace jaxamg {

// Shared by every solver of one tree: the configuration and the text sink for
// AmgX-layout statistics (filled only when a print_* flag asks for it).
struct SolverContext {
  Config config;
  std::ostringstream log;
  // Depth in the tree of the solver being created (set by create_child).
  int nesting = 0;
  // Near-null-space vectors of the matrix given to setup (empty if none),
  // read by smoothed aggregation on the finest level; `near_nullspace_used`
  // records that some AMG of the tree took them.
  std::shared_ptr<const NearNullspace> near_nullspace;
  bool near_nullspace_used = false;

  // The statistics text written so far, emptying the log.
  std::string take_log() {
    std::string s = log.str();
    log.str("");
    log.clear();
    return s;
  }
};

// Size of one level of a multigrid hierarchy (for statistics and reports).
struct LevelInfo {
  Index rows = 0;
  Index nnz = 0;
  // Entries of the prolongation to the next level (0 on the coarsest). The
  // single-process hierarchies record it; a distributed one leaves it 0,
  // each rank holding only its rows of P.
  Index p_nnz = 0;
};

// What print_solve_stats and obtain_timings print after a solve
// (Solver::write_solve_stats).
struct SolveStatsRecord {
  const std::vector<double>* history = nullptr;  // as Solver::residual_history()
  int iterations = 0;
  double initial = -1, final = -1;  // monitored norms
  double memory_gb = 0;             // the "Mem Usage" column
  double setup_seconds = 0, solve_seconds = 0;
};

template <class T>
class Solver {
 public:
  Solver(SolverContext& ctx, const std::string& scope, const std::string& name);
  virtual ~Solver() = default;
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  // Builds everything that depends on A. With reuse_structure the matrix has
  // the sparsity of the previous setup and only its values changed: keep the
  // symbolic work (coarsening, interpolation pattern) and recompute numbers.
  void setup(std::shared_ptr<const CsrMatrix<T>> A, bool reuse_structure = false);

  // Solves A x = b with the configured stopping rule. x holds the initial
  // guess unless x_is_zero. Non-convergence is reported, not thrown.
  Status solve(const T* b, T* x, bool x_is_zero);

  // Exactly `iterations` iterations without monitoring: the smoother and
  // preconditioner entry point.
  void apply(const T* b, T* x, bool x_is_zero, int iterations);

  // A solver for A^T (At = transpose(A)) that reuses this solver's setup where
  // the method allows (AMG keeps its transfer operators). The default builds
  // a fresh solver from the same scope.
  virtual std::unique_ptr<Solver<T>> make_transposed(std::shared_ptr<const CsrMatrix<T>> At) const;

  // The AMG hierarchy this solver uses (itself or through its
  // preconditioner), finest level first; empty if none.
  virtual std::vector<LevelInfo> hierarchy() const { return {}; }
  // Prints again what this solver's setup printed (AMG's grid table, under
  // print_grid_stats): a solve on a cached setup then writes the statistics
  // a fresh setup would, as JAX-AMG's files have them on every call.
  virtual void print_setup_stats() const {}

  const std::string& name() const { return name_; }
  const std::string& scope() const { return scope_; }
  SolverContext& context() const { return ctx_; }
  const CsrMatrix<T>& matrix() const { return *A_; }
  std::shared_ptr<const CsrMatrix<T>> matrix_ptr() const { return A_; }
  int iterations() const { return iterations_; }
  Status status() const { return status_; }
  // The last monitored residual norm, or -1 if the solve was not monitored.
  double final_residual() const { return final_residual_; }
  // Entry 0 is the initial residual norm, then one entry per iteration
  // (empty unless store_res_history and monitor_residual).
  const std::vector<double>& residual_history() const { return history_; }
  double setup_seconds() const { return setup_seconds_; }
  double solve_seconds() const { return solve_seconds_; }
  int max_iters() const { return max_iters_; }
  void set_max_iters(int n) { max_iters_ = n; }
  void set_tolerance(double t) { tolerance_ = t; }
  bool monitors_residual() const { return monitor_residual_; }
  void set_monitor_residual(bool on) { monitor_residual_ = on; }
  void set_store_history(bool on) { store_res_history_ = on; }
  NormType norm_type() const { return norm_; }
  bool stores_history() const { return store_res_history_; }
  bool obtains_timings() const { return obtain_timings_; }
  // Writes the statistics of a finished solve into the context's log, as
  // this solver's print_solve_stats and obtain_timings (in its scope, with
  // verbosity_level >= 3) ask: AmgX's iteration table and the timings. The
  // solve loops of every backend (solve(), the device solver) print through
  // it. Throws ConfigError when print_solve_stats is set without
  // monitor_residual.
  void write_solve_stats(const SolveStatsRecord& r) const;

  // The stopping test of solve() as a value: the configured criterion,
  // tolerances and this precision's floor.
  StoppingRule stopping_rule() const;
  // What this solver's loop obeys: every loop that runs its iterations (this
  // solve(), the vmap lanes, the device solve) drives a SolveTracker with it.
  LoopSettings loop_settings() const;

 protected:
  // Gives `to` this solver's loop settings (iteration limit, stopping rule,
  // norm, monitoring, history, timings): a transposed solver built by
  // make_transposed runs its loop as this one does, setters included.
  void copy_loop_settings(Solver<T>& to) const;
  virtual void solver_setup(bool reuse_structure) = 0;
  virtual void solve_init(const T* /*b*/, T* /*x*/, bool /*x_is_zero*/) {}
  virtual IterationResult solve_iteration(const T* b, T* x, bool x_is_zero) = 0;
  virtual void solve_finalize(const T* /*b*/, T* /*x*/) {}
  // True if solve_iteration keeps r_ equal to its residual (Krylov
  // recurrences); otherwise the loop recomputes r_ = b - A x when monitoring.
  virtual bool keeps_residual() const { return false; }
  // Sizes r_ for a solve or apply (it is not allocated at setup).
  void size_residual();
  // Methods that know their residual norm without the vector (GMRES's
  // Givens estimate in L2) return true and set *norm; the loop then uses it
  // instead of norm(r_).
  virtual bool residual_norm_estimate(double* /*norm*/) const { return false; }
  // AmgX: with monitoring off, Krylov methods report SUCCESS after max_iters,
  // AMG and smoothers NOT_CONVERGED.
  virtual bool is_krylov() const { return false; }
  // CG's iterates minimise the error in the A-norm (A SPD): its residual
  // norm is no measure of divergence.
  virtual bool error_falls_in_energy_norm() const { return false; }

  // Creates the child solver named by `key` (preconditioner, smoother,
  // coarse_solver) in this solver's scope; nullptr for NOSOLVER.
  std::unique_ptr<Solver<T>> create_child(const std::string& key) const;

  // Config lookups in this solver's scope.
  int param_int(const std::string& name) const { return ctx_.config.get_int(name, scope_); }
  double param_double(const std::string& name) const { return ctx_.config.get_double(name, scope_); }
  std::string param_string(const std::string& name) const { return ctx_.config.get_string(name, scope_); }

  Index rows() const { return A_ ? A_->nrows : 0; }

  // The kernels through which a solver touches the operator and reduces
  // vectors. Serial by default; when the matrix is distributed
  // (A_->dist set) they exchange halo values and reduce across processes,
  // so every algorithm written with them runs distributed unchanged.
  const Distribution<T>* distribution() const { return A_ ? A_->dist.get() : nullptr; }
  void matvec(const T* x, T* y) const;                  // y = A x
  void residual_of(const T* x, const T* b, T* r) const;  // r = b - A x
  double global_dot(std::size_t n, const T* x, const T* y) const;
  double global_norm(std::size_t n, const T* x, NormType type) const;
  // Solvers that route every operator product and reduction through the
  // kernels above (or otherwise handle distributed matrices) return true;
  // setup on a distributed matrix rejects the others with NotSupported.
  virtual bool supports_distribution() const { return false; }

  SolverContext& ctx_;
  std::string scope_;
  std::string name_;
  std::shared_ptr<const CsrMatrix<T>> A_;
  Vector<T> r_;  // residual workspace (size n from the first solve or apply on)

  int max_iters_;
  double tolerance_;
  double alt_rel_tolerance_;
  double rel_div_tolerance_;
  ConvergenceType convergence_;
  NormType norm_;
  bool monitor_residual_;
  bool store_res_history_;
  bool obtain_timings_;

 private:
  void print_solve_stats() const;

  int depth_ = 0;  // 0 for a solver created outside create_child
  int iterations_ = 0;
  Status status_ = Status::kSuccess;
  double initial_residual_ = -1;
  double final_residual_ = -1;
  std::vector<double> history_;
  double setup_seconds_ = 0;
  double solve_seconds_ = 0;
};

// Parses AmgX's enum spellings (throws ConfigError listing the valid ones).
ConvergenceType parse_convergence(const std::string& s);
NormType parse_norm(const std::string& s);

}  // namespace jaxamg
