// The Galerkin product Ac = P^T A P on node blocks, for smoothed
// aggregation of block systems (elasticity with rigid-body modes).
//
// There A is k-blocked (k unknowns per node) and P maps m coarse unknowns
// per aggregate, so A is made of k x k blocks and P of k x m blocks. The
// scalar product (GalerkinProduct) then spends most of its time on
// per-entry bookkeeping (a marker test and a scattered add per multiply-add,
// the same fine point reached k times over); here that bookkeeping is paid
// once per node pair and the arithmetic is dense m x k times k x k and
// m x k times k x m block products.
#pragma once
#include "core/csr_matrix.h"

namespace jaxamg::cpu {

// Forms Ac = P^T A P (pattern and values; canonical CSR with diag_pos),
// with k = A.block_dim: A and P are read as k x k and k x m blocks, an entry
// they do not store being a zero of its block, and Ac is stored as whole
// m x m blocks (so it may hold explicit zeros the scalar product would not).
// Returns false and leaves Ac unchanged when the shapes do not divide (k < 2,
// rows not a multiple of k, P's columns not a multiple of m): the caller
// forms the scalar product instead. Sums are accumulated in double.
template <class T>
bool block_galerkin(const CsrMatrix<T>& A, const CsrMatrix<T>& P, Index m, CsrMatrix<T>& Ac);

// The values of Ac = P^T A P written into the pattern Ac already has, from
// block_galerkin() of A and P with the same m and patterns (a resetup with
// new values): no pattern pass. Returns false, Ac unchanged, when the shapes
// do not divide or the product's pattern is not Ac's.
template <class T>
bool block_galerkin_values(const CsrMatrix<T>& A, const CsrMatrix<T>& P, Index m, CsrMatrix<T>& Ac);

}  // namespace jaxamg::cpu
