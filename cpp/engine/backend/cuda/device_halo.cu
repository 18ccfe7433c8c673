#include "backend/cuda/device_halo.h"

#include <unordered_map>
#include <vector>

#include "backend/cuda/cuda_check.h"

namespace jaxamg::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(Index n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

template <class T>
__global__ void pack_kernel(Index n, const Index* rows, const T* x, T* out) {
  const Index k = static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
  if (k < n) out[k] = x[rows[k]];
}

template <class T>
__global__ void add_back_kernel(Index n, const Index* rows, const Index* ptr, const Index* slots,
                                const T* back, T* y) {
  const Index q = static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
  if (q >= n) return;
  T v = y[rows[q]];
  for (Index j = ptr[q]; j < ptr[q + 1]; ++j) v += back[slots[j]];
  y[rows[q]] = v;
}

}  // namespace

template <class T>
DeviceHalo<T>::DeviceHalo(const PackedHalo& halo, Index owned)
    : halo_(halo),
      owned_(owned),
      ghosts_(halo.num_ghosts()),
      sends_(static_cast<Index>(halo.send_rows().size())) {
  const std::vector<int32_t>& rows = halo.send_rows();
  send_rows_.assign(rows.data(), rows.size());
  // Group the send slots by row, rows in the order first seen.
  std::unordered_map<Index, Index> group;
  std::vector<std::vector<Index>> slots;
  std::vector<Index> unique_rows;
  for (Index s = 0; s < sends_; ++s) {
    auto it = group.find(rows[s]);
    if (it == group.end()) {
      it = group.emplace(rows[s], static_cast<Index>(unique_rows.size())).first;
      unique_rows.push_back(rows[s]);
      slots.emplace_back();
    }
    slots[it->second].push_back(s);
  }
  std::vector<Index> ptr{0}, flat;
  for (const auto& g : slots) {
    flat.insert(flat.end(), g.begin(), g.end());
    ptr.push_back(static_cast<Index>(flat.size()));
  }
  add_count_ = static_cast<Index>(unique_rows.size());
  add_rows_.assign(unique_rows.data(), unique_rows.size());
  add_ptr_.assign(ptr.data(), ptr.size());
  add_slots_.assign(flat.data(), flat.size());
  packed_.resize(static_cast<std::size_t>(sends_));
  if (sends_ > 0) {
    check(cudaMallocHost(reinterpret_cast<void**>(&host_send_), sends_ * sizeof(T)),
          "cudaMallocHost (halo send buffer)");
  }
  if (ghosts_ > 0) {
    check(cudaMallocHost(reinterpret_cast<void**>(&host_ghost_), ghosts_ * sizeof(T)),
          "cudaMallocHost (halo ghost buffer)");
  }
}

template <class T>
DeviceHalo<T>::~DeviceHalo() {
  if (host_send_) cudaFreeHost(host_send_);
  if (host_ghost_) cudaFreeHost(host_ghost_);
}

template <class T>
void DeviceHalo<T>::fill(const T* x, cudaStream_t s) const {
  if (!active()) return;
  if (sends_ > 0) {
    pack_kernel<T>
        <<<blocks_for(sends_), kThreads, 0, s>>>(sends_, send_rows_.data(), x, packed_.data());
    check_launch("halo pack");
    check(
        cudaMemcpyAsync(host_send_, packed_.data(), sends_ * sizeof(T), cudaMemcpyDeviceToHost, s),
        "cudaMemcpyAsync (halo values to host)");
  }
  // Also orders the last fill's upload of host_ghost_ before its reuse.
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize (halo exchange)");
  halo_.exchange_packed(host_send_, host_ghost_);
  if (ghosts_ > 0) {
    // The tail is scratch, not part of the vector's value.
    T* tail = const_cast<T*>(x) + owned_;
    check(cudaMemcpyAsync(tail, host_ghost_, ghosts_ * sizeof(T), cudaMemcpyHostToDevice, s),
          "cudaMemcpyAsync (ghost values to device)");
  }
}

template <class T>
void DeviceHalo<T>::reverse_add(T* y, cudaStream_t s) const {
  if (!active()) return;
  if (ghosts_ > 0) {
    check(cudaMemcpyAsync(host_ghost_, y + owned_, ghosts_ * sizeof(T), cudaMemcpyDeviceToHost, s),
          "cudaMemcpyAsync (partial sums to host)");
  }
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize (reverse halo exchange)");
  halo_.reverse_packed(host_ghost_, host_send_);
  if (sends_ > 0) {
    check(
        cudaMemcpyAsync(packed_.data(), host_send_, sends_ * sizeof(T), cudaMemcpyHostToDevice, s),
        "cudaMemcpyAsync (returned sums to device)");
    add_back_kernel<T><<<blocks_for(add_count_), kThreads, 0, s>>>(
        add_count_, add_rows_.data(), add_ptr_.data(), add_slots_.data(), packed_.data(), y);
    check_launch("halo add back");
    // host_send_ is rewritten by the next exchange: finish reading it.
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize (reverse halo exchange)");
  }
}

template class DeviceHalo<float>;
template class DeviceHalo<double>;

}  // namespace jaxamg::cuda
