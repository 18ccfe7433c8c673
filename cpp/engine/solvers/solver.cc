#include "solvers/solver.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "backend/cpu/blas.h"
#include "core/error.h"
#include "solvers/factory.h"

namespace jaxamg {

namespace {

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// Peak resident memory of the process in GB: the "Mem Usage" column of
// AmgX's tables (AmgX prints its device pool high-water mark).
double peak_memory_gb() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / (1024.0 * 1024.0);
}

}  // namespace

ConvergenceType parse_convergence(const std::string& s) {
  if (s == "ABSOLUTE") return ConvergenceType::kAbsolute;
  if (s == "RELATIVE_INI" || s == "RELATIVE_INI_CORE") return ConvergenceType::kRelativeIni;
  if (s == "RELATIVE_MAX" || s == "RELATIVE_MAX_CORE") return ConvergenceType::kRelativeMax;
  if (s == "COMBINED_REL_INI_ABS") return ConvergenceType::kCombinedRelIniAbs;
  throw ConfigError("convergence: unknown value '" + s +
                    "'; valid: ABSOLUTE, RELATIVE_INI, RELATIVE_INI_CORE, RELATIVE_MAX, "
                    "RELATIVE_MAX_CORE, COMBINED_REL_INI_ABS");
}

NormType parse_norm(const std::string& s) {
  if (s == "L1") return NormType::kL1;
  if (s == "L2") return NormType::kL2;
  if (s == "LMAX") return NormType::kLMax;
  throw ConfigError("norm: unknown value '" + s + "'; valid: L1, L2, LMAX");
}

template <class T>
Solver<T>::Solver(SolverContext& ctx, const std::string& scope, const std::string& name)
    : ctx_(ctx), scope_(scope), name_(name), depth_(ctx.nesting) {
  Config& cfg = ctx_.config;
  max_iters_ = cfg.get_int("max_iters", scope_);
  tolerance_ = cfg.get_double("tolerance", scope_);
  alt_rel_tolerance_ = cfg.get_double("alt_rel_tolerance", scope_);
  rel_div_tolerance_ = cfg.get_double("rel_div_tolerance", scope_);
  convergence_ = parse_convergence(cfg.get_string("convergence", scope_));
  norm_ = parse_norm(cfg.get_string("norm", scope_));
  monitor_residual_ = cfg.get_int("monitor_residual", scope_) != 0;
  store_res_history_ = cfg.get_int("store_res_history", scope_) != 0;
  obtain_timings_ = cfg.get_int("obtain_timings", scope_) != 0;
  if (scope_ == "default") {
    // AmgX: a default-scope solver keeps these flags, then clears them (and
    // the print flags) so that inner default-scope solvers stay silent.
    for (const char* flag : {"monitor_residual", "store_res_history", "obtain_timings",
                             "print_solve_stats", "print_grid_stats"}) {
      cfg.set_int(flag, "default", 0);
    }
  }
}

template <class T>
std::unique_ptr<Solver<T>> Solver<T>::create_child(const std::string& key) const {
  const SolverRef ref = ctx_.config.get_solver(key, scope_);
  if (ref.name == "NOSOLVER") return nullptr;
  if (ref.scope == "default") {
    for (const char* outer : {"AMG", "FGMRES", "PCGF", "PBICGSTAB", "PCG", "GMRES"}) {
      if (ref.name == outer) {
        throw ConfigError(ref.name + " cannot be used as an inner solver (" + key + " of " +
                          name_ + ") with the default scope; give it its own scope, e.g. " +
                          "\"" + key + "\": {\"scope\": \"inner\", \"solver\": \"" + ref.name +
                          "\"}");
      }
    }
  }
  // Scopes that name each other (CHEBYSHEV whose preconditioner is CHEBYSHEV
  // in the same scope, or a patch closing a loop) would nest solvers until the
  // stack overflows.
  constexpr int kMaxDepth = 32;
  if (depth_ >= kMaxDepth) {
    throw ConfigError("the solver tree is deeper than " + std::to_string(kMaxDepth) +
                      " levels at " + ref.name + " (scope '" + ref.scope + "'), the " + key +
                      " of " + name_ + " (scope '" + scope_ + "'): the config's scopes form a "
                      "loop; give each nested solver a scope of its own");
  }
  struct Restore {
    int& nesting;
    int saved;
    ~Restore() { nesting = saved; }
  } restore{ctx_.nesting, ctx_.nesting};
  ctx_.nesting = depth_ + 1;
  return create_solver<T>(ctx_, ref);
}

template <class T>
void Solver<T>::setup(std::shared_ptr<const CsrMatrix<T>> A, bool reuse_structure) {
  if (!A) throw InvalidInput(name_ + ": setup needs a matrix");
  // A distributed matrix has ghost columns beyond its owned square block.
  if (A->dist ? A->ncols < A->nrows : A->nrows != A->ncols) {
    throw InvalidInput("A: the matrix must be square, got " + std::to_string(A->nrows) + " x " +
                       std::to_string(A->ncols));
  }
  if (A->dist && !supports_distribution()) {
    throw NotSupported(name_ + " (scope '" + scope_ + "') does not run on a matrix distributed "
                       "over several processes; use a Krylov method (PCG, FGMRES, IDR, ...) with "
                       "AMG or a smoother (JACOBI_L1, GS, MULTICOLOR_GS, MULTICOLOR_DILU, ...)");
  }
  const double t0 = now_seconds();
  if (reuse_structure && A_ && (A_->nrows != A->nrows || A_->nnz() != A->nnz())) {
    reuse_structure = false;  // a different pattern cannot reuse anything
  }
  A_ = std::move(A);
  // The residual workspace serves the monitoring loop and the Krylov
  // recurrences; smoothers and inner AMG solvers never touch it, and on a
  // large level it is as big as a solution vector. Like the Krylov bases it
  // is sized by the first solve (size_residual), not here, so that the
  // setup's peak memory holds no solve vectors.
  if (!(monitor_residual_ || keeps_residual()) ||
      r_.size() != static_cast<std::size_t>(A_->nrows)) {
    Vector<T>().swap(r_);
  }
  if (const Distribution<T>* dist = A_->dist.get()) {
    // Each solver's setup ends with the processes agreeing on success, so a
    // failure on one process (a zero row, a bad diagonal) raises on all of
    // them before anyone enters the next collective step.
    int kind = 0;
    const std::string error = capture_error([&] { solver_setup(reuse_structure); }, &kind);
    dist->agree(error, kind);
  } else {
    solver_setup(reuse_structure);
  }
  setup_seconds_ = now_seconds() - t0;
}

template <class T>
void Solver<T>::matvec(const T* x, T* y) const {
  if (A_->dist) {
    A_->dist->spmv(*A_, x, y);
  } else {
    cpu::spmv(*A_, x, y);
  }
}

template <class T>
void Solver<T>::residual_of(const T* x, const T* b, T* r) const {
  if (A_->dist) {
    A_->dist->residual(*A_, x, b, r);
  } else {
    cpu::residual(*A_, x, b, r);
  }
}

template <class T>
double Solver<T>::global_dot(std::size_t n, const T* x, const T* y) const {
  double d = cpu::dot(n, x, y);
  if (const Distribution<T>* dist = distribution()) dist->sum(&d, 1);
  return d;
}

template <class T>
double Solver<T>::global_norm(std::size_t n, const T* x, NormType type) const {
  const Distribution<T>* dist = distribution();
  if (!dist) return cpu::norm(n, x, type);
  double local = cpu::norm(n, x, type);
  switch (type) {
    case NormType::kLMax:
      return dist->max(local);
    case NormType::kL1:
      dist->sum(&local, 1);
      return local;
    case NormType::kL2:
      local *= local;
      dist->sum(&local, 1);
      return std::sqrt(local);
  }
  return local;
}

template <class T>
StoppingRule Solver<T>::stopping_rule() const {
  StoppingRule rule;
  rule.type = convergence_;
  rule.tolerance = tolerance_;
  rule.alt_rel_tolerance = alt_rel_tolerance_;
  rule.rel_div_tolerance = rel_div_tolerance_;
  rule.eps = std::is_same<T, float>::value ? 1e-6 : 1e-12;
  return rule;
}

template <class T>
void Solver<T>::size_residual() {
  // Also covers monitoring switched on after setup (set_monitor_residual).
  const std::size_t n = static_cast<std::size_t>(rows());
  if ((monitor_residual_ || keeps_residual()) && r_.size() != n) r_.resize(n);
}

template <class T>
void Solver<T>::apply(const T* b, T* x, bool x_is_zero, int iterations) {
  if (iterations <= 0) {
    if (x_is_zero) cpu::fill<T>(rows(), T(0), x);
    return;
  }
  size_residual();
  solve_init(b, x, x_is_zero);
  for (int it = 0; it < iterations; ++it) {
    if (solve_iteration(b, x, x_is_zero && it == 0) != IterationResult::kContinue) break;
  }
  solve_finalize(b, x);
}

template <class T>
Status Solver<T>::solve(const T* b, T* x, bool x_is_zero) {
  if (!A_) throw InvalidInput(name_ + ": solve called before setup");
  const double t0 = now_seconds();
  const std::size_t n = rows();
  size_residual();
  SolveTracker track(loop_settings());
  double norm0 = -1;
  if (monitor_residual_) {
    if (x_is_zero) {
      cpu::copy(n, b, r_.data());
    } else {
      residual_of(x, b, r_.data());
    }
    norm0 = global_norm(n, r_.data(), norm_);
  }
  track.start(norm0);
  while (!track.finished()) {
    const bool zero_start = x_is_zero && track.begin_pass();
    solve_init(b, x, zero_start);
    while (track.running()) {
      const IterationResult step = solve_iteration(b, x, x_is_zero && track.iterations() == 0);
      double norm = -1;
      bool from_recurrence = keeps_residual();
      if (monitor_residual_ && residual_norm_estimate(&norm)) {
        from_recurrence = true;
      } else if (monitor_residual_) {
        if (!keeps_residual()) residual_of(x, b, r_.data());
        norm = global_norm(n, r_.data(), norm_);
      }
      track.record(step, norm, from_recurrence);
    }
    solve_finalize(b, x);
    if (track.end_pass()) {
      residual_of(x, b, r_.data());
      track.check_true_residual(global_norm(n, r_.data(), norm_));
    }
  }
  if (track.answer_is_zero_guess(x_is_zero)) cpu::fill<T>(n, T(0), x);
  bool finite = cpu::all_finite(n, x);
  const Distribution<T>* dist = distribution();
  if (dist && depth_ == 0) {
    // Every process must report the same status. Inner solvers (smoothers,
    // preconditioners) skip this reduction: their status is not read, and
    // a NaN reaches the outer solver's global norms anyway.
    finite = dist->max(finite ? 0.0 : 1.0) == 0.0;
  }
  if (!finite) track.fail();
  status_ = track.status();
  iterations_ = track.iterations();
  initial_residual_ = track.initial();
  final_residual_ = track.final_norm();
  history_ = std::move(track.history());
  solve_seconds_ = now_seconds() - t0;
  print_solve_stats();
  return status_;
}

template <class T>
LoopSettings Solver<T>::loop_settings() const {
  LoopSettings s;
  s.rule = stopping_rule();
  s.max_iters = max_iters_;
  s.monitor = monitor_residual_;
  s.store_history = monitor_residual_ && store_res_history_;
  s.error_falls_in_energy_norm = error_falls_in_energy_norm();
  s.krylov = is_krylov();
  return s;
}

template <class T>
void Solver<T>::print_solve_stats() const {
  SolveStatsRecord r;
  r.history = &history_;
  r.iterations = iterations_;
  r.initial = initial_residual_;
  r.final = final_residual_;
  r.memory_gb = peak_memory_gb();
  r.setup_seconds = setup_seconds_;
  r.solve_seconds = solve_seconds_;
  write_solve_stats(r);
}

template <class T>
void Solver<T>::write_solve_stats(const SolveStatsRecord& r) const {
  Config& cfg = ctx_.config;
  const int verbosity = cfg.get_int("verbosity_level", scope_);
  char line[256];
  std::ostringstream& out = ctx_.log;
  // Re-read at print time, as AmgX does (a default-scope solver cleared it).
  if (cfg.get_int("print_solve_stats", scope_) != 0 && verbosity >= 3) {
    if (!monitor_residual_) {
      throw ConfigError("print_solve_stats=1 in scope '" + scope_ +
                        "' requires monitor_residual=1 in the same scope");
    }
    const char* sep =
        "         ----------------------------------------------------------------------\n";
    out << "           iter      Mem Usage (GB)       residual           rate\n" << sep;
    const double mem = r.memory_gb;
    const std::vector<double>& history = *r.history;
    if (!history.empty()) {
      std::snprintf(line, sizeof line, "            Ini%20.5f%15.6e\n", mem, history[0]);
      out << line;
      for (std::size_t i = 1; i < history.size(); ++i) {
        const double rate = history[i - 1] > 0 ? history[i] / history[i - 1] : 0.0;
        std::snprintf(line, sizeof line, "%15zu%20.5f%15.6e%15.4f\n", i - 1, mem, history[i],
                      rate);
        out << line;
      }
    }
    out << sep;
    std::snprintf(line, sizeof line, "         Total Iterations: %d\n", r.iterations);
    out << line;
    const double ini = r.initial;
    const double fin = r.final;
    const double eps = std::numeric_limits<double>::epsilon();
    const double avg =
        (r.iterations > 0 && ini > eps) ? std::pow(fin / ini, 1.0 / r.iterations) : ini;
    const double red = ini > eps ? fin / ini : ini;
    std::snprintf(line, sizeof line, "         Avg Convergence Rate: \t\t%15.4f\n", avg);
    out << line;
    std::snprintf(line, sizeof line, "         Final Residual: \t\t%15.6e\n", fin);
    out << line;
    std::snprintf(line, sizeof line, "         Total Reduction in Residual: \t%15.6e\n", red);
    out << line;
    std::snprintf(line, sizeof line, "         Maximum Memory Usage: \t\t%15.3f GB\n", mem);
    out << line << sep;
  }
  if (obtain_timings_ && verbosity >= 3) {
    std::snprintf(line, sizeof line, "Total Time: %g\n    setup: %g s\n    solve: %g s\n",
                  r.setup_seconds + r.solve_seconds, r.setup_seconds, r.solve_seconds);
    out << line;
    std::snprintf(line, sizeof line, "    solve(per iteration): %g s\n",
                  r.iterations > 0 ? r.solve_seconds / r.iterations : 0.0);
    out << line;
  }
}

template <class T>
std::unique_ptr<Solver<T>> Solver<T>::make_transposed(
    std::shared_ptr<const CsrMatrix<T>> At) const {
  std::unique_ptr<Solver<T>> s = create_solver<T>(ctx_, SolverRef{name_, scope_});
  copy_loop_settings(*s);
  s->setup(std::move(At));
  return s;
}

template <class T>
void Solver<T>::copy_loop_settings(Solver<T>& to) const {
  to.max_iters_ = max_iters_;
  to.tolerance_ = tolerance_;
  to.alt_rel_tolerance_ = alt_rel_tolerance_;
  to.rel_div_tolerance_ = rel_div_tolerance_;
  to.convergence_ = convergence_;
  to.norm_ = norm_;
  to.monitor_residual_ = monitor_residual_;
  to.store_res_history_ = store_res_history_;
  to.obtain_timings_ = obtain_timings_;
}

template class Solver<float>;
template class Solver<double>;

}  // namespace jaxamg
