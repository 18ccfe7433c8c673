#include "backend/cuda/device_csr.h"

#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <utility>

#include "core/error.h"

namespace jaxamg::cuda {

namespace {

// CSR_ALG2 gives the same bits on every run; CSR_ALG1 does not promise it
// (two solves of one system could differ in the last bits, and so could
// their iteration counts).
constexpr cusparseSpMVAlg_t kSpmvAlgorithm = CUSPARSE_SPMV_CSR_ALG2;

template <class T>
constexpr cudaDataType value_type() {
  return std::is_same<T, double>::value ? CUDA_R_64F : CUDA_R_32F;
}

// JAXAMG_SPMV: "own" (default) or "cusparse".
bool cusparse_requested() {
  const char* v = std::getenv("JAXAMG_SPMV");
  if (!v || !*v || std::strcmp(v, "own") == 0) return false;
  if (std::strcmp(v, "cusparse") == 0) return true;
  throw InvalidInput(std::string("JAXAMG_SPMV='") + v +
                     "' is not a SpMV choice; set it to 'own' (the default) or 'cusparse', "
                     "or unset it");
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
      lanes_(o.lanes_),
      row_ptr_(std::move(o.row_ptr_)),
      col_(std::move(o.col_)),
      val_(std::move(o.val_)),
      buffer_(std::move(o.buffer_)),
      descr_(std::exchange(o.descr_, nullptr)),
      in_halo_(std::move(o.in_halo_)),
      out_halo_(std::move(o.out_halo_)) {
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
  describe(handle, A.nnz());
}

template <class T>
void DeviceCsr<T>::copy_device(cusparseHandle_t handle, Index rows, Index cols, Index nnz,
                               const Index* ptr, const Index* col, const T* val) {
  if (descr_) {
    cusparseDestroySpMat(descr_);
    descr_ = nullptr;
  }
  rows_ = rows;
  cols_ = cols;
  row_ptr_.resize(static_cast<std::size_t>(rows) + 1);
  col_.resize(nnz);
  val_.resize(nnz);
  check(cudaMemcpy(row_ptr_.data(), ptr, row_ptr_.size() * sizeof(Index), cudaMemcpyDeviceToDevice),
        "cudaMemcpy D2D (row offsets)");
  if (nnz > 0) {
    check(cudaMemcpy(col_.data(), col, nnz * sizeof(Index), cudaMemcpyDeviceToDevice),
          "cudaMemcpy D2D (columns)");
    check(cudaMemcpy(val_.data(), val, nnz * sizeof(T), cudaMemcpyDeviceToDevice),
          "cudaMemcpy D2D (values)");
  }
  describe(handle, nnz);
}

template <class T>
void DeviceCsr<T>::replace_values(const T* val, cudaStream_t stream) {
  if (val_.size() == 0) return;
  check(cudaMemcpyAsync(val_.data(), val, val_.size() * sizeof(T), cudaMemcpyDeviceToDevice,
                        stream),
        "cudaMemcpyAsync D2D (new values)");
}

template <class T>
void DeviceCsr<T>::describe(cusparseHandle_t handle, Index nnz) {
  if (rows_ == 0) return;
  lanes_ = csr_lanes(rows_, static_cast<std::size_t>(nnz));
  const bool cusparse = cusparse_requested();
  // Valid pointers even for an empty pattern (cuSPARSE wants them).
  if (col_.empty()) {
    col_.resize(1);
    val_.resize(1);
  }
  if (!cusparse) return;
  check(cusparseCreateCsr(&descr_, rows_, cols_, nnz, row_ptr_.data(), col_.data(),
                          val_.data(), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, value_type<T>()),
        "cusparseCreateCsr");
  DeviceArray<T> x(cols_), y(rows_);
  DnVec vx(cols_, x.data(), value_type<T>()), vy(rows_, y.data(), value_type<T>());
  const T one = 1, zero = 0;
  size_t bytes = 0;
  check(cusparseSpMV_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, descr_, vx.d,
                                &zero, vy.d, value_type<T>(), kSpmvAlgorithm, &bytes),
        "cusparseSpMV_bufferSize");
  buffer_.resize(bytes > 0 ? bytes : 1);
}

template <class T>
void DeviceCsr<T>::set_halos(const PackedHalo* in, Index in_owned, const PackedHalo* out,
                             Index out_owned) {
  in_halo_ = in ? std::make_unique<DeviceHalo<T>>(*in, in_owned) : nullptr;
  out_halo_ = out ? std::make_unique<DeviceHalo<T>>(*out, out_owned) : nullptr;
}

template <class T>
void DeviceCsr<T>::spmv(cusparseHandle_t handle, T alpha, const T* x, T beta, T* y) const {
  cudaStream_t stream = nullptr;
  check(cusparseGetStream(handle, &stream), "cusparseGetStream");
  if (!descr_) {
    csr_axpby(ref(), alpha, x, beta, y, stream);  // fills the ghosts first
  } else {
    if (in_halo_) in_halo_->fill(x, stream);
    if (rows_ > 0) {
      DnVec vx(cols_, x, value_type<T>()), vy(rows_, y, value_type<T>());
      check(
          cusparseSpMV(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, descr_, vx.d, &beta, vy.d,
                       value_type<T>(), kSpmvAlgorithm, const_cast<unsigned char*>(buffer_.data())),
          "cusparseSpMV");
    }
  }
  if (out_halo_) out_halo_->reverse_add(y, stream);
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
