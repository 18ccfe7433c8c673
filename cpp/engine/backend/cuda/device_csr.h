// A CSR matrix on the device and its products. Products run the backend's
// own row-group kernels (csr_kernels.h), which fuse a residual or a smoother
// sweep into the SpMV; JAXAMG_SPMV=cusparse selects cuSPARSE's SpMV instead
// (its descriptor and workspace are then made once at upload), which the
// benchmarks use to compare the two.
#pragma once
#include <cusparse.h>

#include <memory>

#include "backend/cuda/csr_kernels.h"
#include "backend/cuda/device_array.h"
#include "backend/cuda/device_halo.h"
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
  // A distributed matrix's exchanges (device_halo.h): `in` fills the ghost
  // tail of a product's input (its columns [owned | ghost]); `out` sends the
  // partial sums in the output's ghost rows to their owners (a restriction
  // P^T whose rows are [owned | ghost] coarse points). Either may be
  // nullptr; the PackedHalos must outlive this matrix.
  void set_halos(const PackedHalo* in, Index in_owned, const PackedHalo* out, Index out_owned);
  // y = alpha A x + beta y on the handle's stream (with the exchanges).
  void spmv(cusparseHandle_t handle, T alpha, const T* x, T beta, T* y) const;
  // Whether products run cuSPARSE (JAXAMG_SPMV=cusparse when the matrix was
  // described); callers then use spmv only, as the fused kernels are ours.
  bool uses_cusparse() const { return descr_ != nullptr; }
  // The arrays for csr_kernels.h (csr_residual, csr_jacobi, csr_chebyshev).
  CsrRef<T> ref() const {
    return {rows_, row_ptr_.data(), col_.data(), val_.data(), lanes_, in_halo_.get()};
  }

  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  Index nnz() const { return static_cast<Index>(col_.size()); }
  bool empty() const { return rows_ == 0; }
  // The arrays themselves, for kernels that multiply without cuSPARSE
  // (device/small_cg.cu); replace_values keeps these addresses.
  const Index* row_ptr() const { return row_ptr_.data(); }
  const Index* col() const { return col_.data(); }
  const T* val() const { return val_.data(); }
  // Bytes one SpMV reads and writes at least (values, indices, x, y).
  double spmv_bytes() const;

 private:
  // lanes_, and with JAXAMG_SPMV=cusparse the cuSPARSE descriptor and SpMV
  // buffer over row_ptr_, col_, val_.
  void describe(cusparseHandle_t handle, Index nnz);
  Index rows_ = 0, cols_ = 0;
  int lanes_ = 1;  // threads per row of the own kernels
  DeviceArray<Index> row_ptr_, col_;
  DeviceArray<T> val_;
  DeviceArray<unsigned char> buffer_;
  cusparseSpMatDescr_t descr_ = nullptr;
  std::unique_ptr<DeviceHalo<T>> in_halo_, out_halo_;
};

}  // namespace jaxamg::cuda
