// Aggregation coarsening: the aggregates (a partition, bounded sizes, pairs
// of neighbours), the directly built coarse matrix against a dense P^T A P,
// resetup, determinism across thread counts, and config validation.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "amg/aggregation/aggregation_coarsening.h"
#include "amg/aggregation/pairwise_matching.h"
#include "amg/aggregation/weight_graph.h"
#include "amg/coarsening.h"
#include "core/error.h"
#include "problems.h"

namespace jaxamg {
namespace {

using aggregation::AggregationCoarsening;
using aggregation::AggregationOptions;
using aggregation::Aggregates;
using aggregation::SelectorKind;

// Random sparse matrix with about `per_row` off-diagonal entries per row.
// spd: A = B + B^T + diagonal dominance; otherwise an unsymmetric pattern
// with positive diagonal and mixed-sign off-diagonals.
template <class T>
CsrMatrix<T> random_matrix(int n, int per_row, bool spd, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<std::vector<std::pair<Index, double>>> rows(n);
  for (int i = 0; i < n; ++i) {
    for (int e = 0; e < per_row; ++e) {
      const int j = pick(gen);
      if (j == i) continue;
      const double v = spd ? -std::abs(value(gen)) : value(gen);
      rows[i].emplace_back(j, v);
      if (spd) rows[j].emplace_back(i, v);
    }
  }
  std::vector<Index> rp{0}, ci;
  std::vector<T> vals;
  for (int i = 0; i < n; ++i) {
    double off = 0;
    for (auto& [j, v] : rows[i]) off += std::abs(v);
    rows[i].emplace_back(i, off + 0.5 + std::abs(value(gen)));
    for (auto& [j, v] : rows[i]) {
      ci.push_back(j);
      vals.push_back(static_cast<T>(v));
    }
    rp.push_back(static_cast<Index>(ci.size()));
  }
  return make_csr<T>(n, n, rp.data(), ci.data(), vals.data(), static_cast<Index>(ci.size()));
}

AggregationOptions options(SelectorKind s, bool merge = true, int weight_formula = 0) {
  AggregationOptions opt;
  opt.selector = s;
  opt.passes = s == SelectorKind::kSize2 ? 1 : s == SelectorKind::kSize4 ? 2 : 3;
  opt.weight_formula = weight_formula;
  opt.matching.merge_singletons = merge;
  return opt;
}

int nominal_size(SelectorKind s) { return s == SelectorKind::kSize2 ? 2 : s == SelectorKind::kSize4 ? 4 : 8; }

// Every node in exactly one aggregate; members consistent with `of`.
void expect_partition(const Aggregates& agg, Index n) {
  ASSERT_EQ(agg.n, n);
  ASSERT_EQ(static_cast<Index>(agg.of.size()), n);
  ASSERT_EQ(static_cast<Index>(agg.ptr.size()), agg.count + 1);
  ASSERT_EQ(agg.ptr[agg.count], n);
  std::vector<int> seen(n, 0);
  for (Index a = 0; a < agg.count; ++a) {
    EXPECT_GT(agg.size(a), 0) << "empty aggregate " << a;
    for (Index m = agg.ptr[a]; m < agg.ptr[a + 1]; ++m) {
      const Index i = agg.members[m];
      ASSERT_GE(i, 0);
      ASSERT_LT(i, n);
      ++seen[i];
      EXPECT_EQ(agg.of[i], a);
    }
  }
  for (Index i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << "node " << i;
}

std::vector<double> dense(const CsrMatrix<double>& A) {
  std::vector<double> D(static_cast<size_t>(A.nrows) * A.ncols, 0.0);
  for (Index i = 0; i < A.nrows; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) D[i * A.ncols + A.col[k]] += A.val[k];
  return D;
}

template <class T>
CsrMatrix<double> to_double(const CsrMatrix<T>& A) { return convert_values<double>(A); }

// Dense P^T A P from the P the coarsening produced.
template <class T>
std::vector<double> naive_galerkin(const CsrMatrix<T>& A, const CsrMatrix<T>& P) {
  const int n = A.nrows, nc = P.ncols;
  const std::vector<double> Ad = dense(to_double(A)), Pd = dense(to_double(P));
  std::vector<double> AP(static_cast<size_t>(n) * nc, 0.0), C(static_cast<size_t>(nc) * nc, 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      if (Ad[i * n + k] != 0)
        for (int J = 0; J < nc; ++J) AP[i * nc + J] += Ad[i * n + k] * Pd[k * nc + J];
  for (int I = 0; I < nc; ++I)
    for (int i = 0; i < n; ++i)
      if (Pd[i * nc + I] != 0)
        for (int J = 0; J < nc; ++J) C[I * nc + J] += Pd[i * nc + I] * AP[i * nc + J];
  return C;
}

template <class T>
void expect_matches_naive(const CsrMatrix<T>& A, const TransferOperators<T>& ops,
                          const CsrMatrix<T>& Ac, double rel_tol) {
  const std::vector<double> ref = naive_galerkin(A, ops.P);
  const std::vector<double> got = dense(to_double(Ac));
  ASSERT_EQ(got.size(), ref.size());
  double scale = 0;
  for (double v : ref) scale = std::max(scale, std::abs(v));
  for (size_t k = 0; k < ref.size(); ++k)
    ASSERT_NEAR(got[k], ref[k], rel_tol * scale) << "entry " << k / Ac.ncols << ", " << k % Ac.ncols;
  // Sorted, unique columns and a diagonal in every row.
  for (Index I = 0; I < Ac.nrows; ++I) {
    for (Index p = Ac.row_ptr[I] + 1; p < Ac.row_ptr[I + 1]; ++p) ASSERT_LT(Ac.col[p - 1], Ac.col[p]);
    ASSERT_GE(Ac.diag_pos[I], 0);
  }
}

const SelectorKind kSelectors[] = {SelectorKind::kSize2, SelectorKind::kSize4,
                                   SelectorKind::kSize8, SelectorKind::kMultiPairwise};

TEST(AggregationSelect, PartitionAndTransferOperators) {
  const auto A = random_matrix<double>(500, 4, false, 7);
  for (SelectorKind s : kSelectors) {
    AggregationCoarsening<double> c(options(s));
    TransferOperators<double> ops;
    c.build(A, ops);
    const Aggregates& agg = c.aggregates();
    expect_partition(agg, A.nrows);
    ASSERT_EQ(ops.P.nrows, A.nrows);
    ASSERT_EQ(ops.P.ncols, agg.count);
    for (Index i = 0; i < A.nrows; ++i) {
      ASSERT_EQ(ops.P.row_ptr[i + 1] - ops.P.row_ptr[i], 1);
      EXPECT_EQ(ops.P.col[ops.P.row_ptr[i]], agg.of[i]);
      EXPECT_EQ(ops.P.val[ops.P.row_ptr[i]], 1.0);
    }
    const CsrMatrix<double> Pt = transpose(ops.P);
    EXPECT_EQ(ops.R.nrows, agg.count);
    EXPECT_EQ(ops.R.ncols, A.nrows);
    EXPECT_EQ(ops.R.row_ptr, Pt.row_ptr);
    EXPECT_EQ(ops.R.col, Pt.col);
    EXPECT_EQ(ops.R.val, Pt.val);
  }
}

// Without merging, a pass at most doubles an aggregate; with merging each
// aggregate absorbs at most one leftover per pass, so at most triples.
TEST(AggregationSelect, AggregateSizesAreBounded) {
  const auto poisson = testing::poisson3d<double>(14);
  const auto random = random_matrix<double>(3000, 5, true, 11);
  for (const CsrMatrix<double>* A : {&poisson, &random}) {
    for (SelectorKind s : {SelectorKind::kSize2, SelectorKind::kSize4, SelectorKind::kSize8}) {
      const int passes = options(s).passes;
      int bound_merged = 1;
      for (int p = 0; p < passes; ++p) bound_merged *= 3;
      const Aggregates strict = aggregation::select_aggregates(*A, options(s, false));
      expect_partition(strict, A->nrows);
      EXPECT_LE(strict.max_size(), nominal_size(s));
      const Aggregates merged = aggregation::select_aggregates(*A, options(s, true));
      expect_partition(merged, A->nrows);
      EXPECT_LE(merged.max_size(), bound_merged);
      // Merging leaves fewer singletons behind.
      auto singletons = [](const Aggregates& a) {
        Index c = 0;
        for (Index k = 0; k < a.count; ++k) c += a.size(k) == 1;
        return c;
      };
      EXPECT_LE(singletons(merged), singletons(strict));
    }
  }
}

// On a 1D Poisson every aggregate of SIZE_2 is a run of consecutive nodes:
// a neighbour pair, or a pair that absorbed the unmatched node next to it.
// On a path a maximal matching leaves more than 5% unmatched, so the rounds
// stop only when no two unmatched nodes are adjacent.
TEST(AggregationSelect, Poisson1DPairsNeighbours) {
  const int n = 1001;
  const auto A = testing::poisson1d<double>(n);
  for (bool merge : {false, true}) {
    const Aggregates agg = aggregation::select_aggregates(A, options(SelectorKind::kSize2, merge));
    expect_partition(agg, n);
    Index singletons = 0;
    for (Index a = 0; a < agg.count; ++a) {
      const Index first = agg.members[agg.ptr[a]];
      const Index size = agg.size(a);
      for (Index m = 1; m < size; ++m) EXPECT_EQ(agg.members[agg.ptr[a] + m], first + m) << "aggregate " << a;
      EXPECT_LE(size, merge ? 3 : 2);
      singletons += size == 1;
    }
    if (!merge) {
      // Maximal: no two neighbouring nodes both left alone.
      for (Index i = 0; i + 1 < n; ++i)
        EXPECT_FALSE(agg.size(agg.of[i]) == 1 && agg.size(agg.of[i + 1]) == 1) << "nodes " << i << ", " << i + 1;
      EXPECT_GT(singletons, 0);  // a random maximal matching of a path is not perfect
    } else {
      // Every leftover sits next to a pair; only a leftover whose two
      // neighbouring pairs both absorbed another node stays alone.
      EXPECT_LT(singletons, n / 100);
    }
  }
}

TEST(AggregationSelect, CoarseningRatiosOnPoisson3D) {
  const auto A = testing::poisson3d<double>(20);
  const double n = A.nrows;
  // Merged leftovers push the ratios somewhat above 2, 4 and 8.
  const std::tuple<SelectorKind, double, double> expected[] = {
      {SelectorKind::kSize2, 1.95, 2.5}, {SelectorKind::kSize4, 3.8, 5.5},
      {SelectorKind::kSize8, 7.5, 12.0}, {SelectorKind::kMultiPairwise, 7.5, 12.0}};
  for (const auto& [s, lo, hi] : expected) {
    const Aggregates agg = aggregation::select_aggregates(A, options(s));
    const double ratio = n / agg.count;
    EXPECT_GE(ratio, lo) << "selector " << static_cast<int>(s);
    EXPECT_LE(ratio, hi) << "selector " << static_cast<int>(s);
  }
}

template <class T>
void check_coarse_matrices(double tol) {
  const CsrMatrix<T> matrices[] = {random_matrix<T>(240, 4, true, 3),
                                   random_matrix<T>(260, 5, false, 5),
                                   testing::convection_diffusion2d<T>(15, 0.01)};
  for (const CsrMatrix<T>& A : matrices) {
    for (SelectorKind s : kSelectors) {
      for (int wf : {0, 1}) {
        AggregationCoarsening<T> c(options(s, true, wf));
        TransferOperators<T> ops;
        c.build(A, ops);
        ASSERT_GT(ops.P.ncols, 0);
        ASSERT_LT(ops.P.ncols, A.nrows);
        ASSERT_TRUE(c.builds_coarse_matrix());
        CsrMatrix<T> Ac;
        c.coarse_matrix(A, ops, Ac);
        expect_matches_naive(A, ops, Ac, tol);
      }
    }
  }
}

TEST(AggregationGalerkin, MatchesDenseProductDouble) { check_coarse_matrices<double>(1e-13); }
TEST(AggregationGalerkin, MatchesDenseProductFloat) { check_coarse_matrices<float>(2e-6); }

// New values on the same pattern: the rebuilt A_c equals P^T A_new P for the
// kept aggregates, and equals a fresh build's when the fresh build picks the
// same aggregates (weight_formula 0 sees only |a_ij| relative to the
// diagonal, so scaling by a power of two and sign flips leave the weights
// bitwise unchanged; MULTI_PAIRWISE weighs sums of signed values, so it gets
// the scaling only).
TEST(AggregationGalerkin, RebuildMatchesFreshBuild) {
  const auto A = random_matrix<double>(400, 5, true, 21);
  for (SelectorKind s : kSelectors) {
    AggregationCoarsening<double> c(options(s, true, 0));
    TransferOperators<double> ops;
    c.build(A, ops);
    CsrMatrix<double> Ac;
    c.coarse_matrix(A, ops, Ac);
    const std::vector<Index> pattern_ptr = Ac.row_ptr.to_vector(), pattern_col = Ac.col.to_vector();
    const Aggregates before = c.aggregates();

    // (a) arbitrary new values
    CsrMatrix<double> A2 = A;
    std::mt19937 gen(99);
    std::uniform_real_distribution<double> u(0.5, 2.0);
    for (auto& v : A2.val) v *= u(gen);
    c.rebuild(A2, ops);
    c.coarse_matrix(A2, ops, Ac);
    EXPECT_EQ(c.aggregates().of, before.of);
    EXPECT_EQ(Ac.row_ptr, pattern_ptr);
    EXPECT_EQ(Ac.col, pattern_col);
    expect_matches_naive(A2, ops, Ac, 1e-13);

    // (b) 4 A with random signs: a fresh build picks the same aggregates and
    // must produce the same A_c as the rebuild.
    CsrMatrix<double> A3 = A;
    std::bernoulli_distribution flip(s == SelectorKind::kMultiPairwise ? 0.0 : 0.5);
    for (auto& v : A3.val) v *= flip(gen) ? -4.0 : 4.0;
    c.rebuild(A3, ops);
    c.coarse_matrix(A3, ops, Ac);
    AggregationCoarsening<double> fresh(options(s, true, 0));
    TransferOperators<double> fresh_ops;
    fresh.build(A3, fresh_ops);
    ASSERT_EQ(fresh.aggregates().of, before.of);
    CsrMatrix<double> Ac_fresh;
    fresh.coarse_matrix(A3, fresh_ops, Ac_fresh);
    EXPECT_EQ(Ac.row_ptr, Ac_fresh.row_ptr);
    EXPECT_EQ(Ac.col, Ac_fresh.col);
    EXPECT_EQ(Ac.val, Ac_fresh.val);
    expect_matches_naive(A3, ops, Ac, 1e-13);
  }
}

TEST(AggregationGalerkin, RebuildRejectsAnotherPattern) {
  const auto A = testing::poisson2d<double>(10);
  AggregationCoarsening<double> c(options(SelectorKind::kSize2));
  TransferOperators<double> ops;
  c.build(A, ops);
  const auto B = testing::poisson2d<double>(11);
  try {
    c.rebuild(B, ops);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("same sparsity pattern"), std::string::npos) << e.what();
  }
}

// Sizes chosen so that every pass runs its parallel loops (graphs above
// 4096 nodes; SIZE_8's third pass still has more than that).
TEST(AggregationSelect, DeterministicAcrossThreadCounts) {
  const auto poisson = testing::poisson3d<double>(36);
  const auto random = random_matrix<double>(20000, 5, false, 31);
  const std::pair<const CsrMatrix<double>*, SelectorKind> cases[] = {
      {&poisson, SelectorKind::kSize8},
      {&poisson, SelectorKind::kMultiPairwise},
      {&random, SelectorKind::kSize2}};
  const int saved = omp_get_max_threads();
  for (const auto& [A, s] : cases) {
    std::vector<Index> of[2];
    CsrMatrix<double> Ac[2];
    for (int t : {1, 2}) {
      omp_set_num_threads(t);
      AggregationCoarsening<double> c(options(s));
      TransferOperators<double> ops;
      c.build(*A, ops);
      c.coarse_matrix(*A, ops, Ac[t - 1]);
      of[t - 1] = c.aggregates().of;
    }
    EXPECT_EQ(of[0], of[1]);
    EXPECT_EQ(Ac[0].row_ptr, Ac[1].row_ptr);
    EXPECT_EQ(Ac[0].col, Ac[1].col);
    EXPECT_EQ(Ac[0].val, Ac[1].val);
  }
  omp_set_num_threads(saved);
}

// A second handshake in the same round pairs nodes whose first pick was
// taken; with a single round that must leave fewer nodes unmatched.
TEST(AggregationSelect, SecondHandshakePhaseMatchesMore) {
  const auto A = testing::poisson3d<double>(12);
  const auto g = aggregation::edge_weight_graph(A, 0);
  aggregation::MatchingOptions one;
  one.max_iterations = 1;
  one.merge_singletons = false;
  aggregation::MatchingOptions two = one;
  two.handshaking_phases = 2;
  const Aggregates a1 = aggregation::pairwise_aggregates(g, one);
  const Aggregates a2 = aggregation::pairwise_aggregates(g, two);
  expect_partition(a2, A.nrows);
  EXPECT_LE(a2.max_size(), 2);
  EXPECT_LT(a2.count, a1.count);
}

TEST(AggregationSelect, DummyGroupsConsecutiveRows) {
  const Config cfg = Config::parse(R"({"config_version": 2, "solver": {"scope": "amg",
      "solver": "AMG", "algorithm": "AGGREGATION", "selector": "DUMMY", "aggregate_size": 3}})");
  auto c = make_coarsening<double>(cfg, "amg", 0);
  const auto A = testing::poisson1d<double>(10);
  TransferOperators<double> ops;
  c->build(A, ops);
  EXPECT_EQ(ops.P.ncols, 4);
  EXPECT_EQ(ops.P.col, (std::vector<Index>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3}));
}

TEST(AggregationSelect, UncoarsenableMatrixGivesEmptyP) {
  // A diagonal matrix has no edges: nothing can be paired.
  std::vector<Index> rp{0, 1, 2, 3}, ci{0, 1, 2};
  std::vector<double> v{1, 2, 3};
  const auto A = make_csr<double>(3, 3, rp.data(), ci.data(), v.data(), 3);
  AggregationCoarsening<double> c(options(SelectorKind::kSize8));
  TransferOperators<double> ops;
  c.build(A, ops);
  EXPECT_EQ(ops.P.nrows, 3);
  EXPECT_EQ(ops.P.ncols, 0);
}

TEST(AggregationSelect, WeightFormulaOneNeedsDiagonal) {
  std::vector<Index> rp{0, 2, 4}, ci{0, 1, 0, 1};
  std::vector<double> v{1, -1, -1, 0};
  const auto A = make_csr<double>(2, 2, rp.data(), ci.data(), v.data(), 4);
  try {
    aggregation::select_aggregates(A, options(SelectorKind::kSize2, true, 1));
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("weight_formula = 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("row 1"), std::string::npos) << msg;
  }
  // Formula 0 copes: the edge still has a positive weight.
  const Aggregates agg = aggregation::select_aggregates(A, options(SelectorKind::kSize2, true, 0));
  EXPECT_EQ(agg.count, 1);
}

// ---- configuration ------------------------------------------------------------

Config amg_config(const std::string& extra) {
  return Config::parse(R"({"config_version": 2, "solver": {"scope": "amg", "solver": "AMG",
                           "algorithm": "AGGREGATION")" + extra + "}}");
}

TEST(AggregationConfig, RejectsClassicalSelectors) {
  for (const std::string sel : {"", "PMIS", "HMIS", "AGGRESSIVE_PMIS", "CR"}) {
    const std::string extra = sel.empty() ? "" : R"(, "selector": ")" + sel + "\"";
    const Config cfg = amg_config(extra);
    try {
      make_coarsening<double>(cfg, "amg", 0);
      FAIL() << "expected ConfigError for selector '" << sel << "'";
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'" + (sel.empty() ? std::string("PMIS") : sel) + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("SIZE_2, SIZE_4, SIZE_8 or MULTI_PAIRWISE"), std::string::npos) << msg;
      EXPECT_NE(msg.find("has not been registered"), std::string::npos) << msg;
    }
  }
}

TEST(AggregationConfig, ReadsSelectorAndParameters) {
  const Config cfg = amg_config(R"(, "selector": "MULTI_PAIRWISE", "aggregation_passes": 2,
      "weight_formula": 1, "max_matching_iterations": 7, "max_unassigned_percentage": 0.1,
      "merge_singletons": 0, "handshaking_phases": 2)");
  auto c = make_coarsening<float>(cfg, "amg", 0);
  auto* agg = dynamic_cast<AggregationCoarsening<float>*>(c.get());
  ASSERT_NE(agg, nullptr);
  const AggregationOptions& o = agg->options();
  EXPECT_EQ(o.selector, SelectorKind::kMultiPairwise);
  EXPECT_EQ(o.passes, 2);
  EXPECT_EQ(o.weight_formula, 1);
  EXPECT_EQ(o.matching.max_iterations, 7);
  EXPECT_DOUBLE_EQ(o.matching.max_unassigned_fraction, 0.1);
  EXPECT_FALSE(o.matching.merge_singletons);
  EXPECT_EQ(o.matching.handshaking_phases, 2);
  EXPECT_TRUE(c->builds_coarse_matrix());

  for (auto [sel, passes] : {std::pair{"SIZE_2", 1}, {"SIZE_4", 2}, {"SIZE_8", 3}}) {
    auto ci = make_coarsening<double>(amg_config(std::string(R"(, "selector": ")") + sel + "\""), "amg", 0);
    auto* a = dynamic_cast<AggregationCoarsening<double>*>(ci.get());
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(a->options().passes, passes) << sel;
  }
}

TEST(AggregationConfig, RejectsBadValuesNamingTheParameter) {
  const std::pair<std::string, std::string> bad[] = {
      {R"("weight_formula": 2)", "weight_formula = 2"},
      {R"("max_matching_iterations": 0)", "max_matching_iterations = 0"},
      {R"("handshaking_phases": 3)", "handshaking_phases = 3"},
      {R"("merge_singletons": 2)", "merge_singletons = 2"},
      {R"("max_unassigned_percentage": 1.5)", "max_unassigned_percentage"},
      {R"("aggregation_passes": 0, "selector": "MULTI_PAIRWISE")", "aggregation_passes = 0"},
  };
  for (const auto& [json, expect] : bad) {
    std::string extra = ", " + json;
    if (json.find("selector") == std::string::npos) extra += R"(, "selector": "SIZE_2")";
    try {
      make_coarsening<double>(amg_config(extra), "amg", 0);
      FAIL() << "expected ConfigError for " << json;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(make_coarsening<double>(amg_config(R"(, "selector": "SIZE_2", "notay_weights": 1)"),
                                       "amg", 0),
               NotSupported);
  EXPECT_THROW(make_coarsening<double>(amg_config(R"(, "selector": "GEO")"), "amg", 0),
               NotSupported);
}

}  // namespace
}  // namespace jaxamg
