// The LRU store behind the native solver caches (solver_cache.h for the
// single-process handlers, mpi/mpi_solver_cache.h for the MPI handlers):
// entries keyed by an `Entry::key` compared with ==, most recently used
// first, at most `capacity` of them (JAXAMG_CACHE_SIZE, default 8; 0 keeps
// nothing: isolated mode).
//
// Callers hold the shared_ptr of an entry while they use it, so an entry
// evicted or cleared meanwhile stays alive until they are done; dropped
// entries are destroyed after the store's lock is released, so freeing a
// large hierarchy never holds up solves that acquire other entries.
#pragma once
#include <cstdlib>
#include <iterator>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

namespace jaxamg::ffi_cache {

// JAXAMG_CACHE_SIZE, or 8 when unset or not a non-negative integer.
inline std::size_t capacity_from_environment() {
  const char* env = std::getenv("JAXAMG_CACHE_SIZE");
  if (env == nullptr || *env == '\0') return 8;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (end == env || *end != '\0' || v < 0) return 8;
  return static_cast<std::size_t>(v);
}

template <class Entry>
class LruStore {
 public:
  using Key = decltype(Entry::key);

  LruStore() : capacity_(capacity_from_environment()) {}

  // The entry for `key`, created empty on a miss (evicting the least
  // recently used entries beyond the capacity). With capacity 0 the entry is
  // not stored.
  std::shared_ptr<Entry> acquire(const Key& key) {
    std::list<std::shared_ptr<Entry>> evicted;  // destroyed after the lock
    std::lock_guard<std::mutex> guard(mutex_);
    for (auto it = lru_.begin(); it != lru_.end(); ++it) {
      if ((*it)->key == key) {
        lru_.splice(lru_.begin(), lru_, it);
        return lru_.front();
      }
    }
    auto entry = std::make_shared<Entry>(key);
    if (capacity_ == 0) return entry;
    lru_.push_front(entry);
    trim(evicted);
    return entry;
  }

  // Drops every entry; solves in progress finish on the entry they hold.
  void clear() {
    std::list<std::shared_ptr<Entry>> dropped;
    std::lock_guard<std::mutex> guard(mutex_);
    dropped.swap(lru_);
  }

  // The stored entries, most recently used first (the caller may lock each
  // one afterwards: the store's lock is released by then).
  std::vector<std::shared_ptr<Entry>> snapshot() {
    std::lock_guard<std::mutex> guard(mutex_);
    return {lru_.begin(), lru_.end()};
  }

  std::size_t capacity() {
    std::lock_guard<std::mutex> guard(mutex_);
    return capacity_;
  }

  void set_capacity(std::size_t capacity) {
    std::list<std::shared_ptr<Entry>> evicted;
    std::lock_guard<std::mutex> guard(mutex_);
    capacity_ = capacity;
    trim(evicted);
  }

 private:
  // Moves the entries beyond the capacity to `out` (under mutex_).
  void trim(std::list<std::shared_ptr<Entry>>& out) {
    while (lru_.size() > capacity_) {
      out.splice(out.begin(), lru_, std::prev(lru_.end()));
    }
  }

  std::mutex mutex_;
  std::list<std::shared_ptr<Entry>> lru_;  // front: most recently used
  std::size_t capacity_;
};

}  // namespace jaxamg::ffi_cache
