#include "mpi_solver_cache.h"

#include <cstdlib>

namespace jaxamg::mpi_cache {

namespace {

// JAXAMG_CACHE_SIZE entries (default 8; 0 keeps nothing), as the serial cache.
std::size_t capacity_from_environment() {
  const char* env = std::getenv("JAXAMG_CACHE_SIZE");
  if (env == nullptr || *env == '\0') return 8;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || v < 0) return 8;
  return static_cast<std::size_t>(v);
}

uint64_t mix(uint64_t h, const void* data, std::size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

Cache::Cache() : capacity_(capacity_from_environment()) {}

Cache& Cache::instance() {
  // Leaked on purpose: nothing may run after MPI_Finalize at exit.
  static Cache* cache = new Cache();
  return *cache;
}

std::shared_ptr<Entry> Cache::acquire(const Key& key) {
  std::lock_guard<std::mutex> guard(mutex_);
  for (auto it = lru_.begin(); it != lru_.end(); ++it) {
    if ((*it)->key == key) {
      auto entry = *it;
      lru_.splice(lru_.begin(), lru_, it);
      return entry;
    }
  }
  auto entry = std::make_shared<Entry>(key);
  if (capacity_ == 0) return entry;
  lru_.push_front(entry);
  while (lru_.size() > capacity_) lru_.pop_back();
  return entry;
}

void Cache::clear() {
  std::list<std::shared_ptr<Entry>> dropped;
  std::lock_guard<std::mutex> guard(mutex_);
  dropped.swap(lru_);
}

std::vector<Key> Cache::keys() {
  std::lock_guard<std::mutex> guard(mutex_);
  std::vector<Key> out;
  out.reserve(lru_.size());
  for (const auto& entry : lru_) out.push_back(entry->key);
  return out;
}

void fingerprint(int64_t n, const int32_t* indptr, const int32_t* indices, int64_t nnz,
                 uint64_t* hi, uint64_t* lo) {
  uint64_t a = 1469598103934665603ull, b = 0x9e3779b97f4a7c15ull;
  a = mix(a, &n, sizeof n);
  b = mix(b, &nnz, sizeof nnz);
  a = mix(a, indptr, static_cast<std::size_t>(n + 1) * sizeof(int32_t));
  b = mix(b, indices, static_cast<std::size_t>(nnz) * sizeof(int32_t));
  a = mix(a, indices, static_cast<std::size_t>(nnz) * sizeof(int32_t));
  b = mix(b, indptr, static_cast<std::size_t>(n + 1) * sizeof(int32_t));
  *hi = a;
  *lo = b;
}

}  // namespace jaxamg::mpi_cache
