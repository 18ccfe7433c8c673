// A contiguous row partition: process r owns global rows
// [starts[r], starts[r + 1]). Built collectively from each process's
// (row_start, n_local, nglobal) and validated so that every process raises
// the same error for gaps, overlaps, a wrong nglobal or an empty process.
#pragma once
#include <cstdint>
#include <vector>

#include "dist/communicator.h"

namespace jaxamg::dist {

struct RowPartition {
  int64_t row_start = 0;
  int64_t n_local = 0;
  int64_t nglobal = 0;
  std::vector<int64_t> starts;  // size + 1 entries, starts[size] = nglobal

  // Collective. Throws (on every process, the same error) unless the blocks
  // lie in rank order without gaps or overlaps, cover [0, nglobal), every
  // process owns at least one row, and block_dim divides every block.
  static RowPartition build(const Communicator& comm, int64_t row_start, int64_t n_local,
                            int64_t nglobal, int64_t block_dim = 1);
  // From known block sizes (coarse levels: no validation needed).
  static RowPartition from_counts(const Communicator& comm, int64_t n_local);

  int owner(int64_t global_row) const;  // the rank owning a global row
  bool owns(int64_t global_row) const {
    return global_row >= row_start && global_row < row_start + n_local;
  }
};

}  // namespace jaxamg::dist
