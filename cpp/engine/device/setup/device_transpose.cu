#include "device/setup/device_transpose.h"

#include "backend/cuda/setup/launch.cuh"
#include "backend/cuda/setup/sort_segments.h"

namespace jaxamg::cuda {

namespace {

__global__ void count_columns(Index nnz, const Index* col, Index* count) {
  const Index k = global_id();
  if (k < nnz) atomicAdd(count + col[k], 1);
}

// Entry k of A^T is entry perm[k] of A (sorted by column, stably).
template <class T>
__global__ void gather_transposed(Index nnz, const Index* perm, const Index* row, const T* val,
                                  Index* t_col, T* t_val) {
  const Index k = global_id();
  if (k >= nnz) return;
  const Index e = perm[k];
  t_col[k] = row[e];
  t_val[k] = val[e];
}

}  // namespace

template <class T>
void device_transpose(const DeviceCsrView<T>& A, Index cols, DeviceArray<Index>& ptr,
                      DeviceArray<Index>& col, DeviceArray<T>& val) {
  const Index nnz = A.nnz;
  ptr.resize(static_cast<std::size_t>(cols) + 1);
  check(cudaMemsetAsync(ptr.data(), 0, ptr.size() * sizeof(Index)), "cudaMemsetAsync (transpose)");
  col.resize(nnz > 0 ? nnz : 1);
  val.resize(nnz > 0 ? nnz : 1);
  if (nnz == 0) return;
  count_columns<<<blocks(nnz), kBlock>>>(nnz, A.col, ptr.data());
  check_launch("count_columns");
  exclusive_scan(ptr.data(), ptr.data(), cols);
  // A stable sort by column keeps the entries of a column in row order.
  DeviceArray<Index> key(nnz), perm(nnz), row(nnz);
  check(cudaMemcpyAsync(key.data(), A.col, nnz * sizeof(Index), cudaMemcpyDeviceToDevice),
        "cudaMemcpyAsync (transpose)");
  iota(perm.data(), nnz);
  stable_sort_pairs(key, perm, nnz, key_bits(cols > 1 ? static_cast<Key>(cols - 1) : 1));
  device_row_of_entries(A.rows, A.ptr, row.data());
  gather_transposed<T><<<blocks(nnz), kBlock>>>(nnz, perm.data(), row.data(), A.val, col.data(),
                                                val.data());
  check_launch("gather_transposed");
}

template void device_transpose(const DeviceCsrView<float>&, Index, DeviceArray<Index>&,
                               DeviceArray<Index>&, DeviceArray<float>&);
template void device_transpose(const DeviceCsrView<double>&, Index, DeviceArray<Index>&,
                               DeviceArray<Index>&, DeviceArray<double>&);

}  // namespace jaxamg::cuda
