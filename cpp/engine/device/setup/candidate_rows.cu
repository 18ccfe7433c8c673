#include "device/setup/candidate_rows.h"

#include <cub/device/device_reduce.cuh>

#include "backend/cuda/setup/launch.cuh"
#include "backend/cuda/setup/sort_segments.h"
#include "core/error.h"

namespace jaxamg::cuda {

namespace {

__global__ void widen(Index n, const Index* __restrict__ in, long long* __restrict__ out) {
  const Index i = global_id();
  if (i < n) out[i] = in[i];
}

__global__ void pack_rows(Index n, const Index* __restrict__ off, const Index* __restrict__ cand,
                          const Index* __restrict__ ptr, Index* __restrict__ col) {
  const Index i = global_id();
  if (i >= n) return;
  for (Index u = 0; u < ptr[i + 1] - ptr[i]; ++u) col[ptr[i] + u] = cand[off[i] + u];
}

template <class V>
__global__ void pack_weighted(Index n, const Index* __restrict__ off,
                              const Index* __restrict__ cand, const double* __restrict__ w,
                              const Index* __restrict__ ptr, Index* __restrict__ col,
                              V* __restrict__ val) {
  const Index i = global_id();
  if (i >= n) return;
  for (Index u = 0; u < ptr[i + 1] - ptr[i]; ++u) {
    col[ptr[i] + u] = cand[off[i] + u];
    val[ptr[i] + u] = static_cast<V>(w[off[i] + u]);
  }
}

}  // namespace

template <class V>
void pack_weighted_rows(Index n, const Index* off, const Index* cand, const double* w,
                        const Index* len, DeviceArray<Index>& ptr, DeviceArray<Index>& col,
                        DeviceArray<V>& val) {
  ptr.resize(static_cast<std::size_t>(n) + 1);
  Index nnz = 0;
  if (n > 0) {
    nnz = exclusive_scan(len, ptr.data(), n);
  } else {
    check(cudaMemsetAsync(ptr.data(), 0, sizeof(Index)), "cudaMemsetAsync (rows)");
  }
  col.resize(nnz > 0 ? nnz : 1);
  val.resize(nnz > 0 ? nnz : 1);
  if (n > 0) {
    pack_weighted<V><<<blocks(n), kBlock>>>(n, off, cand, w, ptr.data(), col.data(), val.data());
    check_launch("pack_weighted");
  }
}

template void pack_weighted_rows(Index, const Index*, const Index*, const double*, const Index*,
                                 DeviceArray<Index>&, DeviceArray<Index>&, DeviceArray<float>&);
template void pack_weighted_rows(Index, const Index*, const Index*, const double*, const Index*,
                                 DeviceArray<Index>&, DeviceArray<Index>&, DeviceArray<double>&);

Index candidate_offsets(Index* off, Index n, const std::string& what) {
  if (n == 0) {
    check(cudaMemsetAsync(off, 0, sizeof(Index)), "cudaMemsetAsync (candidates)");
    return 0;
  }
  // The total in 64 bits first: the offsets themselves are 32-bit.
  DeviceArray<long long> wide(n), total(1);
  widen<<<blocks(n), kBlock>>>(n, off, wide.data());
  check_launch("widen");
  std::size_t bytes = 0;
  check(cub::DeviceReduce::Sum(nullptr, bytes, wide.data(), total.data(), n),
        "cub::DeviceReduce::Sum (size)");
  DeviceArray<unsigned char> temp(bytes > 0 ? bytes : 1);
  check(cub::DeviceReduce::Sum(temp.data(), bytes, wide.data(), total.data(), n),
        "cub::DeviceReduce::Sum");
  long long slots = 0;
  check(cudaMemcpy(&slots, total.data(), sizeof(slots), cudaMemcpyDeviceToHost),
        "cudaMemcpy (candidates)");
  if (slots > static_cast<long long>(INT_MAX)) {
    throw SetupError("device classical setup: " + what + " of a level of " + std::to_string(n) +
                     " rows needs " + std::to_string(slots) +
                     " candidate entries, more than 32-bit offsets address; use the host setup "
                     "(JAXAMG_GPU_SETUP=host) or aggregation AMG");
  }
  return exclusive_scan(off, off, n);
}

Index pack_candidate_rows(Index n, const Index* off, const Index* cand, const Index* count,
                          DeviceArray<Index>& ptr, DeviceArray<Index>& col) {
  ptr.resize(static_cast<std::size_t>(n) + 1);
  const Index nnz = exclusive_scan(count, ptr.data(), n);
  col.resize(nnz > 0 ? nnz : 1);
  if (n > 0) {
    pack_rows<<<blocks(n), kBlock>>>(n, off, cand, ptr.data(), col.data());
    check_launch("pack_rows (candidates)");
  }
  return nnz;
}

}  // namespace jaxamg::cuda
