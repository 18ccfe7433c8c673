// Prolongator smoothing of smoothed aggregation with block Jacobi:
//
//   P = (I - omega D^-1 A) P_tent,   omega = (4/3) / rho(D^-1 A),
//
// D the block diagonal of A (k x k blocks for A.block_dim = k, the diagonal
// for k = 1) and rho estimated by Lanczos on the D-self-adjoint D^-1 A (the
// largest Ritz value after 15 steps, as PyAMG estimates it).
// A is not filtered: P's pattern is that of A P_tent (PyAMG's default).
// The pattern depends only on A's and P_tent's patterns, so a resetup with
// new values yields the same pattern of P.
#pragma once
#include <vector>

#include "core/csr_matrix.h"

namespace jaxamg::aggregation {

// Row-major inverses of the k x k diagonal blocks of A (k = A.block_dim).
// Throws InvalidInput naming the node if a block is singular.
template <class T>
std::vector<double> inverse_diagonal_blocks(const CsrMatrix<T>& A);

// Largest eigenvalue of D^-1 A (A symmetric, D SPD) by Lanczos in the
// D inner product; deterministic start vector.
template <class T>
double block_jacobi_spectral_radius(const CsrMatrix<T>& A, const std::vector<double>& Dinv,
                                    int steps = 15);

// P = P_tent - omega D^-1 A P_tent. Returns omega.
template <class T>
double smooth_prolongator(const CsrMatrix<T>& A, const CsrMatrix<T>& P_tent, CsrMatrix<T>& P);

}  // namespace jaxamg::aggregation
