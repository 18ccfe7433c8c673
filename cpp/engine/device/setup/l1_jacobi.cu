#include "device/setup/l1_jacobi.h"

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

// The rows' diagonals are found by a search of the sorted columns. A row
// that cannot be divided by is flagged as 2 i + (1 if no diagonal is stored),
// so the smallest flag names the first such row and what it lacks.
template <class T>
__global__ void jacobi_kernel(Index n, const Index* ptr, const Index* col, const T* val, T w,
                              T* dinv, long long* flag) {
  const Index i = global_id();
  if (i >= n) return;
  Index lo = ptr[i], hi = ptr[i + 1];
  while (lo < hi) {
    const Index mid = lo + (hi - lo) / 2;
    if (col[mid] < i) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  const bool stored = lo < ptr[i + 1] && col[lo] == i;
  if (!stored || val[lo] == T(0)) {
    atomicMin(flag, 2 * static_cast<long long>(i) + (stored ? 0 : 1));
    dinv[i] = T(0);
    return;
  }
  T inv = T(1) / val[lo];
  inv *= w;
  dinv[i] = inv;
}

}  // namespace

template <class T>
void jacobi_scaled_inverse_diagonal(const DeviceCsrView<T>& A, T w, T* dinv) {
  const Index n = A.rows;
  if (n == 0) return;
  DeviceArray<long long> flag(1);
  long long h = 2 * static_cast<long long>(n);
  check(cudaMemcpy(flag.data(), &h, sizeof(h), cudaMemcpyHostToDevice), "cudaMemcpy");
  jacobi_kernel<T><<<blocks(n), kBlock>>>(n, A.ptr, A.col, A.val, w, dinv, flag.data());
  check_launch("jacobi_kernel");
  check(cudaMemcpy(&h, flag.data(), sizeof(h), cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (h < 2 * static_cast<long long>(n)) {
    throw InvalidInput("BLOCK_JACOBI smoother divides by the diagonal, but row " +
                       std::to_string(h / 2) + " of the " + std::to_string(n) + "-row matrix has " +
                       (h % 2 ? "no stored diagonal" : "a zero diagonal") +
                       "; use a smoother that does not divide by it (e.g. JACOBI_L1) or fix the "
                       "matrix");
  }
}

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
template void jacobi_scaled_inverse_diagonal(const DeviceCsrView<float>&, float, float*);
template void jacobi_scaled_inverse_diagonal(const DeviceCsrView<double>&, double, double*);

}  // namespace jaxamg::cuda
