// Greedy colouring of a distributed matrix's rows that is valid across
// processes: two rows coupled in either direction (a_ij != 0 or a_ji != 0),
// on one process or on two, never share a colour. The multicolour
// smoothers then update a colour's rows on every process at once after one
// halo exchange of x per colour.
//
// A Jones-Plassmann scheme in rounds. Each node (row, or k consecutive rows
// for block_dim k) has a priority hashed from its global id, so processes
// agree on priorities without communicating. Before each round the colours
// of the ghost rows are exchanged; a process then colours, in row order and
// first-fit, each uncoloured node whose uncoloured off-process neighbours
// all have lower priority. Two coupled nodes of different processes are
// therefore never coloured in the same round, and each sees the other's
// colour when its turn comes; neighbours on the same process are coloured
// one after another and see each other at once. Nodes without off-process
// neighbours (the interior) are all coloured in the first round; boundary
// nodes coloured later may need colours the serial greedy colouring does not
// (5 rather than 2 on a 7-point stencil). The rounds end when no process has an uncoloured
// node (the node of largest priority is always eligible, so each round
// makes progress).
//
// A coupling that only one side stores (a_ij != 0, a_ji == 0 with i and j
// on different processes) is made known to the other side first: the
// process of i sends i's id to j's owner (row_exchange.h), and the
// colouring exchanges along a halo plan of the union of both sides' ghosts.
#pragma once
#include <vector>

#include "dist/dist_matrix.h"

namespace jaxamg::dist {

// Collective. A colour per owned row of A (distributed by op); *num_colors
// is the global count (the same on every process).
template <class T>
std::vector<int> distributed_coloring(const DistOperator<T>& op, const CsrMatrix<T>& A,
                                      Index block_dim, int* num_colors);

}  // namespace jaxamg::dist
