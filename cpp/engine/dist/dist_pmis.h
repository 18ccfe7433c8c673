// PMIS across process boundaries (De Sterck, Yang, Heys 2006, as hypre's
// BoomerAMG runs it): the serial PMIS (amg/classical/pmis.cc) round by
// round, with the weights, states and "lost" marks of the halo points
// exchanged along the level's halo plan, and the end decided by a global
// sum of the undecided points.
//
// The weight of point i is |S^T_i| (counted over every process: the
// dependences on ghost points travel back to their owners) plus the serial
// tie-breaker point_hash(global id, seed); ties go to the larger global id.
// Each round makes the same decisions as the serial one on the global
// graph, so the splitting does not depend on the number of processes or the
// partition: on any partition it is the serial splitting.
#pragma once
#include <cstdint>
#include <vector>

#include "core/csr_matrix.h"
#include "dist/halo_plan.h"

namespace jaxamg::dist {

// The strong dependences of the owned points: row i (local, n rows) lists
// the local columns ([owned | ghost], ghosts >= n) it strongly depends on.
struct LocalStrength {
  Index n = 0;
  std::vector<Index> row_ptr{0}, col;
};

// Collective. `cf` holds one entry per owned point (classical::kUndecided,
// kCoarse, kFine); undecided points are decided, the others kept (so a
// first pass may seed it, as HMIS does). `ghost_gid`: the global ids of the
// plan's ghosts; `row_start`: the global id of local point 0.
void dist_pmis(const HaloPlan& plan, const LocalStrength& S, int64_t row_start,
               const std::vector<int64_t>& ghost_gid, uint64_t seed, std::vector<int8_t>& cf);

}  // namespace jaxamg::dist
