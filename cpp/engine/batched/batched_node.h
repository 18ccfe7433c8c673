// The multi-vector counterpart of a set-up preconditioner, smoother or
// coarse solver: it applies the same solver to k right-hand sides at once
// (lane-interleaved n x k blocks, see multivector.h), reading the data of the
// existing setup (diagonals, Chebyshev bounds, LU factors, AMG hierarchy)
// and owning only its multi-vector work space.
//
// Covered: JACOBI_L1, BLOCK_JACOBI with block_dim 1, CHEBYSHEV and
// CHEBYSHEV_POLY with a diagonal (or no) preconditioner, DENSE_LU_SOLVER,
// and AMG with V, W or F cycles, no error scaling, whose smoothers and
// coarse solver are covered. make_node returns nullptr for anything else
// (the caller then solves lane by lane).
#pragma once
#include <memory>

#include "core/types.h"
#include "solvers/solver.h"

namespace jaxamg::batched {

template <class T>
class Node {
 public:
  virtual ~Node() = default;
  // `iterations` iterations of the solver on every lane (X overwritten when
  // x_is_zero), k <= the width the node was made for: what
  // Solver::apply(b, x, x_is_zero, iterations) does per lane.
  virtual void apply(const T* B, T* X, int k, bool x_is_zero, int iterations) = 0;
  // What Solver::solve(b, x, x_is_zero) does per lane for an unmonitored
  // solver (a preconditioner or coarse solver): max_iters iterations.
  void solve(const T* B, T* X, int k, bool x_is_zero) {
    apply(B, X, k, x_is_zero, max_iters_);
  }
  // d when one iteration from a zero guess is x = d .* b (the Jacobi-type
  // sweeps), which lets AMG fuse it with the restriction; else nullptr.
  virtual const T* zero_start_scale() const { return nullptr; }

 protected:
  int max_iters_ = 1;
};

// The node for `s`, with work space for up to `max_lanes` lanes; nullptr if
// the solver (or a solver inside it) is not covered, or if `as_solve` (the
// node serves Solver::solve) and the solver monitors its residual or prints
// statistics, which only the one-lane loop reproduces.
template <class T>
std::unique_ptr<Node<T>> make_node(const Solver<T>& s, int max_lanes, bool as_solve);

// True if a solve of `s` would print AmgX statistics or timings (the
// batched path does not produce them).
template <class T>
bool prints_statistics(const Solver<T>& s);

}  // namespace jaxamg::batched
