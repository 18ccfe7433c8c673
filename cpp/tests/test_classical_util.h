// Helpers of the classical-coarsening tests: random matrices, an independent
// strength-of-connection reference and a plain Galerkin product.
#pragma once
#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "core/csr_matrix.h"

namespace jaxamg::testing {

// Random sparse matrix: each row gets about `deg` off-diagonal entries at
// random columns (negative with probability 1 - pos_fraction), symmetrised
// (pattern and values) when `symmetric`. The diagonal makes each row sum
// equal to `row_sum` (0: a graph Laplacian when all couplings are negative).
template <class T>
CsrMatrix<T> random_matrix(int n, int deg, unsigned seed, bool symmetric, double row_sum = 0.0,
                           double pos_fraction = 0.0) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::uniform_real_distribution<double> mag(0.1, 1.0), coin(0.0, 1.0);
  std::map<std::pair<int, int>, double> e;
  for (int i = 0; i < n; ++i) {
    // A few near neighbours keep the graph connected-ish, the rest is random.
    for (int d = 0; d < deg; ++d) {
      int j = d < 2 ? (i + 1 + d) % n : pick(gen);
      if (j == i) continue;
      const double v = (coin(gen) < pos_fraction ? 0.3 : -1.0) * mag(gen);
      e[{i, j}] = v;
      if (symmetric) e[{j, i}] = v;
    }
  }
  std::vector<double> offsum(n, 0.0);
  for (auto& [ij, v] : e) offsum[ij.first] += v;
  std::vector<std::vector<std::pair<int, double>>> rows(n);
  for (auto& [ij, v] : e) rows[ij.first].push_back({ij.second, v});
  CsrMatrix<T> A(n, n);
  for (int i = 0; i < n; ++i) {
    rows[i].push_back({i, row_sum - offsum[i]});
    std::sort(rows[i].begin(), rows[i].end());
    for (auto& [j, v] : rows[i]) {
      A.col.push_back(j);
      A.val.push_back(static_cast<T>(v));
    }
    A.row_ptr[i + 1] = static_cast<Index>(A.col.size());
  }
  A.find_diagonal();
  return A;
}

// Strong dependencies of every row, straight from the definition (AHAT).
template <class T>
std::vector<std::set<Index>> reference_strength(const CsrMatrix<T>& A, double theta,
                                                double max_row_sum = 1.1) {
  std::vector<std::set<Index>> S(A.nrows);
  for (Index i = 0; i < A.nrows; ++i) {
    double diag = 0, sum = 0;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      sum += A.val[k];
      if (A.col[k] == i) diag = A.val[k];
    }
    if (max_row_sum < 1 && std::abs(sum) > max_row_sum * std::abs(diag)) continue;
    double m = 0;  // largest coupling of sign opposite to the diagonal
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col[k] != i) m = std::max(m, diag < 0 ? double(A.val[k]) : -double(A.val[k]));
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const double v = diag < 0 ? double(A.val[k]) : -double(A.val[k]);
      if (A.col[k] != i && m > 0 && v > 0 && v >= theta * m) S[i].insert(A.col[k]);
    }
  }
  return S;
}

// R A P with R = P^T, in double, sequential (measurements only).
template <class T>
CsrMatrix<T> galerkin(const CsrMatrix<T>& A, const CsrMatrix<T>& P) {
  const Index n = A.nrows, nc = P.ncols;
  // AP
  std::vector<std::map<Index, double>> AP(n);
  for (Index i = 0; i < n; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const Index j = A.col[k];
      for (Index l = P.row_ptr[j]; l < P.row_ptr[j + 1]; ++l)
        AP[i][P.col[l]] += double(A.val[k]) * double(P.val[l]);
    }
  std::vector<std::map<Index, double>> C(nc);
  for (Index i = 0; i < n; ++i)
    for (Index l = P.row_ptr[i]; l < P.row_ptr[i + 1]; ++l)
      for (auto& [c, v] : AP[i]) C[P.col[l]][c] += double(P.val[l]) * v;
  CsrMatrix<T> Ac(nc, nc);
  for (Index r = 0; r < nc; ++r) {
    for (auto& [c, v] : C[r]) {
      Ac.col.push_back(c);
      Ac.val.push_back(static_cast<T>(v));
    }
    Ac.row_ptr[r + 1] = static_cast<Index>(Ac.col.size());
  }
  Ac.find_diagonal();
  return Ac;
}

}  // namespace jaxamg::testing
