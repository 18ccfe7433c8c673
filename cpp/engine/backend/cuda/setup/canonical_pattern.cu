#include "backend/cuda/setup/canonical_pattern.h"

#include "backend/cuda/device_array.h"
#include "backend/cuda/setup/launch.cuh"

namespace jaxamg::cuda {

namespace {

// One thread per row; any violation sets *bad.
__global__ void pattern_kernel(Index rows, Index cols, const Index* ptr, Index nnz,
                               const Index* col, int* bad) {
  const Index i = global_id();
  if (i >= rows) return;
  const Index begin = ptr[i], end = ptr[i + 1];
  bool ok = begin <= end && begin >= 0 && end <= nnz;
  if (i == 0) ok = ok && begin == 0;
  if (i == rows - 1) ok = ok && end == nnz;
  for (Index k = begin; ok && k < end; ++k) {
    const Index j = col[k];
    ok = j >= 0 && j < cols && (k == begin || col[k - 1] < j);
  }
  if (!ok) atomicExch(bad, 1);
}

}  // namespace

bool device_pattern_is_canonical(Index rows, Index cols, const Index* ptr, Index nnz,
                                 const Index* col, cudaStream_t stream) {
  if (rows <= 0) return false;
  DeviceArray<int> bad(1);
  check(cudaMemsetAsync(bad.data(), 0, sizeof(int), stream), "cudaMemsetAsync (pattern check)");
  pattern_kernel<<<blocks(static_cast<std::size_t>(rows)), kBlock, 0, stream>>>(
      rows, cols, ptr, nnz, col, bad.data());
  check_launch("pattern_kernel");
  int h = 0;
  check(cudaMemcpyAsync(&h, bad.data(), sizeof(int), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (pattern check)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (pattern check)");
  return h == 0;
}

}  // namespace jaxamg::cuda
