#include "device/setup/device_hierarchy.h"

#include "backend/cuda/cuda_check.h"

namespace jaxamg::cuda {

template <class T>
CsrMatrix<T> download_csr(const DeviceCsrView<T>& M, Index cols) {
  CsrMatrix<T> H(M.rows, cols);
  H.row_ptr.resize(static_cast<std::size_t>(M.rows) + 1);
  H.col.resize(M.nnz);
  H.val.resize(M.nnz);
  check(cudaMemcpy(H.row_ptr.data(), M.ptr, H.row_ptr.size() * sizeof(Index),
                   cudaMemcpyDeviceToHost), "cudaMemcpy (download)");
  if (M.nnz > 0) {
    check(cudaMemcpy(H.col.data(), M.col, M.nnz * sizeof(Index), cudaMemcpyDeviceToHost),
          "cudaMemcpy (download)");
    check(cudaMemcpy(H.val.data(), M.val, M.nnz * sizeof(T), cudaMemcpyDeviceToHost),
          "cudaMemcpy (download)");
  }
  if (M.rows == cols) H.find_diagonal();
  return H;
}

template <class T>
CsrMatrix<T> DeviceHierarchy<T>::download_matrix(int l) const {
  const DeviceCsrView<T> A = matrix(l);
  return download_csr(A, A.rows);
}

template CsrMatrix<float> download_csr(const DeviceCsrView<float>&, Index);
template CsrMatrix<double> download_csr(const DeviceCsrView<double>&, Index);
template class DeviceHierarchy<float>;
template class DeviceHierarchy<double>;

}  // namespace jaxamg::cuda
