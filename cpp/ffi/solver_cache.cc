#include "solver_cache.h"

#include <cstdlib>
#include <string>

namespace jaxamg::ffi_cache {

namespace {

// JAXAMG_CACHE_SIZE entries (default 8; 0 = isolated mode, no reuse).
std::size_t capacity_from_environment() {
  const char* env = std::getenv("JAXAMG_CACHE_SIZE");
  if (env == nullptr || *env == '\0') return 8;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || v < 0) return 8;
  return static_cast<std::size_t>(v);
}

}  // namespace

SolverCache::SolverCache() : capacity_(capacity_from_environment()) {}

SolverCache& SolverCache::instance() {
  // Leaked on purpose: no destructor may run after the interpreter is gone.
  static SolverCache* cache = new SolverCache();
  return *cache;
}

std::shared_ptr<Entry> SolverCache::acquire(const CacheKey& key) {
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
  while (lru_.size() > capacity_) lru_.pop_back();  // in-flight users keep their shared_ptr
  return entry;
}

void SolverCache::clear() {
  // Destroy the solvers after releasing the lock: freeing a large hierarchy
  // must not hold up solves that acquire other entries.
  std::list<std::shared_ptr<Entry>> dropped;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    dropped.swap(lru_);
  }
}

std::vector<EntryInfo> SolverCache::entries() {
  std::vector<std::shared_ptr<Entry>> snapshot;
  {
    std::lock_guard<std::mutex> guard(mutex_);
    snapshot.assign(lru_.begin(), lru_.end());
  }
  std::vector<EntryInfo> out;
  for (const auto& e : snapshot) {
    std::lock_guard<std::mutex> eg(e->mutex);
    out.push_back({e->key, e->transposed_used, e->setups, e->resetups, e->reuses});
  }
  return out;
}

std::size_t SolverCache::capacity() {
  std::lock_guard<std::mutex> guard(mutex_);
  return capacity_;
}

void SolverCache::set_capacity(std::size_t capacity) {
  std::lock_guard<std::mutex> guard(mutex_);
  capacity_ = capacity;
  while (lru_.size() > capacity_) lru_.pop_back();
}

namespace {
std::mutex& stats_mutex() {
  static std::mutex* m = new std::mutex();
  return *m;
}
std::string& stats_text() {
  static std::string* s = new std::string();
  return *s;
}
}  // namespace

void append_stats_text(const std::string& text) {
  std::lock_guard<std::mutex> guard(stats_mutex());
  stats_text() += text;
}

std::string take_stats_text() {
  std::lock_guard<std::mutex> guard(stats_mutex());
  std::string out;
  out.swap(stats_text());
  return out;
}

void fingerprint(int64_t n, const int32_t* indptr, const int32_t* indices, int64_t nnz,
                 uint64_t* hi, uint64_t* lo) {
  // Two independent 64-bit FNV-1a style streams over 32-bit words.
  uint64_t a = 1469598103934665603ull ^ static_cast<uint64_t>(n);
  uint64_t b = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(nnz);
  auto mix = [&](uint32_t w) {
    a = (a ^ w) * 1099511628211ull;
    b = (b ^ (w + 0x7f4a7c15u)) * 0x100000001b3ull;
    b ^= b >> 29;
  };
  for (int64_t i = 0; i <= n; ++i) mix(static_cast<uint32_t>(indptr[i]));
  for (int64_t k = 0; k < nnz; ++k) mix(static_cast<uint32_t>(indices[k]));
  *hi = a;
  *lo = b;
}

void fingerprint_bytes(const void* data, std::size_t bytes, uint64_t* hi, uint64_t* lo) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t a = 1469598103934665603ull ^ static_cast<uint64_t>(bytes);
  uint64_t b = 0x9e3779b97f4a7c15ull;
  for (std::size_t i = 0; i < bytes; ++i) {
    a = (a ^ p[i]) * 1099511628211ull;
    b = (b ^ (p[i] + 0x7f4a7c15u)) * 0x100000001b3ull;
    b ^= b >> 29;
  }
  *hi = a;
  *lo = b;
}

}  // namespace jaxamg::ffi_cache
