#include "gpu_legacy/setup/l1_jacobi.h"

#include <cmath>
#include <string>

#include "backend/cuda/setup/launch.cuh"
#include "core/error.h"

namespace jaxamg::cuda {

namespace {

template <class T>
__global__ void l1_kernel(Index n, const Index* ptr, const Index* col, const T* val, double w,
                          T* dinv, int* zero_row) {
  const Index i = global_id();
  if (i >= n) return;
  double sum = 0;
  bool negative_diag = false;
  for (Index k = ptr[i]; k < ptr[i + 1]; ++k) {
    sum += fabs(static_cast<double>(val[k]));
    if (col[k] == i && val[k] < T(0)) negative_diag = true;
  }
  if (sum == 0) {
    atomicMin(zero_row, i);
    dinv[i] = T(0);
  } else {
    dinv[i] = static_cast<T>(w / (negative_diag ? -sum : sum));
  }
}

}  // namespace

template <class T>
void l1_scaled_inverse_diagonal(const DeviceCsrView<T>& A, double w, T* dinv) {
  const Index n = A.rows;
  if (n == 0) return;
  DeviceArray<int> zero_row(1);
  int row = n;
  check(cudaMemcpy(zero_row.data(), &row, sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy");
  l1_kernel<T><<<blocks(n), kBlock>>>(n, A.ptr, A.col, A.val, w, dinv, zero_row.data());
  check_launch("l1_kernel");
  check(cudaMemcpy(&row, zero_row.data(), sizeof(int), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (row < n) {
    throw InvalidInput("JACOBI_L1 smoother: row " + std::to_string(row) + " of the " +
                       std::to_string(n) + "-row matrix is entirely zero (l1 norm 0), so the row "
                       "cannot be relaxed; remove the empty row or put a nonzero on its diagonal");
  }
}

template void l1_scaled_inverse_diagonal(const DeviceCsrView<float>&, double, float*);
template void l1_scaled_inverse_diagonal(const DeviceCsrView<double>&, double, double*);

}  // namespace jaxamg::cuda
