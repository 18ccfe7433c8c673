// The device sparse product (device/setup/device_spgemm) against a host
// product summed row by row: random rectangular matrices, with cuSPARSE's
// default algorithm and with the chunked one that the setup takes when the
// default runs out of scratch memory. Skips where no GPU is present.
#include <cuda_runtime_api.h>
#include <cusparse.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "core/csr_matrix.h"
#include "cuda/device_setup_testing.h"
#include "cuda/gpu_testing.h"
#include "device/setup/device_spgemm.h"

namespace jaxamg {
namespace {

using cuda::DeviceArray;
using testing::DeviceMatrix;

// rows x cols with up to `per_row` random columns per row, values in (-1, 1).
CsrMatrix<double> random_rectangular(Index rows, Index cols, int per_row, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<Index> column(0, cols - 1);
  std::uniform_real_distribution<double> value(-1, 1);
  CsrMatrix<double> A(rows, cols);
  for (Index i = 0; i < rows; ++i) {
    std::vector<Index> c;
    for (int k = 0; k < per_row; ++k) c.push_back(column(gen));
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    for (Index j : c) {
      A.col.push_back(j);
      A.val.push_back(value(gen));
    }
    A.row_ptr[i + 1] = static_cast<Index>(A.col.size());
  }
  return A;
}

template <class T>
std::vector<T> to_host(const DeviceArray<T>& d, std::size_t n) {
  std::vector<T> h(n);
  if (n > 0) cudaMemcpy(h.data(), d.data(), n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

TEST(DeviceSpgemm, DefaultAndChunkedEqualHostProduct) {
  REQUIRE_GPU();
  const CsrMatrix<double> A = random_rectangular(3000, 2000, 7, 11);
  const CsrMatrix<double> B = random_rectangular(2000, 1500, 5, 12);
  std::vector<std::map<Index, double>> ref(A.nrows);
  for (Index i = 0; i < A.nrows; ++i) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const Index j = A.col[k];
      for (Index l = B.row_ptr[j]; l < B.row_ptr[j + 1]; ++l) {
        ref[i][B.col[l]] += A.val[k] * B.val[l];
      }
    }
  }
  const DeviceMatrix<double> dA(A), dB(B);
  cusparseHandle_t handle = nullptr;
  ASSERT_EQ(cusparseCreate(&handle), CUSPARSE_STATUS_SUCCESS);
  for (bool chunked : {false, true}) {
    SCOPED_TRACE(chunked ? "chunked" : "default");
    DeviceArray<Index> ptr, col;
    DeviceArray<double> val;
    cuda::device_spgemm(handle, dA.view(), B.nrows, dB.view(), B.ncols, ptr, col, val, chunked);
    const std::vector<Index> hp = to_host(ptr, A.nrows + 1);
    const std::size_t nnz = static_cast<std::size_t>(hp.back());
    const std::vector<Index> hc = to_host(col, nnz);
    const std::vector<double> hv = to_host(val, nnz);
    for (Index i = 0; i < A.nrows; ++i) {
      ASSERT_EQ(hp[i + 1] - hp[i], static_cast<Index>(ref[i].size())) << "row " << i;
      auto it = ref[i].begin();
      for (Index k = hp[i]; k < hp[i + 1]; ++k, ++it) {
        ASSERT_EQ(hc[k], it->first) << "row " << i;
        ASSERT_NEAR(hv[k], it->second, 1e-13 * (1 + std::abs(it->second))) << "row " << i;
      }
    }
  }
  cusparseDestroy(handle);
}

}  // namespace
}  // namespace jaxamg
