// SpGEMM and the Galerkin product against independent references: a naive
// dense product for small matrices and an ordered-map accumulation for
// matrices large enough to run the parallel path.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "backend/cpu/spgemm.h"
#include "core/error.h"
#include "problems.h"

namespace jaxamg {
namespace {

// Random m x n sparse matrix: each row gets up to `per_row` random columns
// (duplicates summed by make_csr), some rows left empty.
template <class T>
CsrMatrix<T> random_sparse(Index m, Index n, int per_row, unsigned seed, double empty_rows = 0.1) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<Index> col(0, n - 1);
  std::uniform_int_distribution<int> count(1, per_row);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<Index> rp{0}, ci;
  std::vector<T> v;
  for (Index i = 0; i < m; ++i) {
    if (n > 0 && u(gen) >= empty_rows) {
      const int k = count(gen);
      for (int q = 0; q < k; ++q) {
        ci.push_back(col(gen));
        v.push_back(static_cast<T>(val(gen)));
      }
    }
    rp.push_back(static_cast<Index>(ci.size()));
  }
  return make_csr<T>(m, n, rp.data(), ci.data(), v.data(), static_cast<Index>(ci.size()));
}

std::vector<double> dense(const CsrMatrix<double>& A) {
  std::vector<double> D(static_cast<std::size_t>(A.nrows) * A.ncols, 0.0);
  for (Index i = 0; i < A.nrows; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) D[i * A.ncols + A.col[k]] += A.val[k];
  return D;
}

// Naive dense product and the structural pattern (i, j) with some a_ik b_kj.
struct DenseProduct {
  Index m, n;
  std::vector<double> val;
  std::vector<char> structural;
};

DenseProduct naive_product(const CsrMatrix<double>& A, const CsrMatrix<double>& B) {
  const std::vector<double> a = dense(A), b = dense(B);
  std::vector<char> sa(a.size(), 0), sb(b.size(), 0);
  for (Index i = 0; i < A.nrows; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) sa[i * A.ncols + A.col[k]] = 1;
  for (Index i = 0; i < B.nrows; ++i)
    for (Index k = B.row_ptr[i]; k < B.row_ptr[i + 1]; ++k) sb[i * B.ncols + B.col[k]] = 1;
  DenseProduct C{A.nrows, B.ncols, std::vector<double>(A.nrows * B.ncols, 0.0),
                 std::vector<char>(A.nrows * B.ncols, 0)};
  for (Index i = 0; i < A.nrows; ++i)
    for (Index k = 0; k < A.ncols; ++k)
      for (Index j = 0; j < B.ncols; ++j) {
        C.val[i * C.n + j] += a[i * A.ncols + k] * b[k * B.ncols + j];
        if (sa[i * A.ncols + k] && sb[k * B.ncols + j]) C.structural[i * C.n + j] = 1;
      }
  return C;
}

// Canonical CSR: sorted unique columns in range, diag_pos consistent.
template <class T>
void expect_canonical(const CsrMatrix<T>& C) {
  ASSERT_EQ(static_cast<Index>(C.row_ptr.size()), C.nrows + 1);
  ASSERT_EQ(C.col.size(), C.val.size());
  ASSERT_EQ(static_cast<Index>(C.diag_pos.size()), C.nrows);
  for (Index i = 0; i < C.nrows; ++i) {
    Index diag = -1;
    for (Index k = C.row_ptr[i]; k < C.row_ptr[i + 1]; ++k) {
      ASSERT_GE(C.col[k], 0);
      ASSERT_LT(C.col[k], C.ncols);
      if (k > C.row_ptr[i]) ASSERT_LT(C.col[k - 1], C.col[k]) << "row " << i;
      if (C.col[k] == i) diag = k;
    }
    EXPECT_EQ(C.diag_pos[i], diag) << "row " << i;
  }
}

void expect_matches_dense(const CsrMatrix<double>& C, const DenseProduct& ref) {
  expect_canonical(C);
  ASSERT_EQ(C.nrows, ref.m);
  ASSERT_EQ(C.ncols, ref.n);
  std::vector<char> seen(ref.val.size(), 0);
  for (Index i = 0; i < C.nrows; ++i)
    for (Index k = C.row_ptr[i]; k < C.row_ptr[i + 1]; ++k) {
      const std::size_t at = static_cast<std::size_t>(i) * ref.n + C.col[k];
      seen[at] = 1;
      EXPECT_NEAR(C.val[k], ref.val[at], 1e-12 * (1 + std::abs(ref.val[at])));
    }
  for (std::size_t at = 0; at < seen.size(); ++at) {
    EXPECT_EQ(seen[at], ref.structural[at]) << "entry " << at / ref.n << ", " << at % ref.n;
  }
}

// Reference by ordered maps: independent of the kernel's accumulator.
template <class T>
std::vector<std::map<Index, double>> map_product(const CsrMatrix<T>& A, const CsrMatrix<T>& B) {
  std::vector<std::map<Index, double>> rows(A.nrows);
  for (Index i = 0; i < A.nrows; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      for (Index q = B.row_ptr[A.col[k]]; q < B.row_ptr[A.col[k] + 1]; ++q)
        rows[i][B.col[q]] += static_cast<double>(A.val[k]) * static_cast<double>(B.val[q]);
  return rows;
}

template <class T>
void expect_matches_map(const CsrMatrix<T>& C, const std::vector<std::map<Index, double>>& ref,
                        double tol) {
  expect_canonical(C);
  ASSERT_EQ(C.nrows, static_cast<Index>(ref.size()));
  for (Index i = 0; i < C.nrows; ++i) {
    ASSERT_EQ(C.row_ptr[i + 1] - C.row_ptr[i], static_cast<Index>(ref[i].size())) << "row " << i;
    Index k = C.row_ptr[i];
    for (const auto& [j, v] : ref[i]) {
      ASSERT_EQ(C.col[k], j);
      EXPECT_NEAR(static_cast<double>(C.val[k]), v, tol * (1 + std::abs(v)));
      ++k;
    }
  }
}

TEST(Spgemm, RectangularMatchesNaiveDenseProduct) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const Index m = 17 + seed * 5, k = 23 + seed * 3, n = 11 + seed * 7;
    const auto A = random_sparse<double>(m, k, 5, seed);
    const auto B = random_sparse<double>(k, n, 4, 100 + seed);
    expect_matches_dense(cpu::spgemm(A, B), naive_product(A, B));
  }
}

TEST(Spgemm, SquareProductFindsDiagonal) {
  const auto A = random_sparse<double>(40, 40, 6, 7, 0.0);
  const auto B = random_sparse<double>(40, 40, 6, 8, 0.0);
  const auto C = cpu::spgemm(A, B);
  expect_matches_dense(C, naive_product(A, B));
  Index with_diag = 0;
  for (Index i = 0; i < C.nrows; ++i) with_diag += C.diag_pos[i] >= 0;
  EXPECT_GT(with_diag, 0);  // the check above covered stored diagonals
}

TEST(Spgemm, EmptyShapes) {
  const auto A = random_sparse<double>(5, 0, 3, 1);
  const auto B = random_sparse<double>(0, 7, 3, 2);
  const auto C = cpu::spgemm(A, B);
  EXPECT_EQ(C.nrows, 5);
  EXPECT_EQ(C.ncols, 7);
  EXPECT_EQ(C.nnz(), 0);
  expect_canonical(C);
  const auto Z = random_sparse<double>(0, 4, 3, 3);
  const auto D = cpu::spgemm(Z, random_sparse<double>(4, 6, 3, 4));
  EXPECT_EQ(D.nrows, 0);
  EXPECT_EQ(D.nnz(), 0);
}

TEST(Spgemm, LargeProductUsesParallelPathCorrectly) {
  // About 3e6 multiply-adds: well above the serial cut-off.
  const auto A = random_sparse<double>(20000, 15000, 12, 11);
  const auto B = random_sparse<double>(15000, 9000, 14, 12);
  expect_matches_map(cpu::spgemm(A, B), map_product(A, B), 1e-12);
  const auto Af = random_sparse<float>(12000, 12000, 10, 13);
  const auto Bf = random_sparse<float>(12000, 12000, 10, 14);
  expect_matches_map(cpu::spgemm(Af, Bf), map_product(Af, Bf), 1e-5);
}

TEST(Spgemm, SymbolicThenNumericEqualsFusedProduct) {
  for (Index size : {30, 6000}) {
    const auto A = random_sparse<double>(size, size + 3, 8, 21);
    const auto B = random_sparse<double>(size + 3, size - 1, 8, 22);
    const auto fused = cpu::spgemm(A, B);
    auto C = cpu::spgemm_symbolic(A, B);
    EXPECT_EQ(C.row_ptr, fused.row_ptr);
    EXPECT_EQ(C.col, fused.col);
    EXPECT_EQ(C.diag_pos, fused.diag_pos);
    cpu::spgemm_numeric(A, B, C);
    EXPECT_EQ(C.val, fused.val);  // same accumulation order: identical bits

    // New values on the same patterns: the numeric phase alone must equal a
    // fresh product.
    auto A2 = A;
    auto B2 = B;
    std::mt19937 gen(5);
    std::uniform_real_distribution<double> val(-2.0, 2.0);
    for (auto& v : A2.val) v = val(gen);
    for (auto& v : B2.val) v = val(gen);
    cpu::spgemm_numeric(A2, B2, C);
    const auto fresh = cpu::spgemm(A2, B2);
    EXPECT_EQ(C.col, fresh.col);
    EXPECT_EQ(C.val, fresh.val);
    if (size <= 30) expect_matches_dense(C, naive_product(A2, B2));
  }
}

TEST(Spgemm, NumericRejectsChangedPattern) {
  const auto A = random_sparse<double>(30, 30, 4, 31, 0.0);
  const auto B = random_sparse<double>(30, 30, 4, 32, 0.0);
  auto C = cpu::spgemm_symbolic(A, B);
  const auto A_other = random_sparse<double>(30, 30, 4, 33, 0.0);
  try {
    cpu::spgemm_numeric(A_other, B, C);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("outside the kept pattern"), std::string::npos)
        << e.what();
  }
  auto wrong_shape = cpu::spgemm_symbolic(A, random_sparse<double>(30, 29, 4, 34));
  EXPECT_THROW(cpu::spgemm_numeric(A, B, wrong_shape), InvalidInput);
}

TEST(Spgemm, RejectsInnerDimensionMismatch) {
  const auto A = random_sparse<double>(4, 5, 2, 1);
  const auto B = random_sparse<double>(6, 3, 2, 2);
  try {
    cpu::spgemm(A, B);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("A is 4 x 5, B is 6 x 3"), std::string::npos) << e.what();
  }
}

TEST(Spgemm, GalerkinEqualsNaiveTripleProduct) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    const Index n = 30 + 7 * seed, nc = 9 + 2 * seed;
    const auto A = random_sparse<double>(n, n, 6, seed, 0.0);
    const auto P = random_sparse<double>(n, nc, 3, 50 + seed);
    const auto R = random_sparse<double>(nc, n, 8, 90 + seed);  // not P^T
    CsrMatrix<double> Ac;
    cpu::GalerkinProduct<double> g;
    EXPECT_FALSE(g.has_plan());
    g.compute(R, A, P, Ac);
    EXPECT_TRUE(g.has_plan());
    // (R A) P densely, in the other order, as the reference.
    const DenseProduct RA = naive_product(R, A);
    const std::vector<double> p = dense(P);
    std::vector<double> ref(nc * nc, 0.0);
    for (Index i = 0; i < nc; ++i)
      for (Index k = 0; k < n; ++k)
        for (Index j = 0; j < nc; ++j) ref[i * nc + j] += RA.val[i * n + k] * p[k * nc + j];
    expect_canonical(Ac);
    std::vector<double> got(nc * nc, 0.0);
    for (Index i = 0; i < nc; ++i)
      for (Index k = Ac.row_ptr[i]; k < Ac.row_ptr[i + 1]; ++k) got[i * nc + Ac.col[k]] = Ac.val[k];
    for (std::size_t q = 0; q < ref.size(); ++q) EXPECT_NEAR(got[q], ref[q], 1e-12 * (1 + std::abs(ref[q])));
  }
}

TEST(Spgemm, GalerkinRecomputeWithNewValuesEqualsFreshProduct) {
  const Index n = 5000, nc = 1400;
  const auto A = random_sparse<double>(n, n, 7, 61, 0.0);
  const auto P = random_sparse<double>(n, nc, 4, 62, 0.0);
  const auto R = transpose(P);
  CsrMatrix<double> Ac;
  cpu::GalerkinProduct<double> g;
  g.compute(R, A, P, Ac);

  auto A2 = A;
  auto P2 = P;
  std::mt19937 gen(9);
  testing::scale_values_randomly(A2, gen);
  testing::scale_values_randomly(P2, gen);
  const auto R2 = transpose(P2);
  g.recompute(R2, A2, P2, Ac);
  CsrMatrix<double> fresh;
  cpu::GalerkinProduct<double>().compute(R2, A2, P2, fresh);
  EXPECT_EQ(Ac.row_ptr, fresh.row_ptr);
  EXPECT_EQ(Ac.col, fresh.col);
  EXPECT_EQ(Ac.val, fresh.val);
  // Reference: R (A P) by ordered maps, no kernel involved.
  const auto ap = map_product(A2, P2);
  std::vector<std::map<Index, double>> rap(nc);
  for (Index i = 0; i < nc; ++i)
    for (Index k = R2.row_ptr[i]; k < R2.row_ptr[i + 1]; ++k)
      for (const auto& [j, v] : ap[R2.col[k]]) rap[i][j] += R2.val[k] * v;
  expect_matches_map(Ac, rap, 1e-12);

  cpu::GalerkinProduct<double> no_plan;
  EXPECT_THROW(no_plan.recompute(R2, A2, P2, Ac), InvalidInput);
}

}  // namespace
}  // namespace jaxamg
