// Aggressive (two-stage) coarsening and multipass interpolation.
#include <gtest/gtest.h>
#include <omp.h>

#include <map>

#include "amg/classical/classical_coarsening.h"
#include "amg/classical/splitting.h"
#include "amg/classical/strength.h"
#include "problems.h"
#include "test_classical_util.h"

namespace jaxamg {
namespace {

using namespace classical;
using testing::random_matrix;
using Row = std::map<Index, double>;  // fine C point -> weight

ClassicalParams aggressive(Selector sel, Interpolator in, int pmax = -1) {
  ClassicalParams p;
  p.selector = sel;
  p.interpolator = in;
  p.truncation.max_elements = pmax;
  return p;
}

// Multipass written from its definition: passes by breadth-first search
// over strong dependencies, direct weights over earlier-pass neighbours,
// rows substituted recursively.
template <class T>
std::vector<Row> reference_multipass(const CsrMatrix<T>& A, const std::vector<std::set<Index>>& S,
                                     const std::vector<int8_t>& cf) {
  const Index n = A.nrows;
  std::vector<int> pass(n, -1);
  for (Index i = 0; i < n; ++i) if (cf[i] == kCoarse) pass[i] = 0;
  for (int p = 1;; ++p) {
    std::vector<Index> now;
    for (Index i = 0; i < n; ++i) {
      if (pass[i] != -1) continue;
      for (Index j : S[i]) if (pass[j] >= 0 && pass[j] < p) { now.push_back(i); break; }
    }
    if (now.empty()) break;
    for (Index i : now) pass[i] = p;
  }
  std::vector<Row> P(n);
  std::vector<Index> order(n);
  for (Index i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) { return pass[a] < pass[b]; });
  for (Index i : order) {
    if (pass[i] == 0) { P[i][i] = 1; continue; }
    if (pass[i] < 0) continue;
    double aii = 0, na = 0, pa = 0, nd = 0, pd = 0;
    std::set<Index> D;
    for (Index j : S[i]) if (pass[j] >= 0 && pass[j] < pass[i]) D.insert(j);
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col[k] == i) aii = A.val[k];
    const double s = aii < 0 ? -1 : 1;
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      if (A.col[k] == i) continue;
      const double v = s * A.val[k];
      (v < 0 ? na : pa) += v;
      if (D.count(A.col[k])) (v < 0 ? nd : pd) += v;
    }
    const double d = s * aii + (nd == 0 ? na : 0) + (pd == 0 ? pa : 0);
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      const Index j = A.col[k];
      if (!D.count(j)) continue;
      const double v = s * A.val[k];
      const double w = v < 0 ? -(na / nd) * v / d : -(pa / pd) * v / d;
      for (auto [c, pc] : P[j]) P[i][c] += w * pc;
    }
  }
  return P;
}

template <class T>
std::vector<Row> to_rows(const CsrMatrix<T>& P, const std::vector<int8_t>& cf) {
  std::vector<Index> fine_of;
  for (Index i = 0; i < static_cast<Index>(cf.size()); ++i)
    if (cf[i] == kCoarse) fine_of.push_back(i);
  std::vector<Row> rows(P.nrows);
  for (Index i = 0; i < P.nrows; ++i)
    for (Index k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) rows[i][fine_of[P.col[k]]] = P.val[k];
  return rows;
}

TEST(ClassicalAggressive, SplittingIsASubsetWithDistanceTwoIndependence) {
  for (bool hmis_stages : {false, true}) {
    const auto A = testing::poisson3d<double>(20);
    const auto S = strength_graph(A, {StrengthKind::kAhat, 0.25, 1.1});
    std::vector<int8_t> first(A.nrows, kUndecided), cf;
    if (hmis_stages) {
      hmis(S, 7, first);
    } else {
      pmis(S, 7, first);
    }
    aggressive_splitting(S, hmis_stages, 7, cf);
    const auto Sref = testing::reference_strength(A, 0.25);
    Index nc = 0, nc1 = 0;
    for (Index i = 0; i < A.nrows; ++i) {
      nc1 += first[i] == kCoarse;
      if (cf[i] != kCoarse) continue;
      ++nc;
      EXPECT_EQ(first[i], kCoarse) << "C point " << i << " was not a first-stage C point";
      // No other C point within two strong steps (S is symmetric here).
      for (Index m : Sref[i]) {
        EXPECT_NE(cf[m], kCoarse) << i << " " << m;
        for (Index j : Sref[m]) EXPECT_TRUE(j == i || cf[j] != kCoarse) << i << " " << j;
      }
    }
    // Every first-stage C point that lost has a C point within two steps.
    for (Index i = 0; i < A.nrows; ++i) {
      if (first[i] != kCoarse || cf[i] == kCoarse) continue;
      bool near = false;
      for (Index m : Sref[i]) {
        near |= cf[m] == kCoarse;
        for (Index j : Sref[m]) near |= cf[j] == kCoarse;
      }
      EXPECT_TRUE(near) << "point " << i;
    }
    std::printf("  aggressive %s on 20^3: %d -> %d -> %d points\n", hmis_stages ? "HMIS" : "PMIS",
                A.nrows, nc1, nc);
    EXPECT_LT(nc, nc1 / 2);
    EXPECT_GT(nc, A.nrows / 40);
  }
}

TEST(ClassicalAggressive, MultipassMatchesDefinition) {
  for (unsigned seed : {3u, 4u}) {
    for (bool sym : {true, false}) {
      auto A = random_matrix<double>(500, 5, seed, sym, 0.1, 0.15);
      for (Index i = 5; i < A.nrows; i += 13)
        for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) A.val[k] = -A.val[k];
      const auto Sref = testing::reference_strength(A, 0.25);
      for (Selector sel : {Selector::kAggressivePmis, Selector::kPmis}) {
        ClassicalCoarsening<double> c(aggressive(sel, Interpolator::kMultipass));
        TransferOperators<double> ops;
        c.build(A, ops);
        const auto ref = reference_multipass(A, Sref, c.splitting());
        const auto got = to_rows(ops.P, c.splitting());
        for (Index i = 0; i < A.nrows; ++i) {
          ASSERT_EQ(got[i].size(), ref[i].size()) << "row " << i;
          for (auto [j, v] : ref[i]) EXPECT_NEAR(got[i].at(j), v, 1e-12) << i << " " << j;
        }
      }
    }
  }
}

TEST(ClassicalAggressive, ConstantsRebuildAndThreads) {
  const auto L = random_matrix<double>(6000, 5, 17, true);  // graph Laplacian
  const auto A3 = testing::poisson3d<double>(18);
  const int saved = omp_get_max_threads();
  for (const auto* A : {&L, &A3}) {
    for (Selector sel : {Selector::kAggressivePmis, Selector::kAggressiveHmis}) {
      for (Interpolator in : {Interpolator::kMultipass, Interpolator::kD2}) {
        TransferOperators<double> o1, o2;
        ClassicalCoarsening<double> c1(aggressive(sel, in, 4)), c2(aggressive(sel, in, 4));
        omp_set_num_threads(1);
        c1.build(*A, o1);
        omp_set_num_threads(2);
        c2.build(*A, o2);
        omp_set_num_threads(saved);
        EXPECT_EQ(c1.splitting(), c2.splitting());
        EXPECT_EQ(o1.P.col, o2.P.col);
        EXPECT_EQ(o1.P.val, o2.P.val);
        // At most 4 entries per row; constants where A has zero row sum (for
        // multipass only where every row has: it substitutes the rows of
        // neighbours, which near a Dirichlet boundary do not sum to one).
        const bool check_constants = A == &L || in == Interpolator::kD2;
        std::vector<double> one(o1.P.ncols, 1.0), p1(A->nrows);
        cpu::spmv(o1.P, one.data(), p1.data());
        Index empty = 0;
        for (Index i = 0; i < A->nrows; ++i) {
          const Index len = o1.P.row_ptr[i + 1] - o1.P.row_ptr[i];
          EXPECT_LE(len, 4);
          if (len == 0) { ++empty; continue; }
          double rs = 0;
          for (Index k = A->row_ptr[i]; k < A->row_ptr[i + 1]; ++k) rs += A->val[k];
          if (check_constants && std::abs(rs) < 1e-12) {
            EXPECT_NEAR(p1[i], 1.0, 1e-12) << "row " << i;
          }
        }
        // Multipass reaches every point of a connected graph.
        if (in == Interpolator::kMultipass && A == &A3) {
          EXPECT_EQ(empty, 0);
        }
        // Rebuild with the same values reproduces the build.
        const auto P0 = o1.P;
        c1.rebuild(*A, o1);
        EXPECT_EQ(o1.P.col, P0.col);
        EXPECT_EQ(o1.P.val, P0.val);
      }
    }
  }
}

}  // namespace
}  // namespace jaxamg
