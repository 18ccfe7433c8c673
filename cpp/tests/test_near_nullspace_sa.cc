// Smoothed aggregation from near-null-space vectors (x_smoothed_aggregation 2):
// the tentative prolongation reproduces B (P_tent B_c = B, orthonormal
// columns) also with rank-deficient and too-small aggregates, standard
// aggregation covers a mesh, the Lanczos damping matches the known spectrum,
// the smoothed prolongator matches the dense product, resetup keeps
// aggregates, and PCG + SA on a 2D elastic truss (rigid-body
// modes in its near null space) matches a dense solve, converging faster
// with the rotations than without. Config and input errors are rejected.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "amg/aggregation/near_nullspace_aggregation.h"
#include "amg/aggregation/prolongator_smoothing.h"
#include "amg/aggregation/standard_aggregation.h"
#include "amg/aggregation/tentative_prolongator.h"
#include "amg/amg_solver.h"
#include "api/linear_solver.h"
#include "core/error.h"
#include "problems.h"

namespace jaxamg {
namespace {

using aggregation::NearNullspaceAggregation;
using aggregation::NearNullspaceOptions;
using namespace testing;  // problems.h

NearNullspace random_nullspace(Index n, Index m, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist;
  NearNullspace B;
  B.rows = n;
  B.cols = m;
  B.val.resize(static_cast<std::size_t>(n) * m);
  for (double& v : B.val) v = dist(gen);
  return B;
}

// Dense (P^T P) and max |P B_c - B| over aggregated rows.
void check_tentative(const CsrMatrix<double>& P, const aggregation::TentativeProlongator& t,
                     const NearNullspace& B, double tol) {
  const Index n = P.nrows, nc = P.ncols, m = B.cols;
  ASSERT_EQ(t.coarse.rows, nc);
  std::vector<double> PtP(static_cast<std::size_t>(nc) * nc, 0.0);
  for (Index i = 0; i < n; ++i) {
    if (P.row_ptr[i] == P.row_ptr[i + 1]) continue;  // unaggregated
    for (Index c = 0; c < m; ++c) {
      double s = 0;
      for (Index p = P.row_ptr[i]; p < P.row_ptr[i + 1]; ++p)
        s += P.val[p] * t.coarse.row(P.col[p])[c];
      EXPECT_NEAR(s, B.row(i)[c], tol) << "row " << i << " vector " << c;
    }
    for (Index p = P.row_ptr[i]; p < P.row_ptr[i + 1]; ++p)
      for (Index q = P.row_ptr[i]; q < P.row_ptr[i + 1]; ++q)
        PtP[static_cast<std::size_t>(P.col[p]) * nc + P.col[q]] += P.val[p] * P.val[q];
  }
  for (Index a = 0; a < nc; ++a)
    for (Index b = 0; b < nc; ++b)
      EXPECT_NEAR(PtP[static_cast<std::size_t>(a) * nc + b], a == b ? 1.0 : 0.0, 1e-12);
}

TEST(NearNullspaceTentative, ReproducesRandomVectorsExactly) {
  const Index k = 2, m = 3, nodes = 40;
  // Aggregates of 2..5 nodes, and node 7 unaggregated.
  std::vector<Index> of(nodes);
  Index count = 0;
  for (Index i = 0; i < nodes;) {
    const Index size = 2 + (count % 4);
    for (Index s = 0; s < size && i < nodes; ++s, ++i) of[i] = count;
    ++count;
  }
  if (of[nodes - 1] != of[nodes - 2]) of[nodes - 1] = of[nodes - 2];
  count = of[nodes - 1] + 1;
  of[7] = -1;
  const NearNullspace B = random_nullspace(nodes * k, m, 11);
  CsrMatrix<double> P;
  const auto t = aggregation::tentative_prolongator(of, count, k, B, P);
  EXPECT_EQ(t.coarse_block_dim, m);
  EXPECT_EQ(t.dependent_columns, 0);
  EXPECT_EQ(P.ncols, count * m);
  EXPECT_EQ(P.row_ptr[7 * k + 1] - P.row_ptr[7 * k], 0);  // unaggregated: zero row
  check_tentative(P, t, B, 1e-12);
}

TEST(NearNullspaceTentative, RankDeficientAggregateKeepsBlockSize) {
  // 3D rigid-body modes on aggregates of two nodes: the rotation about the
  // line through them vanishes there, so 6 modes have rank 5 on 6 unknowns.
  const Index k = 3, m = 6, nodes = 10;
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  NearNullspace B;
  B.rows = nodes * k;
  B.cols = m;
  B.val.assign(static_cast<std::size_t>(B.rows) * m, 0.0);
  for (Index i = 0; i < nodes; ++i) {
    const double x = u(gen), y = u(gen), z = u(gen);
    const double rows[3][6] = {{1, 0, 0, 0, z, -y}, {0, 1, 0, -z, 0, x}, {0, 0, 1, y, -x, 0}};
    for (Index c = 0; c < k; ++c)
      for (Index j = 0; j < m; ++j) B.val[static_cast<std::size_t>(i * k + c) * m + j] = rows[c][j];
  }
  std::vector<Index> of(nodes);
  for (Index i = 0; i < nodes; ++i) of[i] = i / 2;
  CsrMatrix<double> P;
  const auto t = aggregation::tentative_prolongator(of, nodes / 2, k, B, P);
  EXPECT_EQ(t.dependent_columns, nodes / 2);  // one per aggregate
  EXPECT_EQ(t.dropped_columns, 0);            // filled: 6 unknowns leave room
  EXPECT_EQ(t.coarse_block_dim, m);
  check_tentative(P, t, B, 1e-9);
}

TEST(NearNullspaceTentative, TooSmallAggregateDropsSlotsAndGoesScalar) {
  // One node of 2 unknowns cannot hold 3 orthonormal columns.
  const Index k = 2, m = 3;
  std::vector<Index> of = {0, 0, 1, 2, 2, 2};
  const NearNullspace B = random_nullspace(6 * k, m, 3);
  CsrMatrix<double> P;
  const auto t = aggregation::tentative_prolongator(of, 3, k, B, P);
  EXPECT_EQ(t.dropped_columns, 1);
  EXPECT_EQ(t.coarse_block_dim, 1);
  EXPECT_EQ(P.ncols, 3 + 2 + 3);
  check_tentative(P, t, B, 1e-9);
}

TEST(NearNullspaceTentative, RejectsWrongRowCount) {
  std::vector<Index> of = {0, 0};
  const NearNullspace B = random_nullspace(5, 1, 1);
  CsrMatrix<double> P;
  EXPECT_THROW(aggregation::tentative_prolongator(of, 1, 2, B, P), InvalidInput);
}

TEST(StandardAggregation, CoversAMeshWithNeighbourhoods) {
  const CsrMatrix<double> A = poisson2d<double>(20);
  const auto strong = aggregation::symmetric_strength(A, 0.08);
  const auto agg = aggregation::standard_aggregation(A, strong);
  std::vector<int> size(agg.count, 0);
  for (Index i = 0; i < A.nrows; ++i) {
    ASSERT_GE(agg.of[i], 0) << "node " << i;
    ++size[agg.of[i]];
  }
  // Roots take a 5-point neighbourhood; leftovers join: sizes 2..9 or so.
  for (int s : size) {
    EXPECT_GE(s, 2);
    EXPECT_LE(s, 12);
  }
  EXPECT_LT(agg.count, A.nrows / 3);
  // Every aggregate is connected to its root through strong edges of A.
  for (Index i = 0; i < A.nrows; ++i) {
    bool linked = size[agg.of[i]] == 1;
    for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1] && !linked; ++p)
      linked = A.col[p] != i && agg.of[A.col[p]] == agg.of[i];
    EXPECT_TRUE(linked) << "node " << i << " has no neighbour in its aggregate";
  }
}

TEST(StandardAggregation, IsolatedNodeStaysUnaggregated) {
  // A 1D chain plus a node coupled to nothing.
  CsrMatrix<double> A = poisson1d<double>(6);
  std::vector<Index> rp = A.row_ptr.to_vector(), ci = A.col.to_vector();
  std::vector<double> v = A.val.to_vector();
  ci.push_back(6);
  v.push_back(1.0);
  rp.push_back(static_cast<Index>(ci.size()));
  const auto B = make_csr<double>(7, 7, rp.data(), ci.data(), v.data(), static_cast<Index>(ci.size()));
  const auto agg = aggregation::standard_aggregation(B, aggregation::symmetric_strength(B, 0.0));
  EXPECT_EQ(agg.of[6], -1);
  for (Index i = 0; i < 6; ++i) EXPECT_GE(agg.of[i], 0);
}

TEST(ProlongatorSmoothing, LanczosFindsTheJacobiSpectralRadius) {
  // D^-1 A of the 1D Laplacian: eigenvalues 1 - cos(j pi / (n + 1)).
  const int n = 200;
  const CsrMatrix<double> A = poisson1d<double>(n);
  const auto Dinv = aggregation::inverse_diagonal_blocks(A);
  const double rho = aggregation::block_jacobi_spectral_radius(A, Dinv, 15);
  const double exact = 1.0 + std::cos(M_PI / (n + 1));
  EXPECT_LE(rho, exact * (1 + 1e-12));  // a Ritz value: never above
  EXPECT_GT(rho, 0.97 * exact);
}

// A 2D truss on an nx x ny grid of nodes (2 unknowns per node): bars to the
// right, upper, and both diagonal neighbours with stiffness e e^T (e the bar
// direction), the left column tied to the ground by springs. Its null space
// without the ground springs is spanned by the rigid-body modes.
struct Truss {
  CsrMatrix<double> A;
  NearNullspace modes;  // x, y translation, rotation
};

Truss truss2d(int nx, int ny) {
  const int nodes = nx * ny;
  std::vector<std::map<Index, double>> rows(2 * nodes);
  auto id = [&](int i, int j) { return j * nx + i; };
  auto bar = [&](int a, int b, double ex, double ey) {
    const double len = std::sqrt(ex * ex + ey * ey);
    const double e[2] = {ex / len, ey / len};
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 2; ++c) {
        const double k = e[r] * e[c];
        rows[2 * a + r][2 * a + c] += k;
        rows[2 * b + r][2 * b + c] += k;
        rows[2 * a + r][2 * b + c] -= k;
        rows[2 * b + r][2 * a + c] -= k;
      }
  };
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      if (i + 1 < nx) bar(id(i, j), id(i + 1, j), 1, 0);
      if (j + 1 < ny) bar(id(i, j), id(i, j + 1), 0, 1);
      if (i + 1 < nx && j + 1 < ny) bar(id(i, j), id(i + 1, j + 1), 1, 1);
      if (i > 0 && j + 1 < ny) bar(id(i, j), id(i - 1, j + 1), -1, 1);
    }
  for (int j = 0; j < ny; ++j)
    for (int c = 0; c < 2; ++c) rows[2 * id(0, j) + c][2 * id(0, j) + c] += 1.0;
  std::vector<Index> rp{0}, ci;
  std::vector<double> v;
  for (auto& row : rows) {
    for (auto& [c, x] : row) {
      ci.push_back(c);
      v.push_back(x);
    }
    rp.push_back(static_cast<Index>(ci.size()));
  }
  Truss t;
  t.A = make_csr<double>(2 * nodes, 2 * nodes, rp.data(), ci.data(), v.data(),
                         static_cast<Index>(ci.size()));
  t.A.block_dim = 2;
  t.modes.rows = 2 * nodes;
  t.modes.cols = 3;
  t.modes.val.assign(static_cast<std::size_t>(2 * nodes) * 3, 0.0);
  for (int j = 0; j < ny; ++j)
    for (int i = 0; i < nx; ++i) {
      double* ux = t.modes.val.data() + static_cast<std::size_t>(2 * id(i, j)) * 3;
      double* uy = ux + 3;
      ux[0] = 1;
      uy[1] = 1;
      ux[2] = -static_cast<double>(j) / ny;
      uy[2] = static_cast<double>(i) / nx;
    }
  return t;
}

std::string sa_config(double tol, const std::string& selector = "x_STANDARD") {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": "PCG",
    "max_iters": 400, "tolerance": )" + std::to_string(tol) + R"(,
    "convergence": "RELATIVE_INI_CORE", "monitor_residual": 1,
    "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION",
      "selector": ")" + selector + R"(", "x_smoothed_aggregation": 2, "max_iters": 1,
      "presweeps": 2, "postsweeps": 2, "min_coarse_rows": 2, "dense_lu_num_rows": 20,
      "smoother": {"scope": "j", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.6}}}})";
}

SolveResult solve_truss(const Truss& t, bool with_modes, std::vector<double>& x,
                        LinearSolver<double>** keep = nullptr,
                        const std::string& selector = "x_STANDARD") {
  static std::unique_ptr<LinearSolver<double>> s;
  s = std::make_unique<LinearSolver<double>>(sa_config(1e-10, selector));
  s->setup(t.A.nrows, t.A.row_ptr.data(), t.A.col.data(), t.A.val.data(), t.A.nnz(), 2,
           with_modes ? t.modes.val.data() : nullptr, with_modes ? 3 : 0);
  const std::vector<double> b = random_vector<double>(t.A.nrows, 7);
  x.assign(t.A.nrows, 0.0);
  if (keep) *keep = s.get();
  return s->solve(b.data(), x.data(), t.A.nrows, false);
}

// P = P_tent - omega D^-1 A P_tent against the dense product, for a block
// matrix with a near null space's tentative prolongator (a node's rows share
// their columns), for one whose node rows differ, and for block_dim 1.
void expect_smoothed_matches_dense(const CsrMatrix<double>& A, const CsrMatrix<double>& Pt) {
  const Index n = A.nrows, nc = Pt.ncols, k = A.block_dim;
  CsrMatrix<double> P;
  const double omega = aggregation::smooth_prolongator(A, Pt, P);
  ASSERT_GT(omega, 0.0);
  const std::vector<double> Dinv = aggregation::inverse_diagonal_blocks(A);
  auto dense = [&](const CsrMatrix<double>& M) {
    std::vector<double> d(static_cast<std::size_t>(M.nrows) * M.ncols, 0.0);
    for (Index i = 0; i < M.nrows; ++i)
      for (Index p = M.row_ptr[i]; p < M.row_ptr[i + 1]; ++p)
        d[static_cast<std::size_t>(i) * M.ncols + M.col[p]] += M.val[p];
    return d;
  };
  const std::vector<double> a = dense(A), t = dense(Pt), got = dense(P);
  std::vector<double> at(static_cast<std::size_t>(n) * nc, 0.0);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j)
      for (Index c = 0; c < nc; ++c) at[i * nc + c] += a[i * n + j] * t[j * nc + c];
  double err = 0, ref = 0;
  for (Index i = 0; i < n; ++i) {
    const Index I = i / k, r = i % k;
    for (Index c = 0; c < nc; ++c) {
      double want = t[i * nc + c];
      const double* di = Dinv.data() + (static_cast<std::size_t>(I) * k + r) * k;
      for (Index q = 0; q < k; ++q) want -= omega * di[q] * at[(I * k + q) * nc + c];
      err = std::max(err, std::abs(want - got[i * nc + c]));
      ref = std::max(ref, std::abs(want));
    }
    // Every row of a node lists the node's columns, ascending.
    EXPECT_TRUE(std::is_sorted(P.col.begin() + P.row_ptr[i], P.col.begin() + P.row_ptr[i + 1]));
    EXPECT_EQ(P.row_ptr[i + 1] - P.row_ptr[i], P.row_ptr[I * k + 1] - P.row_ptr[I * k]);
  }
  EXPECT_LE(err, 1e-13 * ref);
}

TEST(ProlongatorSmoothing, MatchesTheDenseProduct) {
  const Truss t = truss2d(9, 7);
  std::mt19937 gen(5);
  std::uniform_real_distribution<double> u(0.8, 1.2);
  const Index nodes = t.A.nrows / 2;
  std::vector<Index> of(nodes);
  for (Index I = 0; I < nodes; ++I) of[I] = I / 4;  // aggregates of 4 nodes
  const Index count = (nodes + 3) / 4;
  const NearNullspace B = random_nullspace(t.A.nrows, 3, 17);
  CsrMatrix<double> Pt;
  aggregation::tentative_prolongator(of, count, 2, B, Pt);
  expect_smoothed_matches_dense(t.A, Pt);
  // Node rows with different columns: drop the last entry of a node's first
  // row, the others scaled.
  CsrMatrix<double> ragged = Pt;
  std::vector<Index> rp{0}, ci;
  std::vector<double> v;
  for (Index i = 0; i < Pt.nrows; ++i) {
    Index end = Pt.row_ptr[i + 1] - (i % 2 == 0 && Pt.row_ptr[i + 1] > Pt.row_ptr[i] ? 1 : 0);
    for (Index p = Pt.row_ptr[i]; p < end; ++p) {
      ci.push_back(Pt.col[p]);
      v.push_back(Pt.val[p] * u(gen));
    }
    rp.push_back(static_cast<Index>(ci.size()));
  }
  ragged.row_ptr = rp;
  ragged.col = ci;
  ragged.val = v;
  expect_smoothed_matches_dense(t.A, ragged);
  // block_dim 1: the same matrix read as scalar.
  CsrMatrix<double> scalar = t.A;
  scalar.block_dim = 1;
  expect_smoothed_matches_dense(scalar, Pt);
}

TEST(NearNullspaceSA, TrussMatchesDenseSolveAndRotationsHelp) {
  const Truss t = truss2d(24, 24);
  const std::vector<double> b = random_vector<double>(t.A.nrows, 7);
  const std::vector<double> ref = dense_solve(t.A, b);
  double scale = 0;
  for (double v : ref) scale = std::max(scale, std::abs(v));
  std::vector<double> x;
  LinearSolver<double>* s = nullptr;
  const SolveResult with = solve_truss(t, true, x, &s);
  ASSERT_EQ(with.status, Status::kSuccess);
  for (Index i = 0; i < t.A.nrows; ++i) EXPECT_NEAR(x[i], ref[i], 1e-7 * scale);
  ASSERT_GE(s->hierarchy().size(), 3u);
  const SolveResult without = solve_truss(t, false, x);
  ASSERT_EQ(without.status, Status::kSuccess);
  EXPECT_LT(with.iterations, without.iterations);
  EXPECT_LE(with.iterations, 30);
  // A pairwise selector on the block graph works with the modes too.
  const SolveResult pairwise = solve_truss(t, true, x, nullptr, "SIZE_8");
  EXPECT_EQ(pairwise.status, Status::kSuccess);
}

TEST(NearNullspaceSA, CoarseLevelsAreBlockedByTheNumberOfVectors) {
  const Truss t = truss2d(20, 20);
  LinearSolver<double> s(R"({"config_version": 2, "solver": {"scope": "amg", "solver": "AMG",
    "algorithm": "AGGREGATION", "selector": "x_STANDARD", "x_smoothed_aggregation": 2,
    "max_iters": 1, "min_coarse_rows": 2, "dense_lu_num_rows": 20}})");
  s.setup(t.A.nrows, t.A.row_ptr.data(), t.A.col.data(), t.A.val.data(), t.A.nnz(), 2,
          t.modes.val.data(), 3);
  const auto& amg = dynamic_cast<const AmgSolver<double>&>(s.solver());
  ASSERT_GE(amg.num_levels(), 3);
  EXPECT_EQ(amg.level_matrix(0).block_dim, 2);
  for (int l = 1; l < amg.num_levels(); ++l) {
    EXPECT_EQ(amg.level_matrix(l).block_dim, 3) << "level " << l;
    EXPECT_EQ(amg.level_matrix(l).nrows % 3, 0) << "level " << l;
  }
}

TEST(NearNullspaceSA, ResetupRecomputesTheBlockedCoarseMatricesInPlace) {
  // The coarse matrices come from the Galerkin product on node blocks; a
  // resetup with new values on the same pattern writes values only, and
  // gives the matrices of a fresh setup on those values (the same aggregates
  // here, as in the test below).
  const Truss t = truss2d(20, 20);
  const std::string cfg = R"({"config_version": 2, "solver": {"scope": "amg", "solver": "AMG",
    "algorithm": "AGGREGATION", "selector": "x_STANDARD", "x_smoothed_aggregation": 2,
    "max_iters": 1, "min_coarse_rows": 2, "dense_lu_num_rows": 20,
    "structure_reuse_levels": -1}})";
  CsrMatrix<double> A2 = t.A;
  for (Index i = 0; i < A2.nrows; ++i)
    for (Index p = A2.row_ptr[i]; p < A2.row_ptr[i + 1]; ++p)
      A2.val[p] *= 1.0 + 0.5 * ((i / 2) % 20 >= 10) + 0.5 * ((A2.col[p] / 2) % 20 >= 10);
  LinearSolver<double> again(cfg), fresh(cfg);
  again.setup(t.A.nrows, t.A.row_ptr.data(), t.A.col.data(), t.A.val.data(), t.A.nnz(), 2,
              t.modes.val.data(), 3);
  const auto& amg = dynamic_cast<const AmgSolver<double>&>(again.solver());
  ASSERT_GE(amg.num_levels(), 3);
  const CsrMatrix<double>* level1 = &amg.level_matrix(1);
  again.resetup(A2.val.data(), A2.nnz());
  fresh.setup(A2.nrows, A2.row_ptr.data(), A2.col.data(), A2.val.data(), A2.nnz(), 2,
              t.modes.val.data(), 3);
  const auto& amg_fresh = dynamic_cast<const AmgSolver<double>&>(fresh.solver());
  ASSERT_EQ(amg.num_levels(), amg_fresh.num_levels());
  EXPECT_EQ(&amg.level_matrix(1), level1);  // in place
  for (int l = 1; l < amg.num_levels(); ++l) {
    const auto& got = amg.level_matrix(l);
    const auto& want = amg_fresh.level_matrix(l);
    ASSERT_EQ(got.row_ptr, want.row_ptr) << "level " << l;
    ASSERT_EQ(got.col, want.col) << "level " << l;
    for (std::size_t p = 0; p < want.val.size(); ++p)
      ASSERT_NEAR(got.val[p], want.val[p], 1e-12 * (1 + std::abs(want.val[p]))) << "level " << l;
  }
}

TEST(NearNullspaceSA, ResetupKeepsAggregatesAndMatchesAFreshBuild) {
  const Truss t = truss2d(12, 10);
  NearNullspaceOptions opt;
  opt.strength_threshold = 0.08;
  NearNullspaceAggregation<double> sa(opt);
  sa.set_near_nullspace(t.modes);
  TransferOperators<double> ops;
  sa.build(t.A, ops);
  const auto agg = sa.aggregates().of;
  // New values on the same pattern (a stiffer right half).
  CsrMatrix<double> A2 = t.A;
  for (Index i = 0; i < A2.nrows; ++i)
    for (Index p = A2.row_ptr[i]; p < A2.row_ptr[i + 1]; ++p)
      A2.val[p] *= 1.0 + 0.5 * ((i / 2) % 12 >= 6) + 0.5 * ((A2.col[p] / 2) % 12 >= 6);
  sa.rebuild(A2, ops);
  EXPECT_EQ(sa.aggregates().of, agg);
  NearNullspaceAggregation<double> fresh(opt);
  fresh.set_near_nullspace(t.modes);
  TransferOperators<double> ops2;
  fresh.build(A2, ops2);
  ASSERT_EQ(ops.P.col, ops2.P.col);  // same aggregates here, so the same P
  for (std::size_t p = 0; p < ops.P.val.size(); ++p) EXPECT_NEAR(ops.P.val[p], ops2.P.val[p], 1e-12);
}

TEST(NearNullspaceSA, ConfigAndInputErrors) {
  const Truss t = truss2d(6, 6);
  auto setup = [&](const std::string& cfg, const double* B, Index m) {
    LinearSolver<double> s(cfg);
    s.setup(t.A.nrows, t.A.row_ptr.data(), t.A.col.data(), t.A.val.data(), t.A.nnz(), 2, B, m);
  };
  // x_STANDARD needs x_smoothed_aggregation 2.
  std::string no_mode = sa_config(1e-8);
  no_mode.replace(no_mode.find("\"x_smoothed_aggregation\": 2"), 27, "\"x_smoothed_aggregation\": 1");
  EXPECT_THROW(setup(no_mode, nullptr, 0), ConfigError);
  std::string out_of_range = sa_config(1e-8);
  out_of_range.replace(out_of_range.find("\"x_smoothed_aggregation\": 2"), 27,
                       "\"x_smoothed_aggregation\": 3");
  EXPECT_THROW(setup(out_of_range, nullptr, 0), ConfigError);
  // A near null space with a config that ignores it.
  const std::string classical = R"({"config_version": 2, "solver": {"scope": "main",
    "solver": "PCG", "preconditioner": {"scope": "amg", "solver": "AMG"}}})";
  EXPECT_THROW(setup(classical, t.modes.val.data(), 3), ConfigError);
  // Non-finite vectors.
  std::vector<double> bad = t.modes.val;
  bad[5] = std::nan("");
  EXPECT_THROW(setup(sa_config(1e-8), bad.data(), 3), InvalidInput);
  EXPECT_NO_THROW(setup(sa_config(1e-8), t.modes.val.data(), 3));
}

}  // namespace
}  // namespace jaxamg
