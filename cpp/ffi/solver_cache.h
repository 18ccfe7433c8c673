// The native solver cache: an LRU of set-up solvers keyed by the sparsity
// structure, the configuration, the value type and the block size. An
// unchanged matrix is never set up twice: the forward and adjoint solves of
// one gradient share an entry (the adjoint is a transposed solve of the same
// setup), and a repeated solve with new values on the same pattern is a
// resetup that keeps the coarsening.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "lru_cache.h"

namespace jaxamg::ffi_cache {

struct CacheKey {
  uint64_t structure_hi = 0;  // 128-bit fingerprint of (n, indptr, indices)
  uint64_t structure_lo = 0;
  std::string config;         // canonical config text
  bool is_double = true;
  int64_t block_dim = 1;
  int64_t n_rows = 0;
  int64_t nnz = 0;
  int device = -1;            // CUDA device ordinal; -1 on the host
  // Near-null-space vectors (jaxamg_solve_nns): count and 128-bit fingerprint.
  int64_t near_nullspace_cols = 0;
  uint64_t near_nullspace_hi = 0, near_nullspace_lo = 0;

  bool operator==(const CacheKey& o) const {
    return structure_hi == o.structure_hi && structure_lo == o.structure_lo &&
           is_double == o.is_double && block_dim == o.block_dim && n_rows == o.n_rows &&
           nnz == o.nnz && config == o.config && device == o.device &&
           near_nullspace_cols == o.near_nullspace_cols &&
           near_nullspace_hi == o.near_nullspace_hi && near_nullspace_lo == o.near_nullspace_lo;
  }
};

// One cached solver. Callers hold the shared_ptr while they use it (so an
// entry evicted or cleared meanwhile stays alive until they are done) and
// lock `mutex` for the whole setup+solve.
struct Entry {
  explicit Entry(CacheKey k) : key(std::move(k)) {}
  CacheKey key;
  std::mutex mutex;
  std::unique_ptr<LinearSolver<float>> f32;
  std::unique_ptr<LinearSolver<double>> f64;
  std::vector<unsigned char> values;  // the values of the current setup, as bytes
  bool transposed_used = false;
  int64_t setups = 0;    // full setups
  int64_t resetups = 0;  // value changes handled with structure reuse
  int64_t reuses = 0;    // calls served without any setup work
  // Backend state that lives as long as the entry (the CUDA handler's
  // device copy of the hierarchy); owned here so eviction frees it.
  std::shared_ptr<void> device_state;
};

struct EntryInfo {
  CacheKey key;
  bool transposed_used;
  int64_t setups, resetups, reuses;
};

class SolverCache {
 public:
  static SolverCache& instance();

  // The entry for `key`, created empty on a miss (see LruStore).
  std::shared_ptr<Entry> acquire(const CacheKey& key) { return store_.acquire(key); }
  // Drops every entry; solves in progress finish on the entry they hold.
  void clear() { store_.clear(); }
  // A snapshot of the entries, most recently used first. Waits for solves in
  // progress on an entry (its counters change under the entry's mutex) but
  // never blocks acquire/clear meanwhile.
  std::vector<EntryInfo> entries();
  std::size_t capacity() { return store_.capacity(); }
  void set_capacity(std::size_t capacity) { store_.set_capacity(capacity); }
  // Totals over the life of the process (entries come and go). Atomic, not
  // under the store's lock: a solve counts its setup while it holds an
  // entry's mutex, and `entries()` must never wait for an entry while
  // holding the store's lock (that lock order would deadlock against a
  // solve in progress).
  int64_t total_setups() const { return total_setups_.load(); }
  void count_setup() { ++total_setups_; }

 private:
  SolverCache() = default;
  LruStore<Entry> store_;
  std::atomic<int64_t> total_setups_{0};
};

// AmgX-layout statistics printed by solves whose config asked for them,
// collected for Python's save_stats_file (taken and cleared by Python).
void append_stats_text(const std::string& text);
std::string take_stats_text();

// 128-bit fingerprint of a CSR structure (used when Python could not compute
// it at trace time because the indices were traced).
void fingerprint(int64_t n, const int32_t* indptr, const int32_t* indices, int64_t nnz,
                 uint64_t* hi, uint64_t* lo);
// 128-bit fingerprint of a byte string (the near-null-space vectors).
void fingerprint_bytes(const void* data, std::size_t bytes, uint64_t* hi, uint64_t* lo);

}  // namespace jaxamg::ffi_cache
