// The inverted k x k diagonal blocks of a block matrix (block_dim k > 1),
// shared by the block smoothers (BLOCK_JACOBI, GS, MULTICOLOR_GS): node I
// owns rows I*k .. I*k+k-1, and its block D_I is A restricted to those rows
// and columns.
#pragma once
#include <string>
#include <vector>

#include "core/csr_matrix.h"

namespace jaxamg::smoothers {

// binv[I*k*k ..] = w * D_I^-1, row-major, for every node I. Throws
// InvalidInput when the rows do not divide into blocks, or naming the node
// and its rows when a block is singular to working precision (`who` names
// the smoother in the message).
template <class T>
void inverse_block_diagonal(const CsrMatrix<T>& A, Index k, T w, const std::string& who,
                            std::vector<T>& binv);

// x[0..k) (+)= m r, with m a row-major k x k block: `accumulate` adds to x,
// otherwise x is overwritten.
template <class T>
inline void apply_block(const T* m, const T* r, T* x, Index k, bool accumulate) {
  for (Index c = 0; c < k; ++c) {
    T s = 0;
    for (Index j = 0; j < k; ++j) s += m[c * k + j] * r[j];
    x[c] = accumulate ? x[c] + s : s;
  }
}

}  // namespace jaxamg::smoothers
