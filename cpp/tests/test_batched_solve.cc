// Batched solves (batched/, LinearSolver::solve_many): several right-hand
// sides of one matrix solved together must give, lane by lane, the
// iterations, status, residual history and solution of one-lane solves on
// the same setup. Below kParallelRows rows every reduction is serial in both paths,
// so the lanes must match bit for bit; above, the threads' partial sums make
// both paths differ by rounding only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "api/linear_solver.h"
#include "batched/batched_krylov.h"
#include "core/parallel.h"
#include "problems.h"
#include "test_batched_util.h"

namespace jaxamg {
namespace {

// The default configuration of jaxamg.solve (src/jaxamg/config.py).
const char* kDefault = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "PBICGSTAB", "convergence": "RELATIVE_INI", "tolerance": 1e-6,
  "max_iters": 1000, "norm": "L2", "monitor_residual": 1, "store_res_history": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
    "selector": "PMIS", "interpolator": "D2",
    "smoother": {"scope": "amg_smoother", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.9},
    "presweeps": 1, "postsweeps": 1, "max_levels": 100, "strength_threshold": 0.5,
    "dense_lu_num_rows": 1, "aggressive_levels": 0, "coarse_solver": "DENSE_LU_SOLVER",
    "max_iters": 1, "cycle": "V"}}})";

// the shipped config PCG_CLASSICAL_AGG1_CHEBY2 (src/jaxamg/configs)
const char* kPcgCheby = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "PCG", "max_iters": 500, "tolerance": 1e-08,
  "convergence": "RELATIVE_INI_CORE", "norm": "L2", "monitor_residual": 1, "store_res_history": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
    "selector": "PMIS", "strength": "AHAT", "strength_threshold": 0.25, "interpolator": "D2",
    "interp_max_elements": 4, "aggressive_levels": 1, "aggressive_interpolator": "D2_TWO_STAGE",
    "max_iters": 1, "cycle": "V", "presweeps": 1, "postsweeps": 1, "max_levels": 25,
    "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 32,
    "smoother": {"scope": "cheby", "solver": "CHEBYSHEV", "chebyshev_polynomial_order": 2,
      "chebyshev_lambda_estimate_mode": 3, "cheby_max_lambda": 1.0, "cheby_min_lambda": 0.25,
      "preconditioner": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 1.0}}}}})";

// Flexible CG around aggregation AMG with W cycles and l1-Jacobi, two sweeps.
const char* kPcgfAggregationW = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "PCGF", "max_iters": 200, "tolerance": 1e-9,
  "convergence": "RELATIVE_INI", "norm": "L2", "monitor_residual": 1, "store_res_history": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION",
    "selector": "SIZE_2", "cycle": "W", "presweeps": 2, "postsweeps": 2, "max_iters": 1,
    "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 64, "min_coarse_rows": 16,
    "smoother": {"scope": "jl1", "solver": "JACOBI_L1", "relaxation_factor": 0.8}}}})";

// PCG with two F cycles per application, Chebyshev without a preconditioner,
// no coarse solver (coarsest_sweeps), L1 norm and RELATIVE_MAX.
const char* kPcgF = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "PCG", "max_iters": 300, "tolerance": 1e-7,
  "convergence": "RELATIVE_MAX", "norm": "L1", "monitor_residual": 1, "store_res_history": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
    "selector": "HMIS", "interpolator": "D2", "cycle": "F", "max_iters": 2,
    "coarse_solver": "NOSOLVER", "coarsest_sweeps": 3, "min_coarse_rows": 20,
    "smoother": {"scope": "cheb", "solver": "CHEBYSHEV", "chebyshev_polynomial_order": 3,
      "chebyshev_lambda_estimate_mode": 2}}}})";

// Plain BiCGStab stopped after 25 iterations: most lanes NOT_CONVERGED.
const char* kBicgstabCapped = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "BICGSTAB", "max_iters": 25, "tolerance": 1e-12,
  "convergence": "RELATIVE_INI", "norm": "LMAX", "monitor_residual": 1, "store_res_history": 1}})";

// ABSOLUTE convergence, so that a lane given its own solution as x0 has
// nothing to do.
const char* kAbsolute = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "PBICGSTAB", "max_iters": 100, "tolerance": 1e-5,
  "convergence": "ABSOLUTE", "norm": "L2", "monitor_residual": 1, "store_res_history": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL",
    "max_iters": 1, "smoother": {"scope": "s", "solver": "JACOBI_L1"}}}})";

// IDR is not batched: solve_many falls back to one lane at a time.
// A preconditioner that monitors its own residual (it may stop early, lane
// by lane) is not batched.
const char* kMonitoredPreconditioner = R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "FGMRES", "max_iters": 100, "tolerance": 1e-8,
  "monitor_residual": 1, "store_res_history": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "CLASSICAL", "max_iters": 3,
                     "monitor_residual": 1, "tolerance": 0.1}}})";

// K-cycles and error scaling: the cycle of amg/cycle.h on the lanes backend.
// `cycle` is CG or CGF; `scaling` the error_scaling (0, 2 or 3) with
// `reuse` reuse_scale.
std::string kcycle_config(const std::string& cycle, int scaling, int reuse) {
  return R"({"config_version": 2, "solver": {
  "scope": "main", "solver": "PCGF", "max_iters": 200, "tolerance": 1e-9,
  "convergence": "RELATIVE_INI", "norm": "L2", "monitor_residual": 1, "store_res_history": 1,
  "preconditioner": {"scope": "amg", "solver": "AMG", "algorithm": "AGGREGATION",
    "selector": "SIZE_2", "cycle": ")" + cycle + R"(", "cycle_iters": 2, "max_iters": 1,
    "error_scaling": )" + std::to_string(scaling) + R"(, "reuse_scale": )" + std::to_string(reuse) +
         R"(, "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 16, "min_coarse_rows": 8,
    "smoother": {"scope": "jl1", "solver": "JACOBI_L1", "relaxation_factor": 0.8}}}})";
}

struct Lanes {
  std::vector<std::vector<double>> b, x0;
};

// Six right-hand sides: random ones of different scales, a zero one (done
// before the first iteration), and with x0: random guesses on some lanes.
Lanes make_lanes(Index n, bool with_x0) {
  Lanes L;
  const double scale[] = {1.0, 1e3, 1e-2, 0.0, 1.0, 7.0};
  for (int j = 0; j < 6; ++j) {
    auto b = testing::random_vector<double>(n, 100 + j);
    for (double& v : b) v *= scale[j];
    L.b.push_back(b);
    std::vector<double> x0(n, 0.0);
    if (with_x0 && (j == 1 || j == 3 || j == 4)) x0 = testing::random_vector<double>(n, 200 + j);
    L.x0.push_back(x0);
  }
  return L;
}

template <class T>
std::vector<T> flatten(const std::vector<std::vector<double>>& v) {
  std::vector<T> out;
  for (const auto& lane : v)
    for (double e : lane) out.push_back(static_cast<T>(e));
  return out;
}

// Checks lane j of a batched result against the one-lane solve. `exact`:
// bitwise; otherwise the solution within `tol` * max|x| and the history
// within `tol` relative.
template <class T>
void expect_same(const SolveResult& one, const std::vector<T>& x_one, const SolveResult& many,
                 const T* x_many, bool exact, double tol, int lane) {
  SCOPED_TRACE("lane " + std::to_string(lane));
  EXPECT_EQ(many.status, one.status);
  EXPECT_EQ(many.iterations, one.iterations);
  ASSERT_EQ(many.history.size(), one.history.size());
  double xmax = 0;
  for (T v : x_one) xmax = std::max(xmax, std::abs(static_cast<double>(v)));
  for (std::size_t i = 0; i < x_one.size(); ++i) {
    if (exact) {
      ASSERT_EQ(x_many[i], x_one[i]) << "entry " << i;
    } else {
      ASSERT_NEAR(x_many[i], x_one[i], tol * xmax) << "entry " << i;
    }
  }
  for (std::size_t h = 0; h < one.history.size(); ++h) {
    if (exact) {
      EXPECT_EQ(many.history[h], one.history[h]) << "history " << h;
    } else {
      EXPECT_NEAR(many.history[h], one.history[h], tol * std::abs(one.history[h]) + 1e-300)
          << "history " << h;
    }
  }
  if (one.residual >= 0) {
    EXPECT_NEAR(many.residual, one.residual, exact ? 0.0 : tol * one.residual);
  }
}

// Solves the lanes one by one and together (through solve_many, and for A
// directly through batched::solve_batched to prove the batched path ran),
// and compares.
template <class T>
void check(const char* config, const CsrMatrix<double>& Ad, bool use_x0, bool transpose,
           bool batched_path, bool exact, double tol) {
  const CsrMatrix<T> A = testing::in_type<T>(Ad);
  const Index n = A.nrows;
  LinearSolver<T> s(config);
  s.setup(n, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const Lanes L = make_lanes(n, use_x0);
  const int k = static_cast<int>(L.b.size());
  const std::vector<T> B = flatten<T>(L.b), X0 = flatten<T>(L.x0);

  std::vector<SolveResult> one(k);
  std::vector<std::vector<T>> x_one(k);
  for (int j = 0; j < k; ++j) {
    x_one[j].assign(X0.begin() + j * n, X0.begin() + (j + 1) * n);
    one[j] = s.solve(B.data() + j * n, x_one[j].data(), n, use_x0, transpose);
  }

  std::vector<T> X = X0;
  if (!use_x0) std::fill(X.begin(), X.end(), T(-123));  // must be ignored
  const std::vector<SolveResult> many = s.solve_many(B.data(), X.data(), n, k, use_x0, transpose);
  ASSERT_EQ(many.size(), static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) expect_same(one[j], x_one[j], many[j], X.data() + j * n, exact, tol, j);

  if (!transpose) {
    std::vector<T> Xb = X0;
    std::vector<batched::LaneResult> lanes;
    ASSERT_EQ(batched::solve_batched(s.solver(), B.data(), Xb.data(), n, k, use_x0, &lanes),
              batched_path);
    if (batched_path) {
      for (int j = 0; j < k; ++j) {
        SolveResult r;
        r.status = lanes[j].status;
        r.iterations = lanes[j].iterations;
        r.residual = lanes[j].residual;
        r.history = lanes[j].history;
        expect_same(one[j], x_one[j], r, Xb.data() + j * n, exact, tol, j);
      }
    }
  }
  // The zero right-hand side from a zero guess needs no iteration.
  if (!use_x0) {
    EXPECT_EQ(many[3].iterations, 0);
    EXPECT_EQ(many[3].status, Status::kSuccess);
  }
}

// 10^3 = 1000 rows: serial reductions, bitwise equality.
TEST(BatchedSolve, DefaultConfigMatchesOneLaneSolvesExactly) {
  const auto A = testing::poisson3d<double>(10);
  check<double>(kDefault, A, false, false, true, true, 0);
  check<double>(kDefault, A, true, false, true, true, 0);
  check<float>(kDefault, A, false, false, true, true, 0);
  check<float>(kDefault, A, true, false, true, true, 0);
}

TEST(BatchedSolve, PcgChebyshevMatchesExactly) {
  const auto A = testing::jump3d<double>(11, 100.0);
  check<double>(kPcgCheby, A, false, false, true, true, 0);
  check<double>(kPcgCheby, A, true, false, true, true, 0);
  check<float>(kPcgCheby, A, true, false, true, true, 0);
}

TEST(BatchedSolve, PcgfAggregationWCycleMatchesExactly) {
  const auto A = testing::poisson2d<double>(40);
  check<double>(kPcgfAggregationW, A, false, false, true, true, 0);
  check<float>(kPcgfAggregationW, A, true, false, true, true, 0);
}

TEST(BatchedSolve, PcgFCycleNoCoarseSolverMatchesExactly) {
  const auto A = testing::anisotropic2d<double>(36, 0.05);
  check<double>(kPcgF, A, false, false, true, true, 0);
  check<double>(kPcgF, A, true, false, true, true, 0);
  check<float>(kPcgF, A, false, false, true, true, 0);
}

TEST(BatchedSolve, KCyclesMatchExactly) {
  const auto A = testing::jump3d<double>(10, 1000.0);
  for (const char* cycle : {"CG", "CGF"}) {
    SCOPED_TRACE(cycle);
    const std::string config = kcycle_config(cycle, 0, 0);
    check<double>(config.c_str(), A, false, false, true, true, 0);
    check<double>(config.c_str(), A, true, false, true, true, 0);
    check<float>(config.c_str(), A, false, false, true, true, 0);
  }
}

TEST(BatchedSolve, ErrorScalingMatchesExactly) {
  const auto A = testing::anisotropic2d<double>(30, 0.02);
  for (int scaling : {2, 3}) {
    SCOPED_TRACE(scaling);
    const std::string v = kcycle_config("V", scaling, 0), w = kcycle_config("CGF", scaling, 0);
    check<double>(v.c_str(), A, false, false, true, true, 0);
    check<double>(w.c_str(), A, true, false, true, true, 0);
    check<float>(v.c_str(), A, false, false, true, true, 0);
  }
}

// A reused scale belongs to one lane, and lanes leave a batch as they
// finish: such a hierarchy is solved one lane at a time.
TEST(BatchedSolve, ReusedErrorScaleFallsBackToOneLaneSolves) {
  const auto A = testing::anisotropic2d<double>(30, 0.02);
  const std::string config = kcycle_config("V", 2, 2);
  check<double>(config.c_str(), A, false, false, false, true, 0);
}

TEST(BatchedSolve, CappedBicgstabReportsNotConvergedPerLane) {
  const auto A = testing::convection_diffusion2d<double>(30, 0.01);
  check<double>(kBicgstabCapped, A, false, false, true, true, 0);
  check<float>(kBicgstabCapped, A, true, false, true, true, 0);
}

// The adjoint solve (A^T) through the transposed hierarchy, nonsymmetric A.
TEST(BatchedSolve, TransposedSolvesMatchExactly) {
  const auto A = testing::convection_diffusion2d<double>(30, 0.05);
  check<double>(kDefault, A, false, true, true, true, 0);
  check<double>(kDefault, A, true, true, true, true, 0);
  check<float>(kDefault, A, false, true, true, true, 0);
}

// A lane whose x0 already meets the (absolute) tolerance stops at once and
// keeps its x0; the other lanes go on.
TEST(BatchedSolve, ConvergedLaneKeepsItsGuess) {
  const auto Ad = testing::poisson2d<double>(30);
  const Index n = Ad.nrows;
  LinearSolver<double> s(kAbsolute);
  s.setup(n, Ad.row_ptr.data(), Ad.col.data(), Ad.val.data(), Ad.nnz());
  const auto xs = testing::random_vector<double>(n, 5);
  std::vector<double> B(2 * n), X(2 * n, 0.0);
  cpu::spmv(Ad, xs.data(), B.data());  // lane 0: b = A xs, x0 = xs
  const auto b1 = testing::random_vector<double>(n, 6);
  std::copy(b1.begin(), b1.end(), B.begin() + n);
  std::copy(xs.begin(), xs.end(), X.begin());
  const auto r = s.solve_many(B.data(), X.data(), n, 2, true);
  EXPECT_EQ(r[0].iterations, 0);
  EXPECT_EQ(r[0].status, Status::kSuccess);
  EXPECT_TRUE(std::equal(xs.begin(), xs.end(), X.begin()));
  EXPECT_GT(r[1].iterations, 0);
  EXPECT_EQ(r[1].status, Status::kSuccess);
  check<double>(kAbsolute, Ad, true, false, true, true, 0);
}

// 28^3 = 21952 rows, above kParallelRows: threaded reductions, equal up to
// rounding.
TEST(BatchedSolve, ThreadedReductionsMatchToRounding) {
  const auto A = testing::poisson3d<double>(28);
  ASSERT_GT(A.nrows, kParallelRows);
  check<double>(kDefault, A, true, false, true, false, 1e-9);
  check<double>(kPcgCheby, A, false, false, true, false, 1e-9);
  check<double>(kDefault, testing::convection_diffusion2d<double>(120, 0.05), false, true, true,
                false, 1e-9);
}

TEST(BatchedSolve, UncoveredConfigFallsBackToOneLaneSolves) {
  const auto A = testing::poisson2d<double>(20);
  check<double>(kMonitoredPreconditioner, A, true, false, false, true, 0);
}

TEST(BatchedSolve, RejectsNonFiniteRightHandSide) {
  const auto A = testing::poisson2d<double>(8);
  LinearSolver<double> s(kDefault);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  std::vector<double> B(2 * A.nrows, 1.0), X(2 * A.nrows);
  B[A.nrows + 5] = NAN;
  try {
    s.solve_many(B.data(), X.data(), A.nrows, 2, false);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("entry 5 of right-hand side 1"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace jaxamg
