// Sparse matrix-matrix products of the CPU backend (OpenMP, row-parallel
// Gustavson). The work is split into a symbolic phase (the pattern of the
// product) and a numeric phase (its values) so that an AMG resetup with new
// values but the same sparsity re-runs only the numeric phase.
//
// Every product is canonical CSR: sorted unique columns, diag_pos filled.
#pragma once
#include "core/csr_matrix.h"

namespace jaxamg::cpu {

// C = A B, pattern and values in one pass. Throws InvalidInput if the inner
// dimensions differ.
template <class T>
CsrMatrix<T> spgemm(const CsrMatrix<T>& A, const CsrMatrix<T>& B);

// The pattern of A B (values set to zero).
template <class T>
CsrMatrix<T> spgemm_symbolic(const CsrMatrix<T>& A, const CsrMatrix<T>& B);

// Recomputes the values of C = A B into the pattern C already has (from
// spgemm or spgemm_symbolic on matrices with the patterns of A and B).
// Throws InvalidInput if a product falls outside that pattern, i.e. if A or B
// changed sparsity since the symbolic phase.
template <class T>
void spgemm_numeric(const CsrMatrix<T>& A, const CsrMatrix<T>& B, CsrMatrix<T>& C);

// The Galerkin coarse operator Ac = R A P of one AMG level. compute() finds
// the pattern and values of Ac; recompute() reuses that pattern (the
// symbolic plan), so a resetup with new values costs only the numeric work.
//
// Order: row I of Ac is accumulated as sum_k (R A)_Ik P_k, with row I of
// R A merged first in a per-thread dense accumulator over the fine points;
// neither A P nor R A is stored. A fine point is reached from many entries
// of a row of R through the stencil of A, so merging R A first saves 40-60%
// of the multiply-adds of the plain triple sum r_Ii a_ik p_kJ on classical
// 3D Poisson hierarchies (most on aggressive levels, whose rows of R are
// long), and no intermediate matrix is written, sorted or re-read.
//
// An empty R (0 x 0) stands for R = P^T, formed here only if the scalar
// product runs. coarse_block > 1 tells that R = P^T and that P maps
// coarse_block coarse unknowns per node (smoothed aggregation of a block
// system): when A and P have that node-block structure, Ac is formed on
// blocks (backend/cpu/block_galerkin.h) and R is not read.
template <class T>
class GalerkinProduct {
 public:
  void compute(const CsrMatrix<T>& R, const CsrMatrix<T>& A, const CsrMatrix<T>& P,
               CsrMatrix<T>& Ac, Index coarse_block = 1);
  // R, A and P have the patterns of the last compute(); Ac is its result,
  // and coarse_block is that compute()'s. Recomputes values only. Throws
  // InvalidInput if there is no plan, the patterns changed (a product
  // outside the kept pattern) or a blocked product is given another
  // coarse_block.
  void recompute(const CsrMatrix<T>& R, const CsrMatrix<T>& A, const CsrMatrix<T>& P,
                 CsrMatrix<T>& Ac, Index coarse_block = 1);
  bool has_plan() const { return planned_; }
  void clear();

 private:
  bool planned_ = false;
  Index block_ = 1;  // the last compute() formed Ac on block_ x block_ blocks
};

}  // namespace jaxamg::cpu
