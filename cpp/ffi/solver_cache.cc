#include "solver_cache.h"

#include <string>

namespace jaxamg::ffi_cache {

SolverCache& SolverCache::instance() {
  // Leaked on purpose: no destructor may run after the interpreter is gone.
  static SolverCache* cache = new SolverCache();
  return *cache;
}

std::vector<EntryInfo> SolverCache::entries() {
  const auto snapshot = store_.snapshot();
  std::vector<EntryInfo> out;
  for (const auto& e : snapshot) {
    std::lock_guard<std::mutex> eg(e->mutex);
    out.push_back({e->key, e->transposed_used, e->setups, e->resetups, e->reuses});
  }
  return out;
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
