// A^T of a device CSR matrix (host: core/csr_matrix transpose), for the
// hierarchy of an adjoint solve: row j of A^T lists the entries of column j
// of A in ascending row order, so the result equals the host's transpose
// entry for entry. Runs on the default stream, as the rest of the setup.
#pragma once
#include "backend/cuda/device_array.h"
#include "device/setup/device_aggregates.h"

namespace jaxamg::cuda {

// A is rows x cols; fills ptr (cols + 1), col and val (A.nnz) with A^T.
template <class T>
void device_transpose(const DeviceCsrView<T>& A, Index cols, DeviceArray<Index>& ptr,
                      DeviceArray<Index>& col, DeviceArray<T>& val);

}  // namespace jaxamg::cuda
