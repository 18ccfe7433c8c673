#include "backend/cuda/device_csr.h"

#include <type_traits>
#include <utility>

namespace jaxamg::cuda {

namespace {

template <class T>
constexpr cudaDataType value_type() {
  return std::is_same<T, double>::value ? CUDA_R_64F : CUDA_R_32F;
}

// A dense-vector descriptor for one call (a host-side object; cheap).
struct DnVec {
  cusparseDnVecDescr_t d = nullptr;
  DnVec(int64_t n, const void* p, cudaDataType t) {
    check(cusparseCreateDnVec(&d, n, const_cast<void*>(p), t), "cusparseCreateDnVec");
  }
  ~DnVec() { cusparseDestroyDnVec(d); }
};

}  // namespace

template <class T>
DeviceCsr<T>::~DeviceCsr() {
  if (descr_) cusparseDestroySpMat(descr_);
}

template <class T>
DeviceCsr<T>::DeviceCsr(DeviceCsr&& o) noexcept
    : rows_(o.rows_),
      cols_(o.cols_),
      row_ptr_(std::move(o.row_ptr_)),
      col_(std::move(o.col_)),
      val_(std::move(o.val_)),
      buffer_(std::move(o.buffer_)),
      descr_(std::exchange(o.descr_, nullptr)) {
  o.rows_ = o.cols_ = 0;
}

template <class T>
void DeviceCsr<T>::upload(cusparseHandle_t handle, const CsrMatrix<T>& A) {
  if (descr_) {
    cusparseDestroySpMat(descr_);
    descr_ = nullptr;
  }
  rows_ = A.nrows;
  cols_ = A.ncols;
  row_ptr_.assign(A.row_ptr);
  col_.assign(A.col);
  val_.assign(A.val);
  if (rows_ == 0) return;
  // cuSPARSE wants valid pointers even for an empty pattern.
  if (col_.empty()) {
    col_.resize(1);
    val_.resize(1);
  }
  check(cusparseCreateCsr(&descr_, rows_, cols_, A.nnz(), row_ptr_.data(), col_.data(),
                          val_.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, value_type<T>()),
        "cusparseCreateCsr");
  DeviceArray<T> x(cols_), y(rows_);
  DnVec vx(cols_, x.data(), value_type<T>()), vy(rows_, y.data(), value_type<T>());
  const T one = 1, zero = 0;
  size_t bytes = 0;
  check(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, descr_, vx.d,
                                &zero, vy.d, value_type<T>(), CUSPARSE_SPMV_CSR_ALG1, &bytes),
        "cusparseSpMV_bufferSize");
  buffer_.resize(bytes > 0 ? bytes : 1);
}

template <class T>
void DeviceCsr<T>::spmv(cusparseHandle_t handle, T alpha, const T* x, T beta, T* y) const {
  if (rows_ == 0) return;
  DnVec vx(cols_, x, value_type<T>()), vy(rows_, y, value_type<T>());
  check(cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, descr_, vx.d, &beta, vy.d,
                     value_type<T>(), CUSPARSE_SPMV_CSR_ALG1,
                     const_cast<unsigned char*>(buffer_.data())),
        "cusparseSpMV");
}

template <class T>
double DeviceCsr<T>::spmv_bytes() const {
  return static_cast<double>(col_.size()) * (sizeof(T) + sizeof(Index)) +
         static_cast<double>(rows_ + 1) * sizeof(Index) +
         static_cast<double>(rows_ + cols_) * sizeof(T);
}

template class DeviceCsr<float>;
template class DeviceCsr<double>;

}  // namespace jaxamg::cuda
