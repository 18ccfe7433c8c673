// Krylov solvers against dense references: every method on SPD Poisson and
// (except the CG family) nonsymmetric convection-diffusion, with and without
// preconditioners, in float and double; transposed solves; flexible methods
// with a variable preconditioner.
#include <gtest/gtest.h>

#include "core/error.h"
#include "solvers/factory.h"
#include "test_krylov_util.h"

namespace jaxamg {
namespace {

using testing::krylov_json;
using testing::relative_error;
using testing::run;

template <class T>
class KrylovAccuracy : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(KrylovAccuracy, ValueTypes);

// Stopping tolerance and the bound on the true relative residual that it
// implies: the recurrence residual drifts from b - A x by a few roundoffs
// times the condition number (about 1e2 here), and in float x itself cannot
// be represented more accurately than that.
double tol_for(float) { return 1e-5; }
double tol_for(double) { return 1e-9; }
double residual_bound(float) { return 3e-5; }
double residual_bound(double) { return 2e-9; }

struct Case {
  std::string name;
  std::string extra;
  std::string precond = "NOSOLVER";
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& name : testing::krylov_names()) cases.push_back({name, ""});
  cases.push_back({"GMRES", "\"gmres_n_restart\": 5"});
  cases.push_back({"FGMRES", "\"gmres_n_restart\": 6"});
  cases.push_back({"FGMRES", "\"gmres_n_restart\": 30, \"gmres_krylov_dim\": 3"});
  cases.push_back({"IDR", "\"subspace_dim_s\": 1"});
  cases.push_back({"IDR", "\"subspace_dim_s\": 3"});
  cases.push_back({"IDRMSYNC", "\"subspace_dim_s\": 4"});
  for (const char* name : {"PCG", "PCGF", "PBICGSTAB", "GMRES", "FGMRES", "IDR", "IDRMSYNC"}) {
    cases.push_back({name, "", "BLOCK_JACOBI"});
  }
  cases.push_back({"FGMRES", "\"gmres_n_restart\": 10, \"gmres_krylov_dim\": 2", "BLOCK_JACOBI"});
  return cases;
}

std::string tol_field(double tol) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "\"tolerance\": %g", tol);
  return buf;
}

template <class T>
void expect_solves(const Case& c, const CsrMatrix<T>& A, const std::vector<T>& b) {
  SCOPED_TRACE(c.name + " {" + c.extra + "} preconditioner " + c.precond);
  const std::string extra = c.extra.empty() ? tol_field(tol_for(T())) : c.extra + ", " + tol_field(tol_for(T()));
  auto o = run<T>(krylov_json(c.name, extra, c.precond), A, b);
  const auto ref = testing::dense_solve(A, b);
  EXPECT_EQ(o.result.status, Status::kSuccess);
  EXPECT_GT(o.result.iterations, 0);
  ASSERT_EQ(o.result.history.size(), static_cast<std::size_t>(o.result.iterations) + 1);
  EXPECT_LE(o.result.history.back(), tol_for(T()) * o.result.history.front() * (1 + 1e-12));
  const double relres = testing::relative_residual(A, o.x, b);
  EXPECT_LT(relres, residual_bound(T()));
  // The error is at most cond(A) times the relative residual.
  EXPECT_LT(relative_error(o.x, ref), 300 * residual_bound(T()));
}

TYPED_TEST(KrylovAccuracy, EverySolverOnPoisson) {
  using T = TypeParam;
  const auto A = testing::poisson2d<T>(16);
  const auto b = testing::random_vector<T>(A.nrows, 7);
  for (const Case& c : all_cases()) expect_solves(c, A, b);
}

TYPED_TEST(KrylovAccuracy, NonsymmetricSolversOnConvectionDiffusion) {
  using T = TypeParam;
  const auto A = testing::convection_diffusion2d<T>(16, 0.05);
  ASSERT_FALSE(is_symmetric(A, 1e-3));
  const auto b = testing::random_vector<T>(A.nrows, 8);
  for (const Case& c : all_cases()) {
    if (!testing::symmetric_only(c.name)) expect_solves(c, A, b);
  }
}

TYPED_TEST(KrylovAccuracy, PreconditionerHelpsOnBadlyScaledProblem) {
  // D A D with D spanning 1e-1..1e1: Jacobi undoes the scaling, so the
  // preconditioned methods must need far fewer iterations. This shows the
  // preconditioner is really applied.
  using T = TypeParam;
  const auto A = testing::badly_scaled(testing::poisson2d<T>(12), 3);
  const auto b = testing::random_vector<T>(A.nrows, 9);
  for (const char* name : {"PCG", "PCGF", "PBICGSTAB", "GMRES", "FGMRES", "IDR"}) {
    SCOPED_TRACE(name);
    const std::string extra = tol_field(tol_for(T())) + ", \"gmres_n_restart\": 200";
    auto plain = run<T>(krylov_json(name, extra), A, b);
    auto jacobi = run<T>(krylov_json(name, extra, "BLOCK_JACOBI", "\"relaxation_factor\": 1.0"), A, b);
    EXPECT_EQ(jacobi.result.status, Status::kSuccess);
    EXPECT_LT(2 * jacobi.result.iterations, plain.result.iterations);
    EXPECT_LT(testing::relative_residual(A, jacobi.x, b), residual_bound(T()));
  }
}

TEST(KrylovPreconditioner, CgIgnoresItsPreconditioner) {
  // As AmgX's CG: a preconditioner in CG's scope is never built (even one
  // jaxamg does not implement), and the iterates are those of plain CG.
  const auto A = testing::badly_scaled(testing::poisson2d<double>(12), 5);
  const auto b = testing::random_vector<double>(A.nrows, 1);
  auto plain = run<double>(krylov_json("CG"), A, b);
  auto with_jacobi = run<double>(krylov_json("CG", "", "BLOCK_JACOBI"), A, b);
  auto with_unknown = run<double>(krylov_json("CG", "", "KPZ_POLYNOMIAL"), A, b);
  EXPECT_EQ(plain.result.status, Status::kSuccess);
  EXPECT_EQ(with_jacobi.result.iterations, plain.result.iterations);
  EXPECT_EQ(with_jacobi.result.history, plain.result.history);
  EXPECT_EQ(with_unknown.result.iterations, plain.result.iterations);
  // PCG with the same preconditioner does use it.
  auto pcg = run<double>(krylov_json("PCG", "", "BLOCK_JACOBI"), A, b);
  EXPECT_NE(pcg.result.iterations, plain.result.iterations);
  // And BICGSTAB ignores it like CG.
  auto bicg = run<double>(krylov_json("BICGSTAB"), A, b);
  auto bicg_j = run<double>(krylov_json("BICGSTAB", "", "BLOCK_JACOBI"), A, b);
  EXPECT_EQ(bicg.result.history, bicg_j.result.history);
}

TEST(KrylovPreconditioner, NosolverEqualsPlainMethod) {
  // PCG/PBICGSTAB with NOSOLVER run exactly the unpreconditioned recurrence.
  const auto A = testing::convection_diffusion2d<double>(10, 0.1);
  const auto b = testing::random_vector<double>(A.nrows, 2);
  EXPECT_EQ(run<double>(krylov_json("PBICGSTAB"), A, b).result.history,
            run<double>(krylov_json("BICGSTAB"), A, b).result.history);
  const auto P = testing::poisson2d<double>(10);
  EXPECT_EQ(run<double>(krylov_json("PCG"), P, b).result.history,
            run<double>(krylov_json("CG"), P, b).result.history);
}

TEST(KrylovFlexible, VariablePreconditioner) {
  // A preconditioner that is itself a few Krylov steps is a different
  // (nonlinear) operator at each application. The flexible methods must still
  // converge to the dense solution.
  const auto A = testing::convection_diffusion2d<double>(14, 0.05);
  const auto S = testing::poisson2d<double>(14);
  const auto b = testing::random_vector<double>(A.nrows, 4);
  auto fg = run<double>(krylov_json("FGMRES", "", "BICGSTAB", "\"max_iters\": 3"), A, b);
  EXPECT_EQ(fg.result.status, Status::kSuccess);
  EXPECT_LT(relative_error(fg.x, testing::dense_solve(A, b)), 1e-6);
  auto cgf = run<double>(krylov_json("PCGF", "", "CG", "\"max_iters\": 3"), S, b);
  EXPECT_EQ(cgf.result.status, Status::kSuccess);
  EXPECT_LT(relative_error(cgf.x, testing::dense_solve(S, b)), 1e-6);
}

TEST(KrylovTranspose, TransposedSolveMatchesDense) {
  const auto A = testing::convection_diffusion2d<double>(12, 0.05);
  const auto b = testing::random_vector<double>(A.nrows, 6);
  const auto At = transpose(A);
  for (const char* name : {"GMRES", "FGMRES", "PBICGSTAB", "IDR"}) {
    SCOPED_TRACE(name);
    LinearSolver<double> s(krylov_json(name, "", "BLOCK_JACOBI"));
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
    std::vector<double> x(b.size(), 0.0), xt(b.size(), 0.0);
    auto fwd = s.solve(b.data(), x.data(), A.nrows, false, false);
    auto adj = s.solve(b.data(), xt.data(), A.nrows, false, true);
    EXPECT_EQ(fwd.status, Status::kSuccess);
    EXPECT_EQ(adj.status, Status::kSuccess);
    EXPECT_EQ(adj.history.size(), static_cast<std::size_t>(adj.iterations) + 1);
    EXPECT_LT(relative_error(x, testing::dense_solve(A, b)), 1e-6);
    EXPECT_LT(relative_error(xt, testing::dense_solve(At, b)), 1e-6);
    EXPECT_GT(relative_error(xt, testing::dense_solve(A, b)), 1e-3);  // really A^T
  }
}

TEST(KrylovAmg, PreconditionedByAmgAndForwardsHierarchy) {
  const auto A = testing::poisson2d<double>(24);
  const auto b = testing::random_vector<double>(A.nrows, 12);
  for (const char* name : {"PCG", "FGMRES"}) {
    SCOPED_TRACE(name);
    // The coarsest level is smoothed (NOSOLVER coarse solver), so the test
    // needs nothing beyond AMG and its default smoother.
    LinearSolver<double> s(krylov_json(name, "", "AMG", "\"coarse_solver\": \"NOSOLVER\""));
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
    EXPECT_GE(s.hierarchy().size(), 2u);
    std::vector<double> x(b.size(), 0.0);
    auto r = s.solve(b.data(), x.data(), A.nrows, false);
    EXPECT_EQ(r.status, Status::kSuccess);
    EXPECT_LT(r.iterations, 40);
    EXPECT_LT(testing::relative_residual(A, x, b), 2e-8);
    // The transposed solve is built around the preconditioner's own
    // transposed solver; for symmetric A it must match the forward solve.
    std::vector<double> xt(b.size(), 0.0);
    auto t = s.solve(b.data(), xt.data(), A.nrows, false, true);
    EXPECT_EQ(t.status, Status::kSuccess);
    EXPECT_NEAR(t.iterations, r.iterations, 1);
    EXPECT_LT(relative_error(xt, testing::dense_solve(A, b)), 1e-5);
  }
}

TEST(KrylovApply, FixedIterationsMatchUnmonitoredSolve) {
  // The smoother entry point runs the same recurrence as solve.
  const auto A = std::make_shared<CsrMatrix<double>>(testing::convection_diffusion2d<double>(8, 0.1));
  const auto b = testing::random_vector<double>(A->nrows, 3);
  for (const auto& name : testing::krylov_names()) {
    SCOPED_TRACE(name);
    SolverContext ctx;
    ctx.config = Config::parse(krylov_json(name, "\"monitor_residual\": 0, \"max_iters\": 7"));
    auto s = create_solver<double>(ctx, ctx.config.top_solver());
    s->setup(A);
    std::vector<double> x1(b.size(), 1.0), x2(b.size(), 1.0);
    EXPECT_EQ(s->solve(b.data(), x1.data(), false), Status::kSuccess);
    EXPECT_EQ(s->iterations(), 7);
    s->apply(b.data(), x2.data(), false, 7);
    EXPECT_EQ(x1, x2);
  }
}

TEST(KrylovInput, ZeroGuessIgnoresContentOfX) {
  // use_x0 = false: whatever x holds (here NaN) must not reach the answer.
  const auto A = testing::convection_diffusion2d<double>(8, 0.1);
  const auto b = testing::random_vector<double>(A.nrows, 5);
  for (const auto& name : testing::krylov_names()) {
    SCOPED_TRACE(name);
    LinearSolver<double> s(krylov_json(name));
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
    std::vector<double> x(b.size(), std::nan(""));
    auto r = s.solve(b.data(), x.data(), A.nrows, false);
    if (testing::symmetric_only(name)) continue;  // no convergence promise here
    EXPECT_EQ(r.status, Status::kSuccess);
    EXPECT_LT(testing::relative_residual(A, x, b), 2e-8);
  }
}

TEST(KrylovConfig, RejectsBadKrylovParameters) {
  const auto A = testing::poisson2d<double>(4);
  auto expect_error = [&](const std::string& json, const std::string& what) {
    try {
      run<double>(json, A, testing::random_vector<double>(A.nrows, 1));
      ADD_FAILURE() << "expected ConfigError for " << what;
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  };
  expect_error(krylov_json("GMRES", "\"gmres_n_restart\": 0"), "gmres_n_restart");
  expect_error(krylov_json("FGMRES", "\"gmres_n_restart\": -2"), "got -2");
  expect_error(krylov_json("FGMRES", "\"gmres_krylov_dim\": -1"), "gmres_krylov_dim");
  expect_error(krylov_json("IDR", "\"subspace_dim_s\": 0"), "subspace_dim_s");
  expect_error(krylov_json("IDRMSYNC", "\"subspace_dim_s\": 0"), "set subspace_dim_s to 1 or more");
}

}  // namespace
}  // namespace jaxamg
