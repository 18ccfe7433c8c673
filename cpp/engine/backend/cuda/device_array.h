// Owning device allocations (cudaMalloc / cudaFree) for the CUDA backend.
#pragma once
#include <atomic>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/cuda_check.h"

namespace jaxamg::cuda {

// Bytes held by all live DeviceArrays of this module: what the solver cache
// keeps on the device (clearing the cache brings it back to zero).
inline std::atomic<long long>& live_device_bytes() {
  static std::atomic<long long> bytes{0};
  return bytes;
}

// The most that live_device_bytes() has reached since the last reset:
// reset before a setup and read after it, a setup's peak, scratch included.
inline std::atomic<long long>& peak_device_bytes() {
  static std::atomic<long long> bytes{0};
  return bytes;
}

// Names the request and the device's free memory, so that an out-of-memory
// failure tells how far the request was from fitting.
inline std::string allocation_failure(std::size_t bytes) {
  std::size_t free_bytes = 0, total_bytes = 0;
  cudaGetLastError();  // the failed allocation's error, already reported by the caller
  cudaMemGetInfo(&free_bytes, &total_bytes);
  const auto mib = [](std::size_t b) { return std::to_string(b / (1ull << 20)) + " MiB"; };
  return "cudaMalloc of " + mib(bytes) + " (" + mib(free_bytes) + " free of " + mib(total_bytes) +
         ", " + mib(static_cast<std::size_t>(live_device_bytes().load())) + " held by jaxamg)";
}

template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) { resize(n); }
  ~DeviceArray() { release(); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : ptr_(o.ptr_), size_(o.size_) {
    o.ptr_ = nullptr;
    o.size_ = 0;
  }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }

  // Discards the contents.
  void resize(std::size_t n) {
    if (n == size_) return;
    release();
    if (n > 0) {
      const cudaError_t status = cudaMalloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T));
      if (status != cudaSuccess) check(status, allocation_failure(n * sizeof(T)).c_str());
      const long long now = live_device_bytes() += static_cast<long long>(n * sizeof(T));
      long long peak = peak_device_bytes().load();
      while (now > peak && !peak_device_bytes().compare_exchange_weak(peak, now)) {
      }
    }
    size_ = n;
  }
  // Synchronous upload (setup only).
  void assign(const T* host, std::size_t n) {
    resize(n);
    if (n > 0)
      check(cudaMemcpy(ptr_, host, n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  }
  // Any contiguous host container of T (std::vector, the engine's CSR arrays).
  template <class Container>
  void assign(const Container& host) {
    assign(host.data(), host.size());
  }

  T* data() { return ptr_; }
  const T* data() const { return ptr_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  void release() {
    if (ptr_) {
      cudaFree(ptr_);  // never throws: called from destructors
      live_device_bytes() -= static_cast<long long>(size_ * sizeof(T));
    }
    ptr_ = nullptr;
    size_ = 0;
  }
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace jaxamg::cuda
