// Sparse matrix products on the device with cuSPARSE's SpGEMM, for the
// Galerkin product of a hierarchy whose P is not an aggregation (classical
// AMG): A_c = R (A P). The products run on the default stream with
// cuSPARSE's deterministic default algorithm; their rows come back with
// columns ascending (sorted here if cuSPARSE leaves them unsorted), the
// canonical form the next level's setup reads.
#pragma once
#include <cusparse.h>

#include "backend/cuda/device_array.h"
#include "device/setup/device_aggregates.h"

namespace jaxamg::cuda {

// C = A B with A (A.rows x a_cols) and B (a_cols x b_cols); fills C's arrays.
// `chunked` forms the product in chunks from the start (the path taken when
// the default algorithm runs out of scratch memory; tests select it).
template <class T>
void device_spgemm(cusparseHandle_t handle, const DeviceCsrView<T>& A, Index a_cols,
                   const DeviceCsrView<T>& B, Index b_cols, DeviceArray<Index>& ptr,
                   DeviceArray<Index>& col, DeviceArray<T>& val, bool chunked = false);

// A_c = R A P (R: nc x n, A: n x n, P: n x nc).
template <class T>
void device_galerkin(cusparseHandle_t handle, const DeviceCsrView<T>& R,
                     const DeviceCsrView<T>& A, const DeviceCsrView<T>& P, Index nc,
                     DeviceArray<Index>& ptr, DeviceArray<Index>& col, DeviceArray<T>& val);

}  // namespace jaxamg::cuda
