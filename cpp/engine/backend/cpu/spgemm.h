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
// Order: row I of Ac is accumulated directly as sum r_Ii a_ik p_kJ, without
// forming A P. On classical hierarchies of 3D Poisson this does no more
// multiply-adds than the two-product routes (each row of A P is recomputed
// once per entry of R in its column, but A P's rows merge duplicates only
// partially anyway) and skips writing, sorting and re-reading A P: the full
// product measured faster than both A P first and R A first, the numeric
// phase about as fast, and no intermediate matrix is kept.
template <class T>
class GalerkinProduct {
 public:
  void compute(const CsrMatrix<T>& R, const CsrMatrix<T>& A, const CsrMatrix<T>& P,
               CsrMatrix<T>& Ac);
  // R, A and P have the patterns of the last compute(); Ac is its result.
  // Recomputes values only. Throws InvalidInput if there is no plan or the
  // patterns changed (a product outside the kept pattern).
  void recompute(const CsrMatrix<T>& R, const CsrMatrix<T>& A, const CsrMatrix<T>& P,
                 CsrMatrix<T>& Ac);
  bool has_plan() const { return planned_; }
  void clear();

 private:
  bool planned_ = false;
};

}  // namespace jaxamg::cpu
