// Parallel, deterministic transposes: of a strength pattern (S -> S^T) and
// of P (R = P^T). The core transpose is sequential; on the finest level of a
// large problem these run on every thread.
#pragma once
#include <vector>

#include "core/csr_matrix.h"

namespace jaxamg::classical {

// Sorted transpose of a square n x n pattern; only the row offsets unless
// `columns`.
void transpose_pattern(Index n, const std::vector<Index>& row_ptr, const std::vector<Index>& col,
                       std::vector<Index>& t_row_ptr, std::vector<Index>& t_col,
                       bool columns = true);

// A^T with sorted columns and diag_pos filled; the same result as
// jaxamg::transpose for any thread count.
template <class T>
CsrMatrix<T> parallel_transpose(const CsrMatrix<T>& A);

}  // namespace jaxamg::classical
