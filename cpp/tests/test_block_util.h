// Block test matrices shared by the block-system tests: node-interleaved
// Kronecker products and random matrices with strong diagonal blocks.
#pragma once
#include <vector>

#include "core/csr_matrix.h"
#include "problems.h"

namespace jaxamg::testing {

// kron(P, B) with unknowns interleaved node-major: entry (i*k + c, j*k + d)
// is p_ij * b_cd.
inline CsrMatrix<double> kron_nodes(const CsrMatrix<double>& P, const std::vector<double>& B, Index k) {
  CsrMatrix<double> A(P.nrows * k, P.ncols * k);
  for (Index i = 0; i < P.nrows; ++i) {
    for (Index c = 0; c < k; ++c) {
      for (Index p = P.row_ptr[i]; p < P.row_ptr[i + 1]; ++p) {
        for (Index d = 0; d < k; ++d) {
          A.col.push_back(P.col[p] * k + d);
          A.val.push_back(P.val[p] * B[c * k + d]);
        }
      }
      A.row_ptr[i * k + c + 1] = A.nnz();
    }
  }
  A.find_diagonal();
  return A;
}

inline const std::vector<double> kCoupling = {2, 1, 1, 2};

// A random block matrix with strong (invertible) diagonal blocks.
// The node graph is P's pattern.
inline CsrMatrix<double> random_block_matrix(const CsrMatrix<double>& P, Index k, unsigned seed) {
  const Index nodes = P.nrows;
  const auto r = testing::random_vector<double>(static_cast<int>(P.nnz() * k * k), seed);
  CsrMatrix<double> A(nodes * k, nodes * k);
  Index q = 0;
  for (Index i = 0; i < nodes; ++i) {
    for (Index c = 0; c < k; ++c) {
      for (Index p = P.row_ptr[i]; p < P.row_ptr[i + 1]; ++p) {
        for (Index d = 0; d < k; ++d) {
          double v = 0.3 * r[q++];
          if (P.col[p] == i && c == d) v += 4.0;
          A.col.push_back(P.col[p] * k + d);
          A.val.push_back(v);
        }
      }
      A.row_ptr[i * k + c + 1] = A.nnz();
    }
  }
  A.find_diagonal();
  return A;
}

}  // namespace jaxamg::testing
