#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "backend/cuda/setup/launch.cuh"
#include "backend/cuda/setup/sort_segments.h"

namespace jaxamg::cuda {

namespace {

template <class K>
void sort_pairs(DeviceArray<K>& keys, DeviceArray<Index>& values, Index m, int bits) {
  if (m <= 1) return;
  DeviceArray<K> keys_out(m);
  DeviceArray<Index> values_out(m);
  std::size_t bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys.data(), keys_out.data(),
                                        values.data(), values_out.data(), m, 0, bits),
        "cub::DeviceRadixSort::SortPairs (size)");
  DeviceArray<unsigned char> temp(bytes > 0 ? bytes : 1);
  check(cub::DeviceRadixSort::SortPairs(temp.data(), bytes, keys.data(), keys_out.data(),
                                        values.data(), values_out.data(), m, 0, bits),
        "cub::DeviceRadixSort::SortPairs");
  // Only the first m entries are sorted; callers size the arrays to m.
  keys = std::move(keys_out);
  values = std::move(values_out);
}

__global__ void iota_kernel(Index* v, Index m) {
  const Index k = global_id();
  if (k < m) v[k] = k;
}

__global__ void run_heads(const Key* sorted, Index m, Index* head) {
  const Index p = global_id();
  if (p < m) head[p] = (p == 0 || sorted[p] != sorted[p - 1]) ? 1 : 0;
}

// head holds the exclusive scan of the run-head flags: run number of p.
__global__ void run_starts(const Key* sorted, Index m, const Index* run, Index* start, Key* key) {
  const Index p = global_id();
  if (p >= m) return;
  if (p == 0 || sorted[p] != sorted[p - 1]) {
    start[run[p]] = p;
    key[run[p]] = sorted[p];
  }
}

__global__ void set_last(Index* a, Index pos, Index value) { a[pos] = value; }

__global__ void count_rows(const Key* key, Index count, Key cols, Index* rows_count, Index* col) {
  const Index s = global_id();
  if (s >= count) return;
  atomicAdd(&rows_count[key[s] / cols], 1);
  col[s] = static_cast<Index>(key[s] % cols);
}

}  // namespace

int key_bits(Key max_key) {
  int b = 1;
  while (b < 64 && (max_key >> b) != 0) ++b;
  return b;
}

void stable_sort_pairs(DeviceArray<Key>& keys, DeviceArray<Index>& values, Index m, int bits) {
  sort_pairs(keys, values, m, bits);
}
void stable_sort_pairs(DeviceArray<Index>& keys, DeviceArray<Index>& values, Index m, int bits) {
  sort_pairs(keys, values, m, bits);
}

void iota(Index* values, Index m) {
  if (m == 0) return;
  iota_kernel<<<blocks(m), kBlock>>>(values, m);
  check_launch("iota_kernel");
}

Index exclusive_scan(const Index* counts, Index* ptr, Index n) {
  // Scan n + 1 items with a zero appended, so ptr[n] is the total.
  DeviceArray<Index> in(static_cast<std::size_t>(n) + 1);
  check(cudaMemsetAsync(in.data() + n, 0, sizeof(Index)), "cudaMemsetAsync (scan)");
  if (n > 0) {
    check(cudaMemcpyAsync(in.data(), counts, n * sizeof(Index), cudaMemcpyDeviceToDevice),
          "cudaMemcpyAsync (scan)");
  }
  std::size_t bytes = 0;
  check(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in.data(), ptr, n + 1),
        "cub::DeviceScan::ExclusiveSum (size)");
  DeviceArray<unsigned char> temp(bytes > 0 ? bytes : 1);
  check(cub::DeviceScan::ExclusiveSum(temp.data(), bytes, in.data(), ptr, n + 1),
        "cub::DeviceScan::ExclusiveSum");
  Index total = 0;
  check(cudaMemcpy(&total, ptr + n, sizeof(Index), cudaMemcpyDeviceToHost), "cudaMemcpy (scan total)");
  return total;
}

KeySegments key_segments(const Key* sorted, Index m) {
  KeySegments seg;
  if (m == 0) {
    seg.start.resize(1);
    set_last<<<1, 1>>>(seg.start.data(), 0, 0);
    check_launch("set_last");
    return seg;
  }
  DeviceArray<Index> run(static_cast<std::size_t>(m) + 1);
  run_heads<<<blocks(m), kBlock>>>(sorted, m, run.data());
  check_launch("run_heads");
  seg.count = exclusive_scan(run.data(), run.data(), m);
  seg.start.resize(static_cast<std::size_t>(seg.count) + 1);
  seg.key.resize(seg.count);
  run_starts<<<blocks(m), kBlock>>>(sorted, m, run.data(), seg.start.data(), seg.key.data());
  check_launch("run_starts");
  set_last<<<1, 1>>>(seg.start.data(), seg.count, m);
  check_launch("set_last");
  return seg;
}

void segment_rows(const KeySegments& seg, Key cols, Index rows, DeviceArray<Index>& ptr,
                  DeviceArray<Index>& col) {
  ptr.resize(static_cast<std::size_t>(rows) + 1);
  col.resize(seg.count);
  check(cudaMemsetAsync(ptr.data(), 0, (static_cast<std::size_t>(rows) + 1) * sizeof(Index)),
        "cudaMemsetAsync (segment rows)");
  if (seg.count > 0) {
    // Integer counts: the atomics' order does not change the result.
    count_rows<<<blocks(seg.count), kBlock>>>(seg.key.data(), seg.count, cols, ptr.data(),
                                              col.data());
    check_launch("count_rows");
  }
  exclusive_scan(ptr.data(), ptr.data(), rows);
}

}  // namespace jaxamg::cuda
