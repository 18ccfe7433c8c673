// Pieces shared by the smoothers: the OpenMP threshold, the inverse diagonal
// and the relaxation factor check.
#pragma once
#include <string>
#include <vector>

#include "core/csr_matrix.h"
#include "core/parallel.h"

namespace jaxamg {

// Implemented by the Jacobi-type smoothers, whose one sweep from a zero guess
// is the diagonal map r -> dw .* r. CHEBYSHEV uses it to scale its operator
// without calling the preconditioner through the generic solver interface.
template <class T>
class DiagonalScaling {
 public:
  virtual ~DiagonalScaling() = default;
  // dw[i] = w / d_i (d: the diagonal or the l1 row norm), valid after setup.
  virtual const Vector<T>& scaled_inverse_diagonal() const = 0;
};

}  // namespace jaxamg

namespace jaxamg::smoothers {

using jaxamg::kParallelRows;

// inv[i] = 1 / a_ii. Throws InvalidInput naming the row when a diagonal is
// missing or zero (through require_nonzero_diagonal), or when the matrix has
// no diagonal index (diag_pos not filled by canonicalize/find_diagonal).
template <class T>
void inverse_diagonal(const CsrMatrix<T>& A, const std::string& who, std::vector<T>& inv);

// Throws InvalidInput unless diag_pos has one entry per row.
template <class T>
void require_diag_index(const CsrMatrix<T>& A, const std::string& who);

// The owned square block of a distributed matrix (its ghost columns
// dropped), with its diagonal index: what the rank-local factorisations of
// MULTICOLOR_DILU and MULTICOLOR_ILU factor.
template <class T>
CsrMatrix<T> owned_block(const CsrMatrix<T>& A);

// Checks relaxation_factor: 0 means 1 (as in AmgX's Jacobi smoothers);
// values outside (0, 2] throw ConfigError naming the scope.
double read_relaxation_factor(double w, const std::string& who, const std::string& scope);

}  // namespace jaxamg::smoothers
