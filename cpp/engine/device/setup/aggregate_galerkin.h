// A_c = P^T A P for piecewise-constant P on the device (host:
// amg/aggregation/aggregate_galerkin.cc), in two steps:
//   symbolic: every fine entry a_ij gets the key (I, J) = (agg(i), agg(j));
//     a stable sort by key lists the entries of each coarse entry together,
//     in ascending fine position; the runs of equal keys are A_c's pattern
//     (sorted per row). The permutation and the run starts are kept.
//   numeric: one thread per coarse entry sums its run in that order. This is
//     the host's order of additions (members ascending, entries ascending),
//     so A_c is bitwise the host's, and no atomics decide the rounding. A
//     resetup with new values of the same pattern runs numeric() only.
#pragma once
#include "backend/cuda/device_array.h"
#include "device/setup/device_aggregates.h"

namespace jaxamg::cuda {

template <class T>
class DeviceGalerkin {
 public:
  // A_c's pattern (ptr: count + 1, col) for A's pattern and the aggregates.
  void symbolic(const DeviceCsrView<T>& A, const DeviceAggregates& agg, DeviceArray<Index>& ptr,
                DeviceArray<Index>& col);
  // A_c's values (coarse_nnz) from A's values (fine_nnz, the pattern given to symbolic()).
  void numeric(const T* fine_val, T* coarse_val) const;

  Index fine_nnz() const { return fine_nnz_; }
  Index coarse_nnz() const { return coarse_nnz_; }

 private:
  Index fine_nnz_ = 0, coarse_nnz_ = 0;
  DeviceArray<Index> perm_;   // fine_nnz: fine entries in coarse-entry order
  DeviceArray<Index> start_;  // coarse_nnz + 1: each coarse entry's run in perm_
};

}  // namespace jaxamg::cuda
