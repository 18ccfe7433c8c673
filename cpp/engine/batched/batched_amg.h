// The multi-vector AMG cycle (internal to batched/): AmgX's fixed cycle with
// the V, W and F dispatchers (amg_cycle.cc) on k lanes at once, over the
// hierarchy of an AmgSolver as its setup built it. Each level owns n_l x k
// blocks for its right-hand side, iterate and (with an explicit R) residual;
// smoothers and the coarse solver are the nodes of batched_smoothers.h.
//
// Not covered (make_amg_node returns nullptr): the K-cycles CG and CGF,
// error_scaling 2 and 3, and levels whose smoother or whose coarse solver
// has no node.
#pragma once
#include <memory>

#include "amg/amg_solver.h"
#include "batched/batched_node.h"

namespace jaxamg::batched {

template <class T>
std::unique_ptr<Node<T>> make_amg_node(const AmgSolver<T>& amg, int max_lanes);

}  // namespace jaxamg::batched
