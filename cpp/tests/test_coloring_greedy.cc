// greedy_coloring against an independent reference: greedy first-fit in
// node order on the dense symmetrised node graph. The colouring takes one of
// three routes (symmetric pattern: rows only; otherwise 64-bit masks of the
// colours taken by earlier nodes; past 64 colours the transposed pattern);
// all must give the reference colouring exactly. Also: the colouring that
// MULTICOLOR_GS reports after dropping its per-row colours.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "solvers/smoothers/coloring.h"
#include "solvers/smoothers/multicolor_gs.h"
#include "test_smoothers_util.h"

namespace jaxamg {
namespace {

// Node I (rows I*k .. I*k+k-1) takes the smallest colour of no earlier node
// J with a_ij != 0 or a_ji != 0 for some rows i of I and j of J.
std::vector<int> reference_colors(const CsrMatrix<double>& A, Index k) {
  const Index nodes = A.nrows / k;
  std::vector<std::set<Index>> adj(nodes);
  for (Index i = 0; i < A.nrows; ++i)
    for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      const Index I = i / k, J = A.col[p] / k;
      if (I == J) continue;
      adj[I].insert(J);
      adj[J].insert(I);
    }
  std::vector<int> node(nodes, -1);
  for (Index I = 0; I < nodes; ++I) {
    std::set<int> used;
    for (Index J : adj[I])
      if (J < I) used.insert(node[J]);
    int c = 0;
    while (used.count(c)) ++c;
    node[I] = c;
  }
  std::vector<int> color(A.nrows);
  for (Index i = 0; i < A.nrows; ++i) color[i] = node[i / k];
  return color;
}

CsrMatrix<double> from_pattern(Index n, const std::vector<std::set<Index>>& rows) {
  std::vector<Index> rp{0}, ci;
  std::vector<double> v;
  for (Index i = 0; i < n; ++i) {
    for (Index j : rows[i]) {
      ci.push_back(j);
      v.push_back(j == i ? 4.0 : -0.1);
    }
    rp.push_back(static_cast<Index>(ci.size()));
  }
  return make_csr<double>(n, n, rp.data(), ci.data(), v.data(), static_cast<Index>(ci.size()));
}

// A dense n x n pattern (n colours), with a_01 removed when `nonsymmetric`.
CsrMatrix<double> dense_pattern(Index n, bool nonsymmetric) {
  std::vector<std::set<Index>> rows(n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) rows[i].insert(j);
  if (nonsymmetric) rows[0].erase(1);
  return from_pattern(n, rows);
}

void expect_reference(const CsrMatrix<double>& A, Index k) {
  const smoothers::Coloring c = smoothers::greedy_coloring(A, k);
  const std::vector<int> ref = reference_colors(A, k);
  EXPECT_EQ(c.color, ref);
  EXPECT_EQ(c.num_colors, *std::max_element(ref.begin(), ref.end()) + 1);
  // (Rows of one node share its colour, coupled or not.)
  if (k == 1) EXPECT_TRUE(testing::coloring_is_valid(A, c.color));
  // Rows grouped by colour, ascending within a colour.
  ASSERT_EQ(c.color_ptr.size(), static_cast<size_t>(c.num_colors) + 1);
  ASSERT_EQ(c.rows.size(), static_cast<size_t>(A.nrows));
  for (int q = 0; q < c.num_colors; ++q)
    for (Index p = c.color_ptr[q]; p < c.color_ptr[q + 1]; ++p) {
      EXPECT_EQ(c.color[c.rows[p]], q);
      if (p > c.color_ptr[q]) EXPECT_LT(c.rows[p - 1], c.rows[p]);
    }
}

TEST(GreedyColoring, SymmetricPatternsMatchReference) {
  expect_reference(testing::poisson2d<double>(23), 1);
  expect_reference(testing::poisson3d<double>(7), 1);
  expect_reference(*testing::random_dominant<double>(400, 7, 3, 0.5, true), 1);
  expect_reference(dense_pattern(70, false), 1);  // 70 colours, rows only
}

TEST(GreedyColoring, NonsymmetricPatternsMatchReference) {
  for (unsigned seed : {5u, 6u, 7u}) {
    SCOPED_TRACE(seed);
    expect_reference(*testing::random_dominant<double>(500, 6, seed), 1);
  }
  // A one-sided coupling between otherwise uncoupled rows: i is coupled to
  // j < i only through a_ji.
  std::vector<std::set<Index>> rows(6);
  for (Index i = 0; i < 6; ++i) rows[i].insert(i);
  rows[0].insert(3);
  rows[1].insert(5);
  rows[2].insert(4);
  expect_reference(from_pattern(6, rows), 1);
}

TEST(GreedyColoring, MoreThan64ColoursOnANonsymmetricPattern) {
  // Past 64 colours the masks cannot hold the taken colours.
  const CsrMatrix<double> A = dense_pattern(80, true);
  expect_reference(A, 1);
  EXPECT_EQ(smoothers::greedy_coloring(A, 1).num_colors, 80);
}

TEST(GreedyColoring, BlockNodesMatchReference) {
  for (bool symmetric : {false, true}) {
    SCOPED_TRACE(symmetric);
    auto A = testing::random_dominant<double>(300, 5, 11, 0.5, symmetric);
    expect_reference(*A, 3);
  }
}

TEST(GreedyColoring, MulticolorGSReportsItsColouring) {
  auto A = testing::random_dominant<double>(250, 6, 21);
  auto s = testing::build_solver<double>(testing::solver_json("MULTICOLOR_GS"), A);
  const auto* gs = dynamic_cast<const MulticolorGSSolver<double>*>(s.solver.get());
  ASSERT_NE(gs, nullptr);
  const smoothers::Coloring expected = smoothers::greedy_coloring(*A, 1);
  const smoothers::Coloring got = gs->coloring();
  EXPECT_EQ(got.color, expected.color);
  EXPECT_EQ(got.rows, expected.rows);
  EXPECT_EQ(got.color_ptr, expected.color_ptr);
  EXPECT_EQ(got.num_colors, expected.num_colors);
}

}  // namespace
}  // namespace jaxamg
