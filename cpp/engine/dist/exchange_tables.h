// The engine's exchange plans of a distributed matrix as flat tables, for
// callers outside the engine (jaxamg.mpi_utils: HaloPlan, TransposePlan).
// The plans are the ones the solver itself builds (HaloPlan's neighbour
// discovery, transpose()'s entry routing); this file only lays them out as
// arrays indexed by the caller's input entries.
#pragma once
#include <cstdint>
#include <vector>

#include "dist/communicator.h"
#include "dist/partition.h"

namespace jaxamg::dist {

// The forward halo exchange: ghost k (global id ghosts[k], ascending) comes
// from recv_ranks[q] for recv_offsets[q] <= k < recv_offsets[q + 1]; the
// values of local rows send_index[send_offsets[q] .. send_offsets[q + 1])
// go to send_ranks[q], in that order.
struct HaloTables {
  std::vector<int64_t> ghosts;
  std::vector<int32_t> recv_ranks, recv_offsets;
  std::vector<int32_t> send_ranks, send_offsets, send_index;
};

// Collective. `ghosts`: sorted, unique global ids outside this process's rows.
HaloTables halo_tables(const Communicator& comm, const RowPartition& part,
                       const std::vector<int64_t>& ghosts);

// The transpose of this process's rows of A (CSR with global columns, as
// given: unsorted rows allowed, duplicate entries refused) and where every
// input entry's value lands in it. A^T's rows are sorted by global column.
//  - local_entry[i] (an input entry in an owned column) lands in slot
//    local_slot[i] of A^T;
//  - the input entries send_entry[send_offsets[q] .. send_offsets[q + 1])
//    travel to send_ranks[q], which puts them, in that order, into the
//    slots recv_slot[recv_offsets[p] .. recv_offsets[p + 1]) for the
//    sender recv_ranks[p].
struct TransposeTables {
  std::vector<int32_t> row_ptr;
  std::vector<int64_t> col;  // global column ids of A^T's entries
  std::vector<int32_t> local_entry, local_slot;
  std::vector<int32_t> send_ranks, send_offsets, send_entry;
  std::vector<int32_t> recv_ranks, recv_offsets, recv_slot;
};

// Collective; every process raises the same error for bad structure.
TransposeTables transpose_tables(const Communicator& comm, const RowPartition& part,
                                 const std::vector<int32_t>& row_ptr,
                                 const std::vector<int32_t>& col);

}  // namespace jaxamg::dist
