#include "dist/partition.h"

#include <algorithm>
#include <string>

#include "core/error.h"

namespace jaxamg::dist {

RowPartition RowPartition::build(const Communicator& comm, int64_t row_start, int64_t n_local,
                                 int64_t nglobal, int64_t block_dim) {
  // Local checks first, agreed, so a bad value on one process cannot leave
  // the others waiting in the exchange below.
  comm.agree_on([&] {
    if (n_local <= 0) {
      throw InvalidInput("partition: this process owns " + std::to_string(n_local) +
                         " rows; every process of the communicator needs at least one row "
                         "(use a communicator without the empty processes, or repartition)");
    }
    if (nglobal <= 0 || row_start < 0 || row_start + n_local > nglobal) {
      throw InvalidInput("partition: rows [" + std::to_string(row_start) + ", " +
                         std::to_string(row_start + n_local) + ") do not lie in [0, nglobal = " +
                         std::to_string(nglobal) + "); pass row_start, the local row count "
                         "and the global row count of one matrix");
    }
    if (block_dim < 1 || n_local % block_dim != 0 || row_start % block_dim != 0) {
      throw InvalidInput("partition: block_dim = " + std::to_string(block_dim) +
                         " must divide this process's row count " + std::to_string(n_local) +
                         " and its first row " + std::to_string(row_start) +
                         "; split the rows at block boundaries");
    }
  });
  const std::vector<int64_t> all_starts = comm.allgather(row_start);
  const std::vector<int64_t> all_counts = comm.allgather(n_local);
  const std::vector<int64_t> all_globals = comm.allgather(nglobal);
  // Every process sees the same gathered data, so every process finds the
  // same error: no agreement needed.
  for (int r = 1; r < comm.size(); ++r) {
    if (all_globals[r] != all_globals[0]) {
      throw InvalidInput("nglobal: rank " + std::to_string(r) + " passed " +
                         std::to_string(all_globals[r]) + " but rank 0 passed " +
                         std::to_string(all_globals[0]) +
                         "; every process must pass the same global row count");
    }
  }
  int64_t expected = 0;
  for (int r = 0; r < comm.size(); ++r) {
    if (all_starts[r] != expected) {
      const std::string what = all_starts[r] > expected ? "a gap" : "an overlap";
      throw InvalidInput("partition: rank " + std::to_string(r) + " starts at row " +
                         std::to_string(all_starts[r]) + " but the rows before it end at " +
                         std::to_string(expected) + " (" + what + "); rank r must own the rows "
                         "right after rank r - 1's, in rank order");
    }
    expected += all_counts[r];
  }
  if (expected != nglobal) {
    throw InvalidInput("partition: the processes own " + std::to_string(expected) +
                       " rows in total but nglobal = " + std::to_string(nglobal) +
                       "; the local row counts must add up to nglobal");
  }
  RowPartition p;
  p.row_start = row_start;
  p.n_local = n_local;
  p.nglobal = nglobal;
  p.starts = all_starts;
  p.starts.push_back(nglobal);
  return p;
}

RowPartition RowPartition::from_counts(const Communicator& comm, int64_t n_local) {
  const std::vector<int64_t> counts = comm.allgather(n_local);
  RowPartition p;
  p.starts.assign(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) p.starts[r + 1] = p.starts[r] + counts[r];
  p.row_start = p.starts[comm.rank()];
  p.n_local = n_local;
  p.nglobal = p.starts.back();
  return p;
}

int RowPartition::owner(int64_t global_row) const {
  // The last start <= global_row; empty blocks (coarse levels) are skipped.
  const auto it = std::upper_bound(starts.begin(), starts.end() - 1, global_row);
  return static_cast<int>(it - starts.begin()) - 1;
}

}  // namespace jaxamg::dist
