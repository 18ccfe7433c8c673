#include "device/setup/aggregate_galerkin.h"

#include <string>

#include "backend/cuda/setup/launch.cuh"
#include "backend/cuda/setup/sort_segments.h"
#include "core/error.h"

namespace jaxamg::cuda {

namespace {

__global__ void galerkin_keys(Index nnz, const Index* row, const Index* col, const Index* of,
                              Key nc, Key* key, Index* perm) {
  const Index k = global_id();
  if (k >= nnz) return;
  key[k] = static_cast<Key>(of[row[k]]) * nc + static_cast<Key>(of[col[k]]);
  perm[k] = k;
}

template <class T>
__global__ void galerkin_sums(Index runs, const Index* start, const Index* perm, const T* a,
                              T* out) {
  const Index s = global_id();
  if (s >= runs) return;
  T acc = T(0);
  for (Index q = start[s]; q < start[s + 1]; ++q) acc += a[perm[q]];
  out[s] = acc;
}

}  // namespace

template <class T>
void DeviceGalerkin<T>::symbolic(const DeviceCsrView<T>& A, const DeviceAggregates& agg,
                                 DeviceArray<Index>& ptr, DeviceArray<Index>& col) {
  if (A.rows != agg.n) {
    throw InvalidInput("aggregate Galerkin product: A has " + std::to_string(A.rows) +
                       " rows but the aggregates cover " + std::to_string(agg.n) +
                       " nodes; build the aggregates from this matrix");
  }
  const Index nnz = A.nnz;
  const Key nc = static_cast<Key>(agg.count);
  DeviceArray<Key> key(nnz > 0 ? nnz : 1);
  perm_.resize(nnz > 0 ? nnz : 1);
  if (nnz > 0) {
    DeviceArray<Index> row(nnz);
    device_row_of_entries(A.rows, A.ptr, row.data());
    galerkin_keys<<<blocks(nnz), kBlock>>>(nnz, row.data(), A.col, agg.of.data(), nc, key.data(),
                                           perm_.data());
    check_launch("galerkin_keys");
    stable_sort_pairs(key, perm_, nnz, key_bits(nc * nc));
  }
  KeySegments seg = key_segments(key.data(), nnz);
  segment_rows(seg, nc > 0 ? nc : 1, agg.count, ptr, col);
  start_ = std::move(seg.start);
  fine_nnz_ = nnz;
  coarse_nnz_ = seg.count;
}

template <class T>
void DeviceGalerkin<T>::numeric(const T* fine_val, T* coarse_val) const {
  if (coarse_nnz_ == 0) return;
  galerkin_sums<T><<<blocks(coarse_nnz_), kBlock>>>(coarse_nnz_, start_.data(), perm_.data(),
                                                    fine_val, coarse_val);
  check_launch("galerkin_sums");
}

template class DeviceGalerkin<float>;
template class DeviceGalerkin<double>;

}  // namespace jaxamg::cuda
