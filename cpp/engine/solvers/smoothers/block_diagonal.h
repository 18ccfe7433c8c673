// The inverted k x k diagonal blocks of a block matrix (block_dim k > 1),
// shared by the block smoothers (BLOCK_JACOBI, GS, MULTICOLOR_GS): node I
// owns rows I*k .. I*k+k-1, and its block D_I is A restricted to those rows
// and columns.
#pragma once
#include <string>
#include <vector>

#include "backend/sweep_data.h"
#include "core/csr_matrix.h"

namespace jaxamg::smoothers {

// binv[I*k*k ..] = w * D_I^-1, row-major, for every node I. Throws
// InvalidInput when the rows do not divide into blocks, or naming the node
// and its rows when a block is singular to working precision (`who` names
// the smoother in the message).
template <class T>
void inverse_block_diagonal(const CsrMatrix<T>& A, Index k, T w, const std::string& who,
                            std::vector<T>& binv);

using backend::apply_block;

}  // namespace jaxamg::smoothers
