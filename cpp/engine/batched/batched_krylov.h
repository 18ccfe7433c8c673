// Batched Krylov solves: k right-hand sides of one matrix solved together by
// PCG, PCGF, PBICGSTAB (BICGSTAB too), GMRES or FGMRES, with multi-vector
// products and a multi-vector preconditioner (batched_node.h) on one setup.
//
// Every lane is its own solve: it has its own recurrence scalars, stopping
// test, residual history, iteration count and status, and follows
// Solver<T>::solve step by step (initial check, the true-residual check
// before SUCCESS and the restart it may trigger, breakdown, NaN handling), so
// each lane ends with the iterations and solution of a one-lane solve up to
// the rounding of the reductions. A lane that has finished is removed from
// the block (its solution is final); the others go on in a narrower block.
//
// Not covered (solve_batched returns false and the caller solves lane by
// lane): any other top-level method (CG without a preconditioner, IDR, AMG
// or a smoother as the outer solver), a preconditioner without a node (see
// batched_node.h), a preconditioner that monitors its residual, statistics
// printing (print_solve_stats, obtain_timings), and distributed matrices.
#pragma once
#include <memory>
#include <vector>

#include "core/types.h"
#include "solvers/solver.h"

namespace jaxamg::batched {

struct LaneResult {
  Status status = Status::kSuccess;
  int iterations = 0;
  double residual = -1;         // final monitored norm, -1 if not monitored
  std::vector<double> history;  // initial norm, then one per iteration
};

// A batched solver for one set-up solver tree: it owns the multi-vector work
// space (the Krylov blocks and the preconditioner's level blocks) for up to
// block_lanes() lanes and keeps it from one solve to the next, so repeated
// batches on one setup allocate nothing. It reads the solver tree's setup
// data, so it must not outlive that setup (LinearSolver drops it on every
// setup, resetup and replace_values).
template <class T>
class BatchSolver {
 public:
  virtual ~BatchSolver() = default;
  // Solves s.matrix() x_j = b_j for j < nrhs; B and X hold the lanes one
  // after the other (lane j at offset j * n), X the initial guesses when
  // use_x0. More than block_lanes() lanes are solved in consecutive blocks.
  virtual void solve(const T* B, T* X, int nrhs, bool use_x0,
                     std::vector<LaneResult>* results) = 0;
  virtual int block_lanes() const = 0;
};

// The widest block a BatchSolver is made for: one pass over a matrix row
// already serves this many lanes (row_kernels.h), and wider blocks would
// only add work space.
constexpr int kMaxBlockLanes = 8;

// The batched solver for `s` with blocks of min(lanes, kMaxBlockLanes)
// lanes, or nullptr if the solver tree is not covered (or lanes < 1).
template <class T>
std::unique_ptr<BatchSolver<T>> make_batch_solver(const Solver<T>& s, int lanes);

// make_batch_solver(s, nrhs) and one solve. Returns false, touching nothing,
// if the solver tree is not covered or n is not the matrix's row count.
template <class T>
bool solve_batched(const Solver<T>& s, const T* B, T* X, Index n, int nrhs, bool use_x0,
                   std::vector<LaneResult>* results);

}  // namespace jaxamg::batched
