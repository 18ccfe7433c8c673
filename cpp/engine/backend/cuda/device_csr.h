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
  // Copies a CSR matrix that is already on the device (rows + 1 offsets, nnz
  // columns and values), e.g. a level built by the device setup.
  void copy_device(cusparseHandle_t handle, Index rows, Index cols, Index nnz, const Index* ptr,
                   const Index* col, const T* val);
  // New values for the same pattern (nnz entries, device memory), copied on
  // `stream`; the descriptor keeps pointing at them.
  void replace_values(const T* val, cudaStream_t stream);
  // y = alpha A x + beta y on the handle's stream.
  void spmv(cusparseHandle_t handle, T alpha, const T* x, T beta, T* y) const;

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  Index nnz() const { return static_cast<Index>(col_.size()); }
  bool empty() const { return rows_ == 0; }
  // The arrays themselves, for kernels that multiply without cuSPARSE
  // (small_cg.cu); replace_values keeps these addresses.
  const Index* row_ptr() const { return row_ptr_.data(); }
  const Index* col() const { return col_.data(); }
  const T* val() const { return val_.data(); }
  // Bytes one SpMV reads and writes at least (values, indices, x, y).
  double spmv_bytes() const;

 private:
  // The cuSPARSE descriptor and SpMV buffer over row_ptr_, col_, val_.
  void describe(cusparseHandle_t handle, Index nnz);
  Index rows_ = 0, cols_ = 0;
  DeviceArray<Index> row_ptr_, col_;
  DeviceArray<T> val_;
  DeviceArray<unsigned char> buffer_;
  cusparseSpMatDescr_t descr_ = nullptr;
};

}  // namespace jaxamg::cuda
