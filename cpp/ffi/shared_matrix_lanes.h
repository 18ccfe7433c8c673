// Lanes of one jaxamg_solve call that share their matrix (structure and
// values broadcast over the batch, e.g. jax.vmap over b only) are solved
// together: the first lane to reach its solve runs LinearSolver::solve_many
// on the cached setup for itself and every later lane whose b (and x0) are
// finite, with multi-vector kernels where the config allows
// (engine batched/); each later lane then takes its result from that batch.
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
  // rhs(l), guess(l): lane l's b and x0 (n entries each).
  SharedMatrixLanes(bool enabled, int64_t lanes, int64_t n, bool use_x0, bool transpose,
                    LaneVector rhs, LaneVector guess);

  bool enabled() const { return enabled_; }
  // The result of lane `lane`, its solution written to `sol`. The first call
  // solves lanes [lane, lanes) with `solver`; a later call for a lane that
  // was not in that batch (non-finite input) solves it alone.
  SolveResult solve(LinearSolver<T>& solver, int64_t lane, T* sol);

 private:
  bool enabled_;
  int64_t lanes_, n_;
  bool use_x0_, transpose_;
  LaneVector rhs_, guess_;
  bool solved_ = false;
  std::vector<int64_t> slot_;  // lane -> its index in the batch, -1 if none
  std::vector<T> X_;
  std::vector<SolveResult> results_;
};

}  // namespace jaxamg::ffi_handlers
