// Compressed sparse row matrix, the engine's one matrix format.
//
// Invariants after `canonicalize` (which every public entry point calls):
// square unless stated, column indices sorted and unique within a row, every
// value finite, `diag_pos[i]` the position of entry (i, i) or -1 if absent.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/csr_array.h"
#include "core/distribution.h"
#include "core/types.h"

namespace jaxamg {

template <class T>
struct CsrMatrix {
  Index nrows = 0;
  Index ncols = 0;
  // Owned, or borrowed from the caller (core/csr_array.h: read-only, copied
  // on the first write).
  CsrArray<Index> row_ptr{0};  // nrows + 1
  CsrArray<Index> col;         // nnz
  CsrArray<T> val;             // nnz
  std::vector<Index> diag_pos;    // nrows; filled by find_diagonal()
  // Rows (and columns) form square block_dim x block_dim blocks, unknowns
  // interleaved node-major: row i*block_dim + c is component c of node i.
  // Storage stays scalar CSR; algorithms that know about blocks honour it.
  Index block_dim = 1;
  // Set when the matrix is one process's rows of a distributed matrix:
  // columns [nrows, ncols) are then ghost columns (core/distribution.h).
  // Null for an ordinary matrix.
  std::shared_ptr<const Distribution<T>> dist;

  CsrMatrix() = default;
  CsrMatrix(Index rows, Index cols) : nrows(rows), ncols(cols), row_ptr(rows + 1, 0) {}

  Index nnz() const { return static_cast<Index>(col.size()); }
  // Bytes of the arrays (row offsets, columns, values, diagonal positions).
  std::size_t storage_bytes() const {
    return row_ptr.size() * sizeof(Index) + col.size() * sizeof(Index) + val.size() * sizeof(T) +
           diag_pos.size() * sizeof(Index);
  }

  // Fills diag_pos; returns the number of rows without a stored diagonal.
  Index find_diagonal();
  // The diagonal as a dense vector (0 where missing). Needs diag_pos.
  std::vector<T> diagonal() const;
};

// Checks and normalises user input: sizes, index ranges, finiteness; sorts
// columns within each row and sums duplicates. `what` names the matrix in
// error messages ("A"). Throws InvalidInput. Returns true if it had to sort or
// merge anything.
template <class T>
bool canonicalize(CsrMatrix<T>& A, const std::string& what = "A");

// Builds and canonicalises a CSR matrix from raw arrays (copies them).
template <class T>
CsrMatrix<T> make_csr(Index nrows, Index ncols, const Index* row_ptr, const Index* col,
                      const T* val, Index nnz, const std::string& what = "A");

// How error messages name local row i: "row i", or "global row G" when A is
// one process's rows of a distributed matrix (the user's numbering).
template <class T>
std::string row_name(const CsrMatrix<T>& A, Index i) {
  return A.dist ? "global row " + std::to_string(A.dist->row_start() + i)
                : "row " + std::to_string(i);
}

// Throws InvalidInput if a row has no diagonal or a zero one; `who` names the
// component that needs it ("JACOBI_L1 smoother").
template <class T>
void require_nonzero_diagonal(const CsrMatrix<T>& A, const std::string& who);

template <class T>
CsrMatrix<T> transpose(const CsrMatrix<T>& A);

// Same nonzero pattern, values of another precision (mixed precision).
template <class To, class From>
CsrMatrix<To> convert_values(const CsrMatrix<From>& A);

// True if the sparsity pattern and values are equal to within `tol` (relative
// to the largest |value|) to those of the transpose.
template <class T>
bool is_symmetric(const CsrMatrix<T>& A, double tol = 0.0);

}  // namespace jaxamg
