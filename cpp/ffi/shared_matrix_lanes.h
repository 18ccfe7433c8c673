// Lanes of one jaxamg_solve call that share their matrix (structure and
// values broadcast over the batch, e.g. jax.vmap over b only) are solved
// together: the first lane to reach its solve runs LinearSolver::solve_many
// on the cached setup for itself and every later lane whose b (and x0) are
// finite, with multi-vector kernels where the config allows
// (engine batched/); each later lane then takes its result from that batch
// without a second look at the matrix (cache lookup, value comparison).
//
// The solutions go straight to the output buffer, and when the lanes' right-
// hand sides lie one after the other in the operand (b batched, not
// broadcast) solve_many reads them in place: no copy of the batch.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "api/linear_solver.h"

namespace jaxamg::ffi_handlers {

template <class T>
class SharedMatrixLanes {
 public:
  using LaneVector = std::function<const T*(int64_t lane)>;
  // rhs(l), guess(l): lane l's b and x0 (n entries each); out: the solution
  // buffer, lane l at out + l * n.
  SharedMatrixLanes(bool enabled, int64_t lanes, int64_t n, bool use_x0, bool transpose,
                    LaneVector rhs, LaneVector guess, T* out);

  bool enabled() const { return enabled_; }
  // True once the batch has run and lane `lane` was in it: its result then
  // needs neither the solver nor a check of the lane's inputs.
  bool solved(int64_t lane) const { return solved_ && slot_[lane] >= 0; }
  const SolveResult& result(int64_t lane) const { return results_[slot_[lane]]; }
  // The result of lane `lane`, its solution in out + lane * n. The first
  // call solves lanes [lane, lanes) with `solver`; a later call for a lane
  // that was not in that batch (non-finite input) solves it alone.
  SolveResult solve(LinearSolver<T>& solver, int64_t lane);

 private:
  bool enabled_;
  int64_t lanes_, n_;
  bool use_x0_, transpose_;
  LaneVector rhs_, guess_;
  T* out_;
  bool solved_ = false;
  std::vector<int64_t> slot_;  // lane -> its index in the batch, -1 if none
  std::vector<SolveResult> results_;
};

}  // namespace jaxamg::ffi_handlers
