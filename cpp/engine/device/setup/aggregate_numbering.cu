// Aggregate numbering on the device (host: amg/aggregation/aggregates.cc):
// aggregates take the rank of their label among the labels used, a prefix
// sum over one flag per label, so the numbering is the host's.
#include "backend/cuda/setup/launch.cuh"
#include "backend/cuda/setup/sort_segments.h"
#include "device/setup/device_aggregates.h"

namespace jaxamg::cuda {

namespace {

__global__ void flag_labels(Index n, const Index* label, Index* used) {
  const Index i = global_id();
  if (i < n) used[label[i]] = 1;  // every writer stores the same value
}

__global__ void number_nodes(Index n, const Index* label, const Index* id, Index* of) {
  const Index i = global_id();
  if (i < n) of[i] = id[label[i]];
}

__global__ void dummy_kernel(Index n, int size, Index* of) {
  const Index i = global_id();
  if (i < n) of[i] = i / size;
}

__global__ void compose_kernel(Index n, const Index* pass, Index* of) {
  const Index i = global_id();
  if (i < n) of[i] = pass[of[i]];
}

__global__ void count_members(Index n, const Index* of, Index* count) {
  const Index i = global_id();
  if (i < n) atomicAdd(&count[of[i]], 1);
}

}  // namespace

DeviceAggregates device_aggregates_from_labels(const DeviceArray<Index>& labels) {
  DeviceAggregates agg;
  agg.n = static_cast<Index>(labels.size());
  agg.of.resize(agg.n);
  DeviceArray<Index> id(static_cast<std::size_t>(agg.n) + 1);
  check(cudaMemsetAsync(id.data(), 0, id.size() * sizeof(Index)), "cudaMemsetAsync (labels)");
  if (agg.n > 0) {
    flag_labels<<<blocks(agg.n), kBlock>>>(agg.n, labels.data(), id.data());
    check_launch("flag_labels");
  }
  agg.count = exclusive_scan(id.data(), id.data(), agg.n);
  if (agg.n > 0) {
    number_nodes<<<blocks(agg.n), kBlock>>>(agg.n, labels.data(), id.data(), agg.of.data());
    check_launch("number_nodes");
  }
  return agg;
}

DeviceAggregates device_dummy_aggregates(Index n, int size) {
  DeviceAggregates agg;
  agg.n = n;
  agg.count = n == 0 ? 0 : (n - 1) / size + 1;
  agg.of.resize(n);
  if (n > 0) {
    dummy_kernel<<<blocks(n), kBlock>>>(n, size, agg.of.data());
    check_launch("dummy_kernel");
  }
  return agg;
}

void device_compose(DeviceAggregates& total, const DeviceAggregates& pass) {
  if (total.n > 0) {
    compose_kernel<<<blocks(total.n), kBlock>>>(total.n, pass.of.data(), total.of.data());
    check_launch("compose_kernel");
  }
  total.count = pass.count;
}

void device_list_members(DeviceAggregates& agg) {
  const Index n = agg.n;
  agg.ptr.resize(static_cast<std::size_t>(agg.count) + 1);
  check(cudaMemsetAsync(agg.ptr.data(), 0, agg.ptr.size() * sizeof(Index)), "cudaMemsetAsync");
  agg.members.resize(n);
  if (n == 0) return;
  count_members<<<blocks(n), kBlock>>>(n, agg.of.data(), agg.ptr.data());
  check_launch("count_members");
  exclusive_scan(agg.ptr.data(), agg.ptr.data(), agg.count);
  // Nodes sorted stably by aggregate: ascending within each aggregate.
  DeviceArray<Index> keys(n);
  check(cudaMemcpyAsync(keys.data(), agg.of.data(), n * sizeof(Index), cudaMemcpyDeviceToDevice),
        "cudaMemcpyAsync");
  iota(agg.members.data(), n);
  stable_sort_pairs(keys, agg.members, n, key_bits(static_cast<Key>(agg.count)));
}

}  // namespace jaxamg::cuda
