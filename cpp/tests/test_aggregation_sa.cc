// Smoothed aggregation (x_smoothed_aggregation): P against a dense reference
// (filtering, Gershgorin damping, one Jacobi step), constants kept in the
// range of P, resetup with a frozen filter, thread-count independence,
// config wiring, and PCG + SA-AMG on 3D Poisson.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "amg/aggregation/smoothed_aggregation.h"
#include "amg/coarsening.h"
#include "api/linear_solver.h"
#include "core/error.h"
#include "problems.h"

namespace jaxamg {
namespace {

using aggregation::AggregationOptions;
using aggregation::SelectorKind;
using aggregation::SmoothedAggregationCoarsening;

// Random symmetric matrix with couplings of widely varying size, so that a
// threshold of 0.25 classifies a good share of them as weak. zero_row_sums
// makes every row sum vanish (the constant is then in the null space).
CsrMatrix<double> random_coupled(int n, unsigned seed, bool zero_row_sums) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::uniform_real_distribution<double> mag(-3.0, 0.0);
  std::vector<std::vector<std::pair<Index, double>>> rows(n);
  for (int i = 0; i < n; ++i) {
    for (int e = 0; e < 3; ++e) {
      const int j = pick(gen);
      if (j == i) continue;
      const double v = -std::pow(10.0, mag(gen));
      rows[i].emplace_back(j, v);
      rows[j].emplace_back(i, v);
    }
  }
  std::vector<Index> rp{0}, ci;
  std::vector<double> vals;
  for (int i = 0; i < n; ++i) {
    double off = 0;
    for (auto& [j, v] : rows[i]) off -= v;
    rows[i].emplace_back(i, zero_row_sums ? off : off + 0.3);
    for (auto& [j, v] : rows[i]) {
      ci.push_back(j);
      vals.push_back(v);
    }
    rp.push_back(static_cast<Index>(ci.size()));
  }
  return make_csr<double>(n, n, rp.data(), ci.data(), vals.data(), static_cast<Index>(ci.size()));
}

AggregationOptions size8() {
  AggregationOptions o;
  o.selector = SelectorKind::kSize8;
  o.passes = 3;
  return o;
}

std::vector<double> dense(const CsrMatrix<double>& A) {
  std::vector<double> D(static_cast<size_t>(A.nrows) * A.ncols, 0.0);
  for (Index i = 0; i < A.nrows; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) D[i * A.ncols + A.col[k]] += A.val[k];
  return D;
}

// Dense P = (I - omega D_F^-1 A_F) P_tent. `classify` decides strength (the
// matrix the filter was built from), `A` gives the values.
std::vector<double> reference_P(const CsrMatrix<double>& classify, const CsrMatrix<double>& A,
                                const std::vector<Index>& agg_of, Index nc, double eps,
                                double* omega_out) {
  const int n = A.nrows;
  const std::vector<double> C = dense(classify), Ad = dense(A);
  std::vector<double> AF(Ad.size(), 0.0);
  for (int i = 0; i < n; ++i) {
    double diag = Ad[i * n + i];
    for (int j = 0; j < n; ++j) {
      if (j == i || C[i * n + j] == 0) continue;
      const double c = C[i * n + j];
      if (c * c > eps * eps * std::abs(C[i * n + i] * C[j * n + j])) {
        AF[i * n + j] = Ad[i * n + j];
      } else {
        diag += Ad[i * n + j];
      }
    }
    AF[i * n + i] = diag;
  }
  double rho = 0;
  for (int i = 0; i < n; ++i) {
    double s = 0;
    for (int j = 0; j < n; ++j) s += std::abs(AF[i * n + j]);
    if (s > 0) rho = std::max(rho, s / std::abs(AF[i * n + i]));  // zero rows: no smoothing
  }
  const double omega = 4.0 / 3.0 / rho;
  *omega_out = omega;
  std::vector<double> P(static_cast<size_t>(n) * nc, 0.0);
  for (int i = 0; i < n; ++i) {
    P[i * nc + agg_of[i]] += 1.0;
    for (int j = 0; j < n; ++j)
      if (AF[i * n + j] != 0) P[i * nc + agg_of[j]] -= omega * AF[i * n + j] / AF[i * n + i];
  }
  return P;
}

void expect_P_matches(const TransferOperators<double>& ops, const std::vector<double>& ref) {
  const std::vector<double> got = dense(ops.P);
  ASSERT_EQ(got.size(), ref.size());
  for (size_t k = 0; k < ref.size(); ++k) ASSERT_NEAR(got[k], ref[k], 1e-14) << "entry " << k;
  const CsrMatrix<double> Pt = transpose(ops.P);
  EXPECT_EQ(ops.R.row_ptr, Pt.row_ptr);
  EXPECT_EQ(ops.R.col, Pt.col);
  EXPECT_EQ(ops.R.val, Pt.val);
}

TEST(AggregationSmoothed, ProlongationMatchesDenseReference) {
  const double eps = 0.25;
  for (unsigned seed : {1u, 2u}) {
    const auto A = random_coupled(300, seed, false);
    SmoothedAggregationCoarsening<double> c(size8(), eps);
    TransferOperators<double> ops;
    c.build(A, ops);
    ASSERT_GT(ops.P.ncols, 0);
    double omega = 0;
    const auto ref = reference_P(A, A, c.aggregates().of, c.aggregates().count, eps, &omega);
    EXPECT_NEAR(c.omega(), omega, 1e-15);
    expect_P_matches(ops, ref);
    // The filter dropped something, or this test would not test it.
    EXPECT_LT(ops.P.nnz(), A.nnz());
  }
}

TEST(AggregationSmoothed, ConstantsStayInTheRangeOfP) {
  // Zero row sums: A 1 = 0, and lumping keeps A_F 1 = 0, so P 1_c = 1. Some
  // rows have only weak couplings: their row of A_F vanishes.
  const auto A = random_coupled(400, 5, true);
  SmoothedAggregationCoarsening<double> c(size8(), 0.25);
  TransferOperators<double> ops;
  c.build(A, ops);
  std::vector<double> ones_c(ops.P.ncols, 1.0), y(A.nrows);
  cpu::spmv(ops.P, ones_c.data(), y.data());
  for (Index i = 0; i < A.nrows; ++i) EXPECT_NEAR(y[i], 1.0, 1e-13) << "row " << i;
}

TEST(AggregationSmoothed, RebuildKeepsFilterAndPattern) {
  const double eps = 0.25;
  const auto A = random_coupled(300, 9, false);
  SmoothedAggregationCoarsening<double> c(size8(), eps);
  TransferOperators<double> ops;
  c.build(A, ops);
  const auto of = c.aggregates().of;
  const std::vector<Index> ptr = ops.P.row_ptr.to_vector(), col = ops.P.col.to_vector();

  CsrMatrix<double> A2 = A;
  std::mt19937 gen(4);
  std::uniform_real_distribution<double> u(0.2, 5.0);
  for (Index i = 0; i < A2.nrows; ++i)  // symmetric rescaling keeps A2 symmetric
    for (Index k = A2.row_ptr[i]; k < A2.row_ptr[i + 1]; ++k)
      if (A2.col[k] == i) A2.val[k] *= u(gen);
  c.rebuild(A2, ops);
  EXPECT_EQ(c.aggregates().of, of);
  EXPECT_EQ(ops.P.row_ptr, ptr);
  EXPECT_EQ(ops.P.col, col);
  double omega = 0;
  expect_P_matches(ops, reference_P(A, A2, of, c.aggregates().count, eps, &omega));
  EXPECT_NEAR(c.omega(), omega, 1e-15);
}

TEST(AggregationSmoothed, DeterministicAcrossThreadCounts) {
  const auto A = testing::poisson3d<double>(30);
  const int saved = omp_get_max_threads();
  TransferOperators<double> ops[2];
  for (int t : {1, 2}) {
    omp_set_num_threads(t);
    SmoothedAggregationCoarsening<double> c(size8(), 0.08);
    c.build(A, ops[t - 1]);
  }
  omp_set_num_threads(saved);
  EXPECT_EQ(ops[0].P.row_ptr, ops[1].P.row_ptr);
  EXPECT_EQ(ops[0].P.col, ops[1].P.col);
  EXPECT_EQ(ops[0].P.val, ops[1].P.val);
}

TEST(AggregationSmoothed, ConfigSelectsItAndHalvesTheThreshold) {
  const Config cfg = Config::parse(R"({"config_version": 2, "solver": {"scope": "amg",
      "solver": "AMG", "algorithm": "AGGREGATION", "selector": "SIZE_8",
      "x_smoothed_aggregation": 1}})");
  for (int level : {0, 2}) {
    auto c = make_coarsening<double>(cfg, "amg", level);
    auto* sa = dynamic_cast<SmoothedAggregationCoarsening<double>*>(c.get());
    ASSERT_NE(sa, nullptr);
    EXPECT_DOUBLE_EQ(sa->strength_threshold(), 0.08 / (1 << level));
    EXPECT_FALSE(c->builds_coarse_matrix());
  }
  const Config bad = Config::parse(R"({"config_version": 2, "solver": {"scope": "amg",
      "solver": "AMG", "algorithm": "AGGREGATION", "selector": "SIZE_8",
      "x_smoothed_aggregation": 3}})");
  try {
    make_coarsening<double>(bad, "amg", 0);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("x_smoothed_aggregation = 3"), std::string::npos) << e.what();
  }
}

// Smoothing P turns the growing V-cycle counts of unsmoothed aggregation into
// flat ones at a modest operator complexity.
TEST(AggregationSmoothed, PcgVCycleOnPoisson3D) {
  const std::string json = R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG",
      "tolerance": 1e-8, "convergence": "RELATIVE_INI", "monitor_residual": 1, "max_iters": 100,
      "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION",
      "selector": "SIZE_8", "x_smoothed_aggregation": 1, "max_iters": 1, "cycle": "V",
      "smoother": "BLOCK_JACOBI"}}})";
  std::vector<int> iterations;
  for (int n : {24, 48}) {
    const auto A = testing::poisson3d<double>(n);
    LinearSolver<double> s(json);
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
    const auto b = testing::random_vector<double>(A.nrows, 17);
    std::vector<double> x(A.nrows, 0.0);
    const SolveResult r = s.solve(b.data(), x.data(), A.nrows, false);
    EXPECT_EQ(r.status, Status::kSuccess);
    EXPECT_LE(testing::relative_residual(A, x, b), 1e-8);
    iterations.push_back(r.iterations);
    double nnz = 0;
    for (const LevelInfo& l : s.hierarchy()) nnz += l.nnz;
    EXPECT_LE(nnz / A.nnz(), 2.0) << "operator complexity at " << n << "^3";
  }
  EXPECT_LE(iterations[1], 15);
  EXPECT_LE(iterations[1], iterations[0] + 1);
}

}  // namespace
}  // namespace jaxamg
