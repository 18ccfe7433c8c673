// A float32 AMG hierarchy inside a float64 solve ("x_amg_precision": "FLOAT"):
// the outer Krylov method reaches float64 tolerances, matches a float64
// hierarchy's solution and a dense reference, takes at most two more
// iterations; resetup, replace_values, transposed solves, AMG as the solver
// itself (iterative refinement), and the config checks.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "amg/mixed_precision_amg.h"
#include "api/linear_solver.h"
#include "core/error.h"
#include "problems.h"
#include "solvers/factory.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg {
namespace {

using testing::dense_solve;
using testing::random_vector;
using testing::relative_residual;

constexpr double kTol = 1e-10;

// OUTER with one V-cycle of classical AMG (PMIS, D2, l1-Jacobi, dense LU)
// in scope "amg", RELATIVE_INI `kTol`; `precision` is the AMG's
// x_amg_precision.
std::string config(const std::string& outer, const std::string& precision,
                   const std::string& amg_extra = "") {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + outer +
         R"(", "max_iters": 200, "tolerance": 1e-10, "convergence": "RELATIVE_INI",
         "monitor_residual": 1, "store_res_history": 1, "gmres_n_restart": 30,
         "preconditioner": {"scope": "amg", "solver": "AMG", "x_amg_precision": ")" +
         precision + R"(", "max_iters": 1, "cycle": "V", "selector": "PMIS",
         "interpolator": "D2", "strength_threshold": 0.25, "interp_max_elements": 4,
         "coarse_solver": "DENSE_LU_SOLVER", "dense_lu_num_rows": 64)" + amg_extra +
         R"(, "smoother": {"scope": "l1", "solver": "JACOBI_L1"}}}})";
}

// Coefficients exp(N(0, 1.5)) per cell (about four orders of magnitude).
template <class T>
CsrMatrix<T> random_coefficients(int nx, int ny, int nz, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> g(0.0, 1.5);
  std::vector<double> c(static_cast<std::size_t>(nx) * ny * nz);
  for (double& v : c) v = std::exp(g(gen));
  return testing::stencil_matrix<T>(nx, ny, nz, 1, 1, nz > 1 ? 1 : 0,
                                    [&c](int id) { return c[id]; });
}

struct Solved {
  SolveResult result;
  std::vector<double> x;
};

Solved solve(LinearSolver<double>& s, const std::vector<double>& b, bool transpose = false) {
  Solved out;
  out.x.assign(b.size(), 0.0);
  out.result = s.solve(b.data(), out.x.data(), static_cast<Index>(b.size()), false, transpose);
  return out;
}

std::unique_ptr<LinearSolver<double>> set_up(const std::string& json, const CsrMatrix<double>& A) {
  auto s = std::make_unique<LinearSolver<double>>(json);
  s->setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  return s;
}

// The float32 AMG of a solver tree (the preconditioner of a Krylov method).
const MixedPrecisionAmg* float_amg_of(LinearSolver<double>& s) {
  auto* k = dynamic_cast<KrylovSolver<double>*>(&s.solver());
  return k ? dynamic_cast<const MixedPrecisionAmg*>(k->preconditioner()) : nullptr;
}

double relative_difference(const std::vector<double>& x, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    num += (x[i] - ref[i]) * (x[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

// The same system with a float64 and a float32 hierarchy: both reach kTol,
// the float32 one in at most two more iterations, and the solutions agree.
void compare_hierarchies(const std::string& outer, const CsrMatrix<double>& A,
                         const std::vector<double>& b, double agree) {
  auto hi = set_up(config(outer, "SAME"), A);
  auto lo = set_up(config(outer, "FLOAT"), A);
  ASSERT_EQ(float_amg_of(*hi), nullptr);
  const MixedPrecisionAmg* mixed = float_amg_of(*lo);
  ASSERT_NE(mixed, nullptr);
  EXPECT_GT(mixed->float_amg().num_levels(), 2);
  EXPECT_EQ(lo->hierarchy().size(), hi->hierarchy().size());
  const Solved a = solve(*hi, b);
  const Solved c = solve(*lo, b);
  ASSERT_EQ(a.result.status, Status::kSuccess);
  ASSERT_EQ(c.result.status, Status::kSuccess) << outer;
  EXPECT_LE(relative_residual(A, c.x, b), kTol) << outer;
  EXPECT_LE(c.result.iterations, a.result.iterations + 2) << outer;
  EXPECT_LT(relative_difference(c.x, a.x), agree) << outer;
}

TEST(MixedPrecisionAmg, Poisson3dReachesFloat64ToleranceWithPcg) {
  const auto A = testing::poisson3d<double>(24);
  compare_hierarchies("PCG", A, random_vector<double>(A.nrows, 1), 1e-8);
}

TEST(MixedPrecisionAmg, EveryOuterMethodOnRandomCoefficients) {
  const auto A = random_coefficients<double>(20, 20, 20, 7);
  const auto b = random_vector<double>(A.nrows, 2);
  for (const char* outer : {"PCG", "PCGF", "FGMRES", "PBICGSTAB"}) {
    compare_hierarchies(outer, A, b, 1e-6);
  }
}

TEST(MixedPrecisionAmg, MatchesDenseReference) {
  const auto A = random_coefficients<double>(36, 36, 1, 3);
  const auto b = random_vector<double>(A.nrows, 4);
  const std::vector<double> ref = dense_solve(A, b);
  auto s = set_up(config("PCG", "FLOAT"), A);
  const Solved r = solve(*s, b);
  ASSERT_EQ(r.result.status, Status::kSuccess);
  // cond(A) is about 1e5 here: a 1e-10 residual bounds the error by ~1e-5.
  EXPECT_LT(relative_difference(r.x, ref), 1e-6);
  EXPECT_LE(relative_residual(A, r.x, b), kTol);
}

TEST(MixedPrecisionAmg, ResetupWithNewValues) {
  auto A = random_coefficients<double>(16, 16, 16, 11);
  const auto b = random_vector<double>(A.nrows, 5);
  const std::string reuse = R"(, "structure_reuse_levels": -1)";
  auto lo = set_up(config("PCG", "FLOAT", reuse), A);
  auto hi = set_up(config("PCG", "SAME", reuse), A);
  ASSERT_EQ(solve(*lo, b).result.status, Status::kSuccess);
  const auto B = random_coefficients<double>(16, 16, 16, 12);  // same pattern
  ASSERT_EQ(B.col, A.col);
  lo->resetup(B.val.data(), B.nnz());
  hi->resetup(B.val.data(), B.nnz());
  const Solved r = solve(*lo, b);
  ASSERT_EQ(r.result.status, Status::kSuccess);
  EXPECT_LE(relative_residual(B, r.x, b), kTol);
  // The float64 hierarchy after the same resetup, and a dense-free check of
  // the solution against it.
  const Solved f = solve(*hi, b);
  EXPECT_LE(r.result.iterations, f.result.iterations + 2);
  EXPECT_LT(relative_difference(r.x, f.x), 1e-6);
  // replace_values keeps the float32 hierarchy of the setup while the outer
  // method uses the new matrix: 3 B, whose solution is x / 3.
  std::vector<double> tripled = B.val.to_vector();
  for (double& v : tripled) v *= 3.0;
  lo->replace_values(tripled.data(), B.nnz());
  Solved kept = solve(*lo, b);
  ASSERT_EQ(kept.result.status, Status::kSuccess);
  for (double& v : kept.x) v *= 3.0;
  EXPECT_LT(relative_difference(kept.x, r.x), 1e-6);
}

TEST(MixedPrecisionAmg, TransposedSolveOfNonsymmetricSystem) {
  const auto A = testing::convection_diffusion2d<double>(40, 0.05);
  const auto At = transpose(A);
  const auto b = random_vector<double>(A.nrows, 6);
  const std::vector<double> ref = dense_solve(At, b);
  for (const char* outer : {"FGMRES", "PBICGSTAB"}) {
    auto s = set_up(config(outer, "FLOAT"), A);
    const Solved r = solve(*s, b, /*transpose=*/true);
    ASSERT_EQ(r.result.status, Status::kSuccess) << outer;
    EXPECT_LE(relative_residual(At, r.x, b), kTol) << outer;
    EXPECT_LT(relative_difference(r.x, ref), 1e-7) << outer;
    auto hi = set_up(config(outer, "SAME"), A);
    EXPECT_LE(r.result.iterations, solve(*hi, b, true).result.iterations + 2) << outer;
  }
}

// AMG as the solver: each cycle after the first corrects with the float64
// residual, so it passes float32's accuracy (about 1e-6 here) down to kTol.
TEST(MixedPrecisionAmg, AmgSolverRefinesToFloat64Accuracy) {
  const auto A = testing::poisson3d<double>(16);
  const auto b = random_vector<double>(A.nrows, 8);
  const std::string json = R"({"config_version": 2, "solver": {"scope": "amg", "solver": "AMG",
      "x_amg_precision": "FLOAT", "max_iters": 100, "tolerance": 1e-10,
      "convergence": "RELATIVE_INI", "monitor_residual": 1, "cycle": "V",
      "coarse_solver": "DENSE_LU_SOLVER", "smoother": {"scope": "l1", "solver": "JACOBI_L1"}}})";
  auto lo = set_up(json, A);
  ASSERT_NE(dynamic_cast<MixedPrecisionAmg*>(&lo->solver()), nullptr);
  const Solved r = solve(*lo, b);
  ASSERT_EQ(r.result.status, Status::kSuccess);
  EXPECT_LE(relative_residual(A, r.x, b), kTol);
  std::string same = json;
  same.replace(same.find("FLOAT"), 5, "SAME");
  auto hi = set_up(same, A);
  EXPECT_LE(r.result.iterations, solve(*hi, b).result.iterations + 2);
  // The adjoint of the stand-alone AMG (A is symmetric: the same system).
  const Solved t = solve(*lo, b, /*transpose=*/true);
  ASSERT_EQ(t.result.status, Status::kSuccess);
  EXPECT_LE(relative_residual(A, t.x, b), kTol);
}

TEST(MixedPrecisionAmg, FloatSolveBuildsTheOrdinaryAmg) {
  const auto A = testing::poisson3d<float>(10);
  LinearSolver<float> s(config("PCG", "FLOAT"));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  auto* k = dynamic_cast<KrylovSolver<float>*>(&s.solver());
  ASSERT_NE(k, nullptr);
  EXPECT_NE(dynamic_cast<const AmgSolver<float>*>(k->preconditioner()), nullptr);
}

TEST(MixedPrecisionAmg, RejectsUnknownPrecisionAndFloat32Overflow) {
  try {
    LinearSolver<double> s(config("PCG", "HALF"));
    FAIL() << "HALF was accepted";
  } catch (const ConfigError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("x_amg_precision"), std::string::npos) << msg;
    EXPECT_NE(msg.find("HALF"), std::string::npos) << msg;
    EXPECT_NE(msg.find("SAME, FLOAT"), std::string::npos) << msg;
  }
  auto A = testing::poisson3d<double>(6);
  for (double& v : A.val) v *= 1e39;  // beyond float32's range
  LinearSolver<double> s(config("PCG", "FLOAT"));
  try {
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
    FAIL() << "a matrix beyond float32 was accepted";
  } catch (const InvalidInput& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("float32"), std::string::npos) << msg;
    EXPECT_NE(msg.find("x_amg_precision"), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace jaxamg
