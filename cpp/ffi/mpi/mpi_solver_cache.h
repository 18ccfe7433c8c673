// The solver cache of the MPI handlers: an LRU of set-up distributed solvers
// and of halo plans for gathering columns, keyed by the local structure, the
// configuration, the value type, the block size and the communicator with
// its partition (the serial of the engine's duplicate of the communicator,
// size, row_start, nglobal).
//
// Whether an entry is set up, reset up with new values or reused is agreed
// by the processes (an allreduce), so that an entry evicted on one process
// only, or values that changed on one process only, never lead the
// processes into different collective steps.
//
// A setup (its halo plans, the rank-local AMG levels' exchanges) depends on
// every process's rows and pattern, not only on this one's: the key carries
// `layout`, a fingerprint of all processes' partition and structure
// (bind_layout). Without it a process whose block is unchanged would reuse
// a setup made for another partition of the same matrix while the others
// set up anew, and the processes' exchanges would no longer match.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "dist/communicator.h"
#include "dist/dist_linear_solver.h"
#include "../lru_cache.h"

namespace jaxamg::mpi_cache {

struct Key {
  uint64_t structure_hi = 0, structure_lo = 0;
  std::string config;  // empty for a gather plan
  bool is_double = true;
  int64_t block_dim = 1;
  // comm: dist::Communicator::serial(), unique per duplicate in this process.
  int64_t comm = 0, comm_size = 0, row_start = 0, nglobal = 0, n_local = 0, nnz = 0;
  uint64_t layout = 0;  // every process's block (bind_layout)
  bool operator==(const Key& o) const {
    return structure_hi == o.structure_hi && structure_lo == o.structure_lo &&
           config == o.config && is_double == o.is_double && block_dim == o.block_dim &&
           comm == o.comm && comm_size == o.comm_size && row_start == o.row_start &&
           nglobal == o.nglobal && n_local == o.n_local && nnz == o.nnz && layout == o.layout;
  }
};

// Sets key.layout from the (row_start, n_local, nnz, structure) of every
// process of comm, in rank order: the same value on every process.
// Collective (one allgather of one integer per process); call it after the
// local fields are set.
void bind_layout(Key& key, const dist::Communicator& comm);

// Columns of a distributed vector read by each stored entry: xc[k] =
// x_global[indices[k]], served from owned values and one halo exchange.
struct GatherPlan {
  std::unique_ptr<dist::HaloPlan> plan;
  std::vector<int32_t> slot;  // per stored entry: owned row, or n_local + ghost index
  int64_t n_local = 0;
};

struct Entry {
  explicit Entry(Key k) : key(std::move(k)) {}
  Key key;
  std::mutex mutex;
  std::unique_ptr<dist::DistLinearSolver<float>> f32;
  std::unique_ptr<dist::DistLinearSolver<double>> f64;
  std::unique_ptr<GatherPlan> gather;
  std::vector<unsigned char> values;  // values of the current setup, as bytes
  // A device copy of the current setup's trees, kept by the CUDA handler
  // (type-erased: this cache is built without CUDA too); reset with them.
  std::shared_ptr<void> device;
};

class Cache {
 public:
  static Cache& instance();
  std::shared_ptr<Entry> acquire(const Key& key) { return store_.acquire(key); }
  void clear() { store_.clear(); }
  // The keys of the stored entries, most recently used first.
  std::vector<Key> keys();
  std::size_t capacity() { return store_.capacity(); }

 private:
  Cache() = default;
  ffi_cache::LruStore<Entry> store_;
};

// The structure fingerprint is the single-process cache's
// (ffi_cache::fingerprint in ../solver_cache.h).

}  // namespace jaxamg::mpi_cache
