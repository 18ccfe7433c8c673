// A CSR matrix on the device with its cuSPARSE descriptor and the SpMV
// workspace, both made once at upload so that a product allocates nothing.
#pragma once
#include <cusparse.h>

#include "backend/cuda/device_array.h"
#include "core/csr_matrix.h"

namespace jaxamg::cuda {

template <class T>
class DeviceCsr {
 public:
  DeviceCsr() = default;
  ~DeviceCsr();
  DeviceCsr(const DeviceCsr&) = delete;
  DeviceCsr& operator=(const DeviceCsr&) = delete;
  DeviceCsr(DeviceCsr&&) noexcept;
  DeviceCsr& operator=(DeviceCsr&&) = delete;

  // Copies A to the device and sizes the SpMV buffer with `handle`.
  void upload(cusparseHandle_t handle, const CsrMatrix<T>& A);
  // y = alpha A x + beta y on the handle's stream.
  void spmv(cusparseHandle_t handle, T alpha, const T* x, T beta, T* y) const;

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  Index nnz() const { return static_cast<Index>(col_.size()); }
  bool empty() const { return rows_ == 0; }
  // Bytes one SpMV reads and writes at least (values, indices, x, y).
  double spmv_bytes() const;

 private:
  Index rows_ = 0, cols_ = 0;
  DeviceArray<Index> row_ptr_, col_;
  DeviceArray<T> val_;
  DeviceArray<unsigned char> buffer_;
  cusparseSpMatDescr_t descr_ = nullptr;
};

}  // namespace jaxamg::cuda
