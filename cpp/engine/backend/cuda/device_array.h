// Owning device allocations (cudaMalloc / cudaFree) for the CUDA backend.
#pragma once
#include <atomic>
#include <cstddef>
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
      check(cudaMalloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T)), "cudaMalloc");
      live_device_bytes() += static_cast<long long>(n * sizeof(T));
    }
    size_ = n;
  }
  // Synchronous upload (setup only).
  void assign(const T* host, std::size_t n) {
    resize(n);
    if (n > 0) check(cudaMemcpy(ptr_, host, n * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy H2D");
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
