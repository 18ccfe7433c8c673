// SolveTracker, the one set of decisions behind every solve loop (host,
// lanes, device), driven with chosen norms: the rules that real solves reach
// only rarely (a refused SUCCESS, the precision floor, a block of device
// iterations) are checked here against what the loop's contract states.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "solvers/solve_tracker.h"

namespace jaxamg {
namespace {

LoopSettings monitored(int max_iters, double tol) {
  LoopSettings s;
  s.rule.type = ConvergenceType::kRelativeIni;
  s.rule.tolerance = tol;
  s.max_iters = max_iters;
  s.monitor = true;
  s.store_history = true;
  s.krylov = true;
  return s;
}

// Runs passes of `norms` (one per iteration, from the recurrence), answering
// each refused-looking end of pass with the next of `true_norms`.
SolveTracker drive(const LoopSettings& s, double initial, const std::vector<double>& norms,
                   const std::vector<double>& true_norms, int* passes) {
  SolveTracker t(s);
  t.start(initial);
  std::size_t next = 0, next_true = 0;
  *passes = 0;
  while (!t.finished()) {
    t.begin_pass();
    ++*passes;
    while (t.running()) t.record(IterationResult::kContinue, norms.at(next++), true);
    if (t.end_pass()) t.check_true_residual(true_norms.at(next_true++));
  }
  return t;
}

TEST(SolveTracker, StopsAtTheFirstNormThatMeetsTheRule) {
  int passes = 0;
  SolveTracker t = drive(monitored(10, 1e-2), 1.0, {0.5, 0.1, 0.009, 1e-4}, {0.008}, &passes);
  EXPECT_EQ(t.status(), Status::kSuccess);
  EXPECT_EQ(t.iterations(), 3);
  EXPECT_EQ(passes, 1);
  EXPECT_EQ(t.history(), (std::vector<double>{1.0, 0.5, 0.1, 0.009}));
  EXPECT_EQ(t.final_norm(), 0.009);
}

TEST(SolveTracker, ARefusedSuccessRestartsAndTheTrueNormReplacesTheLastEntry) {
  int passes = 0;
  // The recurrence claims 0.005; the true residual is 0.05: restart, then
  // the second pass converges for real.
  SolveTracker t =
      drive(monitored(10, 1e-2), 1.0, {0.2, 0.005, 0.02, 0.001}, {0.05, 0.002}, &passes);
  EXPECT_EQ(t.status(), Status::kSuccess);
  EXPECT_EQ(passes, 2);
  EXPECT_EQ(t.iterations(), 4);
  EXPECT_EQ(t.history(), (std::vector<double>{1.0, 0.2, 0.05, 0.02, 0.001}));
}

TEST(SolveTracker, ARestartThatDoesNotHalveTheRefusedNormHitsThePrecisionFloor) {
  int passes = 0;
  // Refused at 0.05, then at 0.04 (> 0.5 * 0.05): NOT_CONVERGED with
  // iterations left, the true norm reported.
  SolveTracker t = drive(monitored(10, 1e-2), 1.0, {0.001, 0.001}, {0.05, 0.04}, &passes);
  EXPECT_EQ(t.status(), Status::kNotConverged);
  EXPECT_EQ(passes, 2);
  EXPECT_EQ(t.iterations(), 2);
  EXPECT_EQ(t.final_norm(), 0.04);
}

TEST(SolveTracker, ExhaustedSolvesReportByMethodAndMonitoring) {
  int passes = 0;
  // Above the initial norm after max_iters: DIVERGED, except for the CG
  // family (its error falls in the energy norm while |r| may rise).
  LoopSettings s = monitored(3, 1e-8);
  EXPECT_EQ(drive(s, 1.0, {2, 3, 4}, {}, &passes).status(), Status::kDiverged);
  EXPECT_EQ(drive(s, 1.0, {0.9, 0.8, 0.7}, {}, &passes).status(), Status::kNotConverged);
  s.error_falls_in_energy_norm = true;
  EXPECT_EQ(drive(s, 1.0, {2, 3, 4}, {}, &passes).status(), Status::kNotConverged);
  // Unmonitored: Krylov methods SUCCESS (AmgX), others NOT_CONVERGED; no norms kept.
  s.monitor = false;
  SolveTracker t = drive(s, -1, {-1, -1, -1}, {}, &passes);
  EXPECT_EQ(t.status(), Status::kSuccess);
  EXPECT_TRUE(t.history().empty());
  EXPECT_EQ(t.final_norm(), -1);
  s.krylov = false;
  EXPECT_EQ(drive(s, -1, {-1, -1, -1}, {}, &passes).status(), Status::kNotConverged);
}

TEST(SolveTracker, NonFiniteDivergedAndBreakdownEndThePassAtOnce) {
  LoopSettings s = monitored(50, 1e-8);
  s.rule.rel_div_tolerance = 1e3;
  SolveTracker nan(s);
  nan.start(1.0);
  nan.begin_pass();
  nan.record(IterationResult::kContinue, std::numeric_limits<double>::quiet_NaN(), true);
  EXPECT_FALSE(nan.running());
  EXPECT_FALSE(nan.end_pass());
  EXPECT_EQ(nan.status(), Status::kFailed);

  SolveTracker grows(s);
  grows.start(1.0);
  grows.begin_pass();
  grows.record(IterationResult::kContinue, 10.0, true);
  EXPECT_TRUE(grows.running());
  grows.record(IterationResult::kContinue, 2e3, true);
  EXPECT_FALSE(grows.running());
  EXPECT_FALSE(grows.end_pass());
  EXPECT_EQ(grows.status(), Status::kDiverged);
  EXPECT_EQ(grows.iterations(), 2);

  SolveTracker broke(s);
  broke.start(1.0);
  broke.begin_pass();
  broke.record(IterationResult::kBreakdown, 0.5, true);
  EXPECT_FALSE(broke.end_pass());
  EXPECT_EQ(broke.status(), Status::kDiverged);
}

TEST(SolveTracker, ASolveCanEndBeforeItsFirstIteration) {
  // Converged at the start (b = 0 with x0 = 0): the zero guess is the answer.
  SolveTracker zero(monitored(10, 1e-8));
  zero.start(0.0);
  EXPECT_TRUE(zero.finished());
  EXPECT_EQ(zero.status(), Status::kSuccess);
  EXPECT_TRUE(zero.answer_is_zero_guess(true));
  EXPECT_FALSE(zero.answer_is_zero_guess(false));
  // max_iters 0: NOT_CONVERGED when monitored, SUCCESS otherwise.
  SolveTracker none(monitored(0, 1e-8));
  none.start(1.0);
  EXPECT_TRUE(none.finished());
  EXPECT_EQ(none.status(), Status::kNotConverged);
  LoopSettings quiet = monitored(0, 1e-8);
  quiet.monitor = false;
  SolveTracker unmonitored(quiet);
  unmonitored.start(-1);
  EXPECT_EQ(unmonitored.status(), Status::kSuccess);
  // A non-finite initial norm fails.
  SolveTracker inf(monitored(10, 1e-8));
  inf.start(std::numeric_limits<double>::infinity());
  EXPECT_TRUE(inf.finished());
  EXPECT_EQ(inf.status(), Status::kFailed);
}

TEST(SolveTracker, ABlockOfDeviceIterationsCountsAsItsIterations) {
  // The CUDA-graph loop tests each norm on the device and reports the block:
  // the tracker then ends the pass as if it had seen them one by one.
  SolveTracker t(monitored(20, 1e-6));
  t.start(1.0);
  t.begin_pass();
  t.record(IterationResult::kContinue, 0.5, true);
  t.record_block(7, 5e-7, 0.5, /*stopped=*/true, Status::kSuccess, true);
  EXPECT_EQ(t.iterations(), 8);
  EXPECT_FALSE(t.running());
  ASSERT_TRUE(t.end_pass());  // SUCCESS from the recurrence: check b - A x
  t.check_true_residual(8e-7);
  EXPECT_TRUE(t.finished());
  EXPECT_EQ(t.status(), Status::kSuccess);
  EXPECT_EQ(t.final_norm(), 5e-7);
}

}  // namespace
}  // namespace jaxamg
