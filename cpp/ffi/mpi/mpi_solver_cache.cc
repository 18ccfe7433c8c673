#include "mpi_solver_cache.h"

namespace jaxamg::mpi_cache {

Cache& Cache::instance() {
  // Leaked on purpose: nothing may run after MPI_Finalize at exit.
  static Cache* cache = new Cache();
  return *cache;
}

namespace {

// splitmix64's finalizer: a well-mixed 64-bit hash step.
uint64_t mix(uint64_t h, uint64_t v) {
  uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

void bind_layout(Key& key, const dist::Communicator& comm) {
  uint64_t local = 0;
  for (uint64_t v : {static_cast<uint64_t>(key.row_start), static_cast<uint64_t>(key.n_local),
                     static_cast<uint64_t>(key.nnz), key.structure_hi, key.structure_lo}) {
    local = mix(local, v);
  }
  uint64_t layout = 0;
  for (int64_t v : comm.allgather(static_cast<int64_t>(local))) {
    layout = mix(layout, static_cast<uint64_t>(v));
  }
  key.layout = layout;
}

std::vector<Key> Cache::keys() {
  std::vector<Key> out;
  for (const auto& entry : store_.snapshot()) out.push_back(entry->key);
  return out;
}

}  // namespace jaxamg::mpi_cache
