// The Galerkin product on node blocks (P^T A P for smoothed aggregation of
// block systems) against an ordered-map triple product and against the
// scalar product, on random node-blocked matrices, with entries missing from
// their blocks too; shapes that do not divide into blocks are refused and
// take the scalar path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backend/cpu/block_galerkin.h"
#include "backend/cpu/spgemm.h"
#include "core/error.h"
#include "problems.h"

namespace jaxamg {
namespace {

// rows x (cols * cb) scalar matrix of `rows` nodes with rb rows each: node I
// couples to `links` random column nodes (and to node I itself when
// `with_self`), each coupling a dense rb x cb block of random values.
template <class T>
CsrMatrix<T> random_blocked(Index nodes, Index col_nodes, Index rb, Index cb, int links,
                            bool with_self, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<Index> node(0, col_nodes - 1);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<Index> rp{0}, ci;
  std::vector<T> v;
  for (Index I = 0; I < nodes; ++I) {
    std::set<Index> cols;
    if (with_self) cols.insert(I);
    for (int q = 0; q < links; ++q) cols.insert(node(gen));
    for (Index r = 0; r < rb; ++r) {
      for (Index J : cols) {
        for (Index c = 0; c < cb; ++c) {
          ci.push_back(J * cb + c);
          v.push_back(static_cast<T>(val(gen)));
        }
      }
      rp.push_back(static_cast<Index>(ci.size()));
    }
  }
  auto M = make_csr<T>(nodes * rb, col_nodes * cb, rp.data(), ci.data(), v.data(),
                       static_cast<Index>(ci.size()));
  if (rb == cb && nodes == col_nodes) M.block_dim = rb;  // a block system's matrix
  return M;
}

// M without its entry at position `at` (row `row`).
template <class T>
CsrMatrix<T> drop_entry(const CsrMatrix<T>& M, Index row, Index at) {
  std::vector<Index> rp(M.row_ptr.begin(), M.row_ptr.end()), ci(M.col.begin(), M.col.end());
  std::vector<T> v(M.val.begin(), M.val.end());
  ci.erase(ci.begin() + at);
  v.erase(v.begin() + at);
  for (Index i = row + 1; i <= M.nrows; ++i) --rp[i];
  auto out =
      make_csr<T>(M.nrows, M.ncols, rp.data(), ci.data(), v.data(), static_cast<Index>(ci.size()));
  out.block_dim = M.block_dim;
  return out;
}

// P^T (A P) by ordered maps: no kernel of the engine involved.
template <class T>
std::vector<std::map<Index, double>> map_galerkin(const CsrMatrix<T>& A, const CsrMatrix<T>& P) {
  std::vector<std::map<Index, double>> ap(A.nrows), out(P.ncols);
  for (Index i = 0; i < A.nrows; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      for (Index q = P.row_ptr[A.col[k]]; q < P.row_ptr[A.col[k] + 1]; ++q)
        ap[i][P.col[q]] += static_cast<double>(A.val[k]) * static_cast<double>(P.val[q]);
  for (Index i = 0; i < P.nrows; ++i)
    for (Index q = P.row_ptr[i]; q < P.row_ptr[i + 1]; ++q)
      for (const auto& [j, v] : ap[i]) out[P.col[q]][j] += static_cast<double>(P.val[q]) * v;
  return out;
}

// Ac holds every entry of ref with its value; an entry beyond ref's (an
// explicit zero of a block) is exactly zero, since no product reaches it.
template <class T>
void expect_matches(const CsrMatrix<T>& Ac, const std::vector<std::map<Index, double>>& ref,
                    double tol) {
  ASSERT_EQ(Ac.nrows, static_cast<Index>(ref.size()));
  ASSERT_EQ(Ac.diag_pos.size(), ref.size());
  double scale = 0;
  for (const auto& row : ref)
    for (const auto& [j, v] : row) scale = std::max(scale, std::abs(v));
  for (Index i = 0; i < Ac.nrows; ++i) {
    std::size_t found = 0;
    for (Index p = Ac.row_ptr[i]; p < Ac.row_ptr[i + 1]; ++p) {
      if (p > Ac.row_ptr[i]) ASSERT_LT(Ac.col[p - 1], Ac.col[p]) << "row " << i;
      if (Ac.col[p] == i) EXPECT_EQ(Ac.diag_pos[i], p);
      const auto it = ref[i].find(Ac.col[p]);
      if (it == ref[i].end()) {
        EXPECT_EQ(Ac.val[p], T(0)) << "row " << i << " col " << Ac.col[p];
        continue;
      }
      ++found;
      EXPECT_NEAR(static_cast<double>(Ac.val[p]), it->second, tol * scale)
          << "row " << i << " col " << it->first;
    }
    EXPECT_EQ(found, ref[i].size()) << "row " << i;
  }
}

struct Shape {
  Index fine_nodes, coarse_nodes, k, m;
};

TEST(BlockGalerkin, EqualsMapProductAndScalarProduct) {
  // Small (serial) and above the threading threshold; the shapes that run
  // unrolled (elasticity's 3 x 6 and 6 x 6 in 3D, 2 x 3 in 2D) and another.
  const Shape shapes[] = {
      {40, 9, 3, 6}, {5600, 600, 3, 6}, {500, 60, 2, 3}, {200, 30, 6, 6}, {300, 40, 3, 3}};
  for (const Shape& s : shapes) {
    const auto A = random_blocked<double>(s.fine_nodes, s.fine_nodes, s.k, s.k, 4, true, 11);
    const auto P = random_blocked<double>(s.fine_nodes, s.coarse_nodes, s.k, s.m, 2, false, 12);
    CsrMatrix<double> blocked;
    ASSERT_TRUE(cpu::block_galerkin(A, P, s.m, blocked));
    expect_matches(blocked, map_galerkin(A, P), 1e-13);

    CsrMatrix<double> scalar, through_product;
    cpu::GalerkinProduct<double>().compute(transpose(P), A, P, scalar);
    cpu::GalerkinProduct<double>().compute(transpose(P), A, P, through_product, s.m);
    EXPECT_EQ(blocked.row_ptr, scalar.row_ptr);
    EXPECT_EQ(blocked.col, scalar.col);
    EXPECT_EQ(through_product.val, blocked.val);
  }
}

TEST(BlockGalerkin, FloatMatchesDoubleReference) {
  const auto A = random_blocked<float>(800, 800, 3, 3, 5, true, 21);
  const auto P = random_blocked<float>(800, 90, 3, 6, 3, false, 22);
  CsrMatrix<float> Ac;
  ASSERT_TRUE(cpu::block_galerkin(A, P, 6, Ac));
  expect_matches(Ac, map_galerkin(A, P), 1e-6);
}

// The text of the InvalidInput that `run` throws.
template <class Run>
std::string invalid_input_text(Run run) {
  try {
    run();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(BlockGalerkin, RecomputeWithNewValuesAndChangedPattern) {
  const auto A = random_blocked<double>(1500, 1500, 3, 3, 5, true, 31);
  const auto P = random_blocked<double>(1500, 180, 3, 6, 3, false, 32);
  cpu::GalerkinProduct<double> g;
  CsrMatrix<double> Ac;
  // An empty R stands for P^T, which the blocked product does not read.
  g.compute(CsrMatrix<double>(), A, P, Ac, 6);
  expect_matches(Ac, map_galerkin(A, P), 1e-13);

  auto A2 = A;
  auto P2 = P;
  std::mt19937 gen(33);
  testing::scale_values_randomly(A2, gen);
  testing::scale_values_randomly(P2, gen);
  const auto row_ptr = Ac.row_ptr;
  const auto pattern = Ac.col;
  g.recompute(CsrMatrix<double>(), A2, P2, Ac, 6);
  EXPECT_EQ(Ac.row_ptr, row_ptr);
  EXPECT_EQ(Ac.col, pattern);
  expect_matches(Ac, map_galerkin(A2, P2), 1e-13);
  // Values only, into the kept pattern: the same as a fresh blocked product.
  CsrMatrix<double> fresh;
  ASSERT_TRUE(cpu::block_galerkin(A2, P2, 6, fresh));
  EXPECT_EQ(Ac.val, fresh.val);

  // Another pattern of the same shape: the kept coarse pattern no longer
  // fits, and Ac keeps its values.
  const auto P3 = random_blocked<double>(1500, 180, 3, 6, 3, false, 34);
  const auto kept = Ac.val;
  EXPECT_FALSE(cpu::block_galerkin_values(A2, P3, 6, Ac));
  EXPECT_EQ(Ac.val, kept);
  EXPECT_EQ(invalid_input_text([&] { g.recompute(transpose(P3), A2, P3, Ac, 6); }),
            "Galerkin product: the sparsity of A or P changed since the last compute(), so "
            "the coarse pattern is not the kept one; run a full setup");
  // Another block size than compute()'s is named as such.
  EXPECT_EQ(invalid_input_text([&] { g.recompute(transpose(P2), A2, P2, Ac, 1); }),
            "Galerkin product: recompute was given coarse_block 1 but the last compute() "
            "formed Ac on 6 x 6 blocks; pass the coarse_block of that compute()");
}

TEST(BlockGalerkin, EntriesMissingFromBlocksAreZeros) {
  const auto A = random_blocked<double>(300, 300, 3, 3, 4, true, 41);
  const auto P = random_blocked<double>(300, 40, 3, 6, 2, false, 42);
  // Entries dropped from some blocks of A (the last of the middle row of
  // every fifth node) and of P (the first of every seventh row).
  auto holed_A = A;
  for (Index I = 295; I >= 0; I -= 5)
    holed_A = drop_entry(holed_A, 3 * I + 1, A.row_ptr[3 * I + 2] - 1);
  auto holed_P = P;
  for (Index i = 892; i >= 0; i -= 7) holed_P = drop_entry(holed_P, i, P.row_ptr[i]);
  ASSERT_LT(holed_A.nnz(), A.nnz());
  ASSERT_LT(holed_P.nnz(), P.nnz());
  CsrMatrix<double> Ac;
  ASSERT_TRUE(cpu::block_galerkin(holed_A, holed_P, 6, Ac));
  expect_matches(Ac, map_galerkin(holed_A, holed_P), 1e-13);
  // Whole 6 x 6 blocks: the rows of a coarse node have one pattern.
  for (Index J = 0; J < 40; ++J) {
    const Index len = Ac.row_ptr[6 * J + 1] - Ac.row_ptr[6 * J];
    EXPECT_EQ(len % 6, 0);
    for (Index c = 1; c < 6; ++c) EXPECT_EQ(Ac.row_ptr[6 * J + c + 1] - Ac.row_ptr[6 * J + c], len);
  }
}

TEST(BlockGalerkin, ShapesThatDoNotDivideAreRefused) {
  const auto A = random_blocked<double>(200, 200, 3, 3, 4, true, 43);
  const auto P = random_blocked<double>(200, 30, 3, 6, 2, false, 44);
  CsrMatrix<double> Ac;
  Ac.nrows = -7;                                   // untouched on refusal
  EXPECT_FALSE(cpu::block_galerkin(A, P, 7, Ac));  // 180 columns in groups of 7
  auto scalar_A = A;
  scalar_A.block_dim = 1;
  EXPECT_FALSE(cpu::block_galerkin(scalar_A, P, 6, Ac));
  auto block7_A = A;
  block7_A.block_dim = 7;  // 600 rows
  EXPECT_FALSE(cpu::block_galerkin(block7_A, P, 6, Ac));
  EXPECT_EQ(Ac.nrows, -7);

  // The Galerkin product then forms the scalar product, still P^T A P.
  CsrMatrix<double> through_product;
  cpu::GalerkinProduct<double>().compute(transpose(P), A, P, through_product, 7);
  expect_matches(through_product, map_galerkin(A, P), 1e-13);
  // With R left empty (R = P^T), the scalar product forms the transpose.
  CsrMatrix<double> from_empty_r;
  cpu::GalerkinProduct<double> g;
  g.compute(CsrMatrix<double>(), A, P, from_empty_r, 7);
  EXPECT_EQ(from_empty_r.col, through_product.col);
  EXPECT_EQ(from_empty_r.val, through_product.val);
  auto A2 = A;
  std::mt19937 gen(45);
  testing::scale_values_randomly(A2, gen);
  g.recompute(CsrMatrix<double>(), A2, P, from_empty_r, 7);
  expect_matches(from_empty_r, map_galerkin(A2, P), 1e-13);
}

}  // namespace
}  // namespace jaxamg
