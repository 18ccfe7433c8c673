// Shared by the tests of the device setups (aggregation, classical, the
// setup solver): random-valued test matrices and a device copy of a host
// CSR matrix.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "backend/cuda/device_array.h"
#include "core/csr_matrix.h"
#include "device/setup/device_aggregates.h"

namespace jaxamg::testing {

// A number in [0, 1) fixed by (i, j, seed) and symmetric in i, j.
inline double unit_random(Index i, Index j, unsigned seed) {
  std::uint64_t z = (static_cast<std::uint64_t>(std::min(i, j)) << 32 | std::max(i, j)) ^
                    (static_cast<std::uint64_t>(seed) * 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// Off-diagonals scaled by 1 + u_ij (u symmetric), the diagonal set to the
// row's off-diagonal l1 norm times 1 + 0.1 u_ii: symmetric, diagonally
// dominant, random in every value.
template <class T>
CsrMatrix<T> perturbed(const CsrMatrix<T>& base, unsigned seed) {
  CsrMatrix<T> A = base;
  for (Index i = 0; i < A.nrows; ++i) {
    double off = 0;
    Index diag = -1;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const Index j = A.col[k];
      if (j == i) {
        diag = k;
        continue;
      }
      A.val[k] = static_cast<T>(static_cast<double>(base.val[k]) * (1 + unit_random(i, j, seed)));
      off += std::abs(static_cast<double>(A.val[k]));
    }
    A.val[diag] = static_cast<T>((off > 0 ? off : 1.0) * (1 + 0.1 * unit_random(i, i, seed)));
  }
  return A;
}

// n rows, `per_row` random off-diagonal columns each (a nonsymmetric
// pattern), values in (-1, 1), diagonal = l1 norm of the row + U(0.5, 1.5).
template <class T>
CsrMatrix<T> random_nonsymmetric(Index n, int per_row, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<Index> col(0, n - 1);
  CsrMatrix<T> A(n, n);
  for (Index i = 0; i < n; ++i) {
    std::vector<Index> cols{i};
    for (int c = 0; c < per_row; ++c) cols.push_back(col(gen));
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    for (Index j : cols) A.col.push_back(j);
    A.row_ptr[i + 1] = static_cast<Index>(A.col.size());
  }
  A.val.resize(A.col.size());
  std::uniform_real_distribution<double> u(-1, 1), d(0.5, 1.5);
  for (Index i = 0; i < n; ++i) {
    double off = 0;
    Index diag = -1;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (A.col[k] == i) {
        diag = k;
        continue;
      }
      A.val[k] = static_cast<T>(u(gen));
      off += std::abs(static_cast<double>(A.val[k]));
    }
    A.val[diag] = static_cast<T>(off + d(gen));
  }
  A.find_diagonal();
  return A;
}

template <class T>
struct DeviceMatrix {
  cuda::DeviceArray<Index> ptr, col;
  cuda::DeviceArray<T> val;
  Index rows = 0, nnz = 0;
  explicit DeviceMatrix(const CsrMatrix<T>& A) : rows(A.nrows), nnz(A.nnz()) {
    ptr.assign(A.row_ptr);
    col.assign(A.col);
    val.assign(A.val);
  }
  cuda::DeviceCsrView<T> view() const { return {rows, nnz, ptr.data(), col.data(), val.data()}; }
};

}  // namespace jaxamg::testing
