// LinearSolver::solve_many (several right-hand sides on one setup) and the
// choice of the solver for A or A^T that solve and solve_many share.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "api/linear_solver.h"
#include "batched/batched_krylov.h"
#include "core/error.h"
#include "core/finite_check.h"

namespace jaxamg {

template <class T>
Solver<T>* LinearSolver<T>::solver_for(bool transpose) {
  if (!transpose) return solver_.get();
  if (!transposed_) {
    auto At = std::make_shared<CsrMatrix<T>>(jaxamg::transpose(*A_));
    At->block_dim = A_->block_dim;
    transposed_ = solver_->make_transposed(At);
  }
  return transposed_.get();
}

template <class T>
std::vector<SolveResult> LinearSolver<T>::solve_many(const T* B, T* X, Index n, Index nrhs,
                                                     bool use_x0, bool transpose) {
  if (!A_) throw InvalidInput("solve_many called before setup");
  if (n != A_->nrows) {
    throw InvalidInput("B: has " + std::to_string(n) + " rows but A has " +
                       std::to_string(A_->nrows) + "; pass one entry per row for every lane");
  }
  if (nrhs < 0) {
    throw InvalidInput("nrhs = " + std::to_string(nrhs) + " is not a lane count; pass 0 or more");
  }
  const std::size_t total = static_cast<std::size_t>(n) * nrhs;
  const auto e = static_cast<std::size_t>(first_non_finite(B, static_cast<std::int64_t>(total)));
  if (e < total) {
    throw InvalidInput("B: entry " + std::to_string(e % n) + " of right-hand side " +
                       std::to_string(e / n) + " is NaN or infinite; pass finite values");
  }
  std::vector<SolveResult> results;
  if (nrhs == 0) return results;
  Solver<T>* s = solver_for(transpose);
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  std::vector<batched::LaneResult> lanes;
  // One lane gains nothing from the block kernels: the one-lane loop is the
  // reference they reproduce.
  if (nrhs > 1) {
    const int want = static_cast<int>(std::min<Index>(nrhs, batched::kMaxBlockLanes));
    if (batch_for_ != s || (batch_ && batch_->block_lanes() < want)) {
      // Made once per solver (and kept for later calls); a config that is
      // not covered is looked at again on every call, a small cost next to
      // the lane-by-lane solves it then runs.
      batch_ = batched::make_batch_solver(*s, want);
      batch_for_ = batch_ ? s : nullptr;
    }
  }
  if (nrhs > 1 && batch_) {
    batch_->solve(B, X, static_cast<int>(nrhs), use_x0, &lanes);
    const double seconds = std::chrono::duration<double>(clock::now() - t0).count();
    for (batched::LaneResult& lane : lanes) {
      SolveResult r;
      r.status = lane.status;
      r.iterations = lane.iterations;
      r.residual = lane.residual;
      r.history = std::move(lane.history);
      r.setup_seconds = s->setup_seconds();
      r.solve_seconds = seconds;  // of the whole batch
      results.push_back(std::move(r));
    }
    return results;
  }
  for (Index j = 0; j < nrhs; ++j) {
    const std::size_t o = static_cast<std::size_t>(j) * n;
    results.push_back(solve(B + o, X + o, n, use_x0, transpose));
  }
  return results;
}

#define JAXAMG_INSTANTIATE(T)                                                                \
  template Solver<T>* LinearSolver<T>::solver_for(bool);                                     \
  template std::vector<SolveResult> LinearSolver<T>::solve_many(const T*, T*, Index, Index,   \
                                                                bool, bool);
JAXAMG_INSTANTIATE(float)
JAXAMG_INSTANTIATE(double)
#undef JAXAMG_INSTANTIATE

}  // namespace jaxamg
