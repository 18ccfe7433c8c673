// Multi-vector nodes of the single-level solvers (internal to batched/):
// diagonal sweeps (JACOBI_L1, BLOCK_JACOBI with block_dim 1), CHEBYSHEV with
// a diagonal preconditioner, and DENSE_LU_SOLVER's triangular solves.
#pragma once
#include <memory>

#include "batched/batched_node.h"

namespace jaxamg::batched {

// The node for one of the solvers above, nullptr for any other solver.
template <class T>
std::unique_ptr<Node<T>> make_smoother_node(const Solver<T>& s, int max_lanes);

}  // namespace jaxamg::batched
