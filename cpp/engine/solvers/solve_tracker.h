// The decisions of a solve's iteration loop, written once: when the loop
// stops, with which status, and whether a SUCCESS read off a recurrence
// survives the true residual b - A x. Every loop that runs a solver's
// iterations drives one SolveTracker per right-hand side: Solver::solve (host
// and distributed), each lane of the vmap batches (batched/batched_krylov.cc)
// and the device solve (device/device_solver.cc). Those loops differ only in
// where the vectors live and how iterations are launched (one at a time, a
// block of lanes, a captured CUDA graph); they compute the norms and hand them
// here.
//
// A loop's shape, with the calls in order:
//
//   SolveTracker t(settings);
//   t.start(|b - A x0|);                       // the norm is read when monitoring
//   while (!t.finished()) {
//     method.init(x_is_zero && t.begin_pass());
//     while (t.running()) t.record(method.iteration(), |r|, from_recurrence);
//     method.finalize();
//     if (t.end_pass()) t.check_true_residual(|b - A x|);  // may restart
//   }
//   if (t.answer_is_zero_guess(x_is_zero)) x = 0;
#pragma once
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "core/types.h"
#include "solvers/stopping_rule.h"

namespace jaxamg {

enum class IterationResult {
  kContinue,   // go on; the loop checks convergence if monitoring
  kConverged,  // the method knows it is done (e.g. an exact direct solve)
  kBreakdown,  // the recurrence cannot continue (division by ~0)
};

// What a solver's loop obeys (Solver::loop_settings).
struct LoopSettings {
  StoppingRule rule;
  int max_iters = 0;
  bool monitor = false;        // monitor_residual
  bool store_history = false;  // store_res_history (with monitor)
  // CG's iterates minimise the error in the A-norm: its residual norm may
  // rise while the error falls, so a solve that used every iteration ends
  // NOT_CONVERGED, never DIVERGED.
  bool error_falls_in_energy_norm = false;
  // AmgX: with monitoring off, Krylov methods report SUCCESS after max_iters,
  // AMG and smoothers NOT_CONVERGED.
  bool krylov = false;
};

class SolveTracker {
 public:
  explicit SolveTracker(const LoopSettings& s) : s_(s) {}

  // The solve starts from an initial residual norm `norm` (read only when
  // monitoring). It may end here: converged already, a non-finite norm, or
  // max_iters 0.
  void start(double norm) {
    if (s_.monitor) {
      initial_ = largest_ = final_ = norm;
      if (s_.store_history) history_.push_back(norm);
      if (!std::isfinite(norm)) {
        stop(Status::kFailed);
      } else if (s_.rule.converged(norm, norm, norm)) {
        stop(Status::kSuccess);
      }
    }
    if (!done_ && s_.max_iters == 0) {
      stop(s_.monitor ? Status::kNotConverged : Status::kSuccess);
    }
    finished_ = done_;
  }

  // A pass of the method begins (the first, or a restart from the current
  // iterate); true for the first pass, whose start may use a zero guess.
  bool begin_pass() {
    from_recurrence_ = false;
    return std::exchange(first_pass_, false);
  }

  // True while the current pass takes iterations.
  bool running() const { return !done_ && iterations_ < s_.max_iters; }

  // One iteration ended with `step`; `norm` is the monitored residual norm
  // after it (read only when monitoring), taken from the method's recurrence
  // or estimate when `from_recurrence` (so SUCCESS is checked against the
  // true residual at the end of the pass).
  void record(IterationResult step, double norm, bool from_recurrence) {
    ++iterations_;
    if (s_.monitor) {
      from_recurrence_ = from_recurrence;
      final_ = norm;
      largest_ = std::max(largest_, norm);
      if (s_.store_history) history_.push_back(norm);
      if (!std::isfinite(norm)) {
        stop(Status::kFailed);  // NaN/Inf: never SUCCESS, never loop on
      } else if (step == IterationResult::kConverged ||
                 s_.rule.converged(norm, initial_, largest_)) {
        stop(Status::kSuccess);
      } else if (s_.rule.diverged(norm, initial_)) {
        stop(Status::kDiverged);
      }
    } else if (step == IterationResult::kConverged) {
      stop(Status::kSuccess);
    }
    if (!done_ && step == IterationResult::kBreakdown) {
      // The recurrence cannot produce a new iterate: report it as divergence
      // (AmgX declares but never produces this status).
      stop(Status::kDiverged);
    }
  }

  // `iterations` iterations run and tested on the device as one block (the
  // CUDA-graph loop, which applies this rule to each norm there): the last
  // and largest norms of the block, and the status where it stopped.
  void record_block(int iterations, double final_norm, double largest, bool stopped, Status status,
                    bool from_recurrence) {
    iterations_ += iterations;
    if (s_.monitor && iterations > 0) {
      from_recurrence_ = from_recurrence;
      final_ = final_norm;
      largest_ = largest;
    }
    if (stopped) stop(status);
  }

  // The pass ended (the method has finalised x). True when the loop must
  // compute the true residual norm and call check_true_residual; otherwise
  // the solve is finished.
  bool end_pass() {
    if (!done_) {
      status_ = !s_.monitor ? (s_.krylov ? Status::kSuccess : Status::kNotConverged)
                : s_.error_falls_in_energy_norm ? Status::kNotConverged
                                                : StoppingRule::exhausted(final_, initial_);
      finished_ = true;
      return false;
    }
    if (status_ == Status::kSuccess && from_recurrence_) return true;
    finished_ = true;
    return false;
  }

  // Krylov recurrences (or estimates) can drift from b - A x (near-singular
  // systems, float32). A SUCCESS that the true residual `norm` refutes
  // restarts the method from the current x while iterations remain (AmgX
  // stops on the recurrence alone). A restart that does not at least halve
  // the true residual of the previous refusal has hit the precision floor
  // (float32 cannot reach a true residual much below cond(A) * 6e-8): the
  // solve ends NOT_CONVERGED instead of restarting until max_iters.
  void check_true_residual(double norm) {
    finished_ = true;
    if (!std::isfinite(norm) || s_.rule.converged(norm, initial_, largest_)) return;
    final_ = norm;
    if (s_.store_history && !history_.empty()) history_.back() = norm;
    const bool progressing = norm <= 0.5 * rejected_true_norm_;
    rejected_true_norm_ = norm;
    if (iterations_ < s_.max_iters && progressing) {
      done_ = finished_ = false;  // restart from the current iterate
      return;
    }
    status_ = Status::kNotConverged;
  }

  // The whole solve is over.
  bool finished() const { return finished_; }
  // A zero guess that needed no iteration (b = 0, or max_iters 0) is the
  // answer: the loop writes it, the caller's buffer may hold anything.
  bool answer_is_zero_guess(bool x_is_zero) const { return x_is_zero && iterations_ == 0; }
  // x is not finite (or, distributed, not finite on some process).
  void fail() { status_ = Status::kFailed; }

  Status status() const { return status_; }
  int iterations() const { return iterations_; }
  // Monitored norms; -1 when not monitoring.
  double initial() const { return initial_; }
  double largest() const { return largest_; }
  double final_norm() const { return final_; }
  // Entry 0 is the initial norm, then one per iteration (empty unless
  // monitoring with store_history). A block loop appends its norms here.
  std::vector<double>& history() { return history_; }
  const LoopSettings& settings() const { return s_; }

 private:
  void stop(Status status) {
    status_ = status;
    done_ = true;
  }

  LoopSettings s_;
  Status status_ = Status::kSuccess;
  int iterations_ = 0;
  double initial_ = -1, largest_ = -1, final_ = -1;
  std::vector<double> history_;
  bool first_pass_ = true;
  bool from_recurrence_ = false;  // the last norm came from the recurrence
  bool done_ = false;             // the current pass stops
  bool finished_ = false;         // the solve is over
  // The true residual of the last refused SUCCESS (a restart must halve it).
  double rejected_true_norm_ = std::numeric_limits<double>::infinity();
};

}  // namespace jaxamg
