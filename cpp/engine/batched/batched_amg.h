// The AMG cycle on k lanes at once (internal to batched/): the one cycle of
// amg/cycle.h on the lanes backend, over the hierarchy of an AmgSolver as
// its setup built it. Each level owns n_l x k blocks for its vectors;
// smoothers and the coarse solver are the nodes of batched_smoothers.h.
//
// Not covered (make_amg_node returns nullptr): error scaling with
// reuse_scale > 0 (a reused scale is per lane, and would not follow the
// lanes when a batch drops finished ones), and levels whose smoother or
// whose coarse solver has no node.
#pragma once
#include <memory>

#include "amg/amg_solver.h"
#include "batched/batched_node.h"

namespace jaxamg::batched {

template <class T>
std::unique_ptr<Node<T>> make_amg_node(const AmgSolver<T>& amg, int max_lanes);

}  // namespace jaxamg::batched
