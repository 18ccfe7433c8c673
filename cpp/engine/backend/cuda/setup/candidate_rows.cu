#include "backend/cuda/setup/candidate_rows.h"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_segmented_sort.cuh>

#include "backend/cuda/setup/launch.cuh"
#include "backend/cuda/setup/sort_segments.h"
#include "core/error.h"

namespace jaxamg::cuda {

namespace {

__global__ void widen(Index n, const Index* __restrict__ in, long long* __restrict__ out) {
  const Index i = global_id();
  if (i < n) out[i] = in[i];
}

__device__ inline bool long_row(const Index* off, Index i) { return off[i + 1] - off[i] > kShortRow; }

// The long rows, listed (in any order) with their segments.
__global__ void list_long_rows(Index n, const Index* __restrict__ off, Index* __restrict__ rows,
                               Index* __restrict__ begin, Index* __restrict__ end,
                               Index* __restrict__ found) {
  const Index i = global_id();
  if (i >= n || !long_row(off, i)) return;
  const Index k = atomicAdd(found, 1);
  rows[k] = i;
  begin[k] = off[i];
  end[k] = off[i + 1];
}

__global__ void unique_rows(Index k_rows, const Index* __restrict__ rows,
                            const Index* __restrict__ off, Index* __restrict__ cand,
                            Index* __restrict__ count) {
  const Index k = global_id();
  if (k >= k_rows) return;
  const Index i = rows[k];
  const Index b = off[i], e = off[i + 1];
  Index m = 0;
  for (Index p = b; p < e; ++p) {
    const Index c = cand[p];
    if (c == kNoCandidate) break;
    if (m == 0 || cand[b + m - 1] != c) cand[b + m++] = c;
  }
  count[i] = m;
}

__global__ void pack_rows(Index n, const Index* __restrict__ off, const Index* __restrict__ cand,
                          const Index* __restrict__ ptr, Index* __restrict__ col) {
  const Index i = global_id();
  if (i >= n) return;
  for (Index u = 0; u < ptr[i + 1] - ptr[i]; ++u) col[ptr[i] + u] = cand[off[i] + u];
}

}  // namespace

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

void unique_candidate_rows(Index n, const Index* off, Index m, DeviceArray<Index>& cand,
                           Index* count) {
  if (n == 0 || m == 0) return;
  DeviceArray<Index> found(1);
  check(cudaMemsetAsync(found.data(), 0, sizeof(Index)), "cudaMemsetAsync (candidates)");
  DeviceArray<Index> rows(n), begin(n), end(n);
  list_long_rows<<<blocks(n), kBlock>>>(n, off, rows.data(), begin.data(), end.data(),
                                        found.data());
  check_launch("list_long_rows");
  Index k_rows = 0;
  check(cudaMemcpy(&k_rows, found.data(), sizeof(Index), cudaMemcpyDeviceToHost),
        "cudaMemcpy (candidates)");
  if (k_rows == 0) return;
  // The short rows keep their slots: the sort writes the long segments only.
  DeviceArray<Index> sorted(m);
  check(cudaMemcpyAsync(sorted.data(), cand.data(), m * sizeof(Index), cudaMemcpyDeviceToDevice),
        "cudaMemcpyAsync (candidates)");
  std::size_t bytes = 0;
  check(cub::DeviceSegmentedSort::SortKeys(nullptr, bytes, cand.data(), sorted.data(), m, k_rows,
                                           begin.data(), end.data()),
        "cub::DeviceSegmentedSort::SortKeys (size)");
  DeviceArray<unsigned char> temp(bytes > 0 ? bytes : 1);
  check(cub::DeviceSegmentedSort::SortKeys(temp.data(), bytes, cand.data(), sorted.data(), m,
                                           k_rows, begin.data(), end.data()),
        "cub::DeviceSegmentedSort::SortKeys");
  cand = std::move(sorted);
  unique_rows<<<blocks(k_rows), kBlock>>>(k_rows, rows.data(), off, cand.data(), count);
  check_launch("unique_rows");
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
