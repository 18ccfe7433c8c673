#include "mpi_solver_cache.h"

namespace jaxamg::mpi_cache {

Cache& Cache::instance() {
  // Leaked on purpose: nothing may run after MPI_Finalize at exit.
  static Cache* cache = new Cache();
  return *cache;
}

std::vector<Key> Cache::keys() {
  std::vector<Key> out;
  for (const auto& entry : store_.snapshot()) out.push_back(entry->key);
  return out;
}

}  // namespace jaxamg::mpi_cache
