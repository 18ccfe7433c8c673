// Batched GMRES and FGMRES (batched/batched_krylov.cc on the one method of
// solvers/krylov/gmres_method.h): every lane of a batch must give the
// iterations, status, residual history and solution of a one-lane solve, bit
// for bit (below kParallelRows rows every reduction is serial in both paths), with
// restarts inside the solve, lanes that finish at different iterations, and
// lanes whose Arnoldi steps differ (a lane restarted while the others go on).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "api/linear_solver.h"
#include "backend/cpu/blas.h"
#include "backend/cpu/vector_backend.h"
#include "backend/lanes/multivector.h"
#include "backend/lanes/vector_backend.h"
#include "batched/batched_krylov.h"
#include "problems.h"
#include "test_batched_util.h"
#include "solvers/krylov/gmres_method.h"

namespace jaxamg {
namespace {

using testing::check;

// `method` with restart `restart` (and FGMRES's gmres_krylov_dim `dim`),
// norm `norm`, around `precond` (NOSOLVER: none).
std::string config(const std::string& method, int restart, int dim, const std::string& norm,
                   const std::string& precond, int max_iters = 300, int monitor = 1) {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + method +
         R"(", "gmres_n_restart": )" + std::to_string(restart) + R"(, "gmres_krylov_dim": )" +
         std::to_string(dim) + R"(, "max_iters": )" + std::to_string(max_iters) +
         R"(, "tolerance": 1e-8, "convergence": "RELATIVE_INI", "norm": ")" + norm +
         R"(", "monitor_residual": )" + std::to_string(monitor) + R"(, "store_res_history": 1,
         "preconditioner": {"scope": "amg", "solver": ")" + precond +
         R"(", "algorithm": "CLASSICAL", "selector": "PMIS", "max_iters": 1,
         "smoother": {"scope": "s", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.9},
         "coarse_solver": "DENSE_LU_SOLVER"}}})";
}

// Lanes finish at different iterations, after several restarts.
void expect_spread(const std::vector<int>& its, int restart) {
  EXPECT_GE(std::set<int>(its.begin(), its.end()).size(), 3u);
  EXPECT_GT(*std::max_element(its.begin(), its.end()), 2 * restart);
}

TEST(BatchedGmres, PreconditionedGmresMatchesOneLaneSolvesExactly) {
  const auto A = testing::convection_diffusion2d<double>(30, 0.05);
  const std::string cfg = config("GMRES", 4, 0, "L2", "AMG");
  expect_spread(check<double>(cfg, A, false), 4);
  check<double>(cfg, A, true);
  check<float>(cfg, A, false);
}

TEST(BatchedGmres, UnpreconditionedGmresMatchesExactly) {
  const auto A = testing::poisson2d<double>(20);
  const std::string cfg = config("GMRES", 12, 0, "L2", "NOSOLVER");
  expect_spread(check<double>(cfg, A, false), 12);
  check<double>(cfg, A, true);
  check<float>(cfg, A, true);
}

// L1 and LMAX norms: the residual vector is carried by its recurrence.
TEST(BatchedGmres, RecurrenceResidualNormsMatchExactly) {
  const auto A = testing::anisotropic2d<double>(24, 0.05);
  check<double>(config("GMRES", 6, 0, "L1", "AMG"), A, false);
  check<double>(config("GMRES", 9, 0, "LMAX", "NOSOLVER", 40), A, true);
}

TEST(BatchedGmres, FgmresMatchesExactly) {
  const auto A = testing::convection_diffusion2d<double>(30, 0.05);
  const std::string cfg = config("FGMRES", 5, 0, "L2", "AMG");
  expect_spread(check<double>(cfg, A, false), 5);
  check<double>(cfg, A, true);
  check<float>(cfg, A, false);
  check<double>(config("FGMRES", 10, 0, "L2", "NOSOLVER"), testing::poisson2d<double>(20), true);
}

// Truncated FGMRES: x is updated at every step from a ring of directions.
TEST(BatchedGmres, TruncatedFgmresMatchesExactly) {
  const auto A = testing::convection_diffusion2d<double>(30, 0.05);
  const std::string cfg = config("FGMRES", 12, 3, "L2", "AMG");
  expect_spread(check<double>(cfg, A, false), 3);
  check<double>(cfg, A, true);
  check<double>(config("FGMRES", 8, 2, "L1", "NOSOLVER", 60), testing::poisson2d<double>(20), true);
}

// Without monitoring, every lane runs max_iters and reports SUCCESS, but
// the zero right-hand side: its first cycle starts from r = 0, the solution.
TEST(BatchedGmres, UnmonitoredLanesRunMaxIters) {
  const auto A = testing::poisson2d<double>(16);
  const std::vector<int> its = check<double>(config("GMRES", 5, 0, "L2", "AMG", 13, 0), A, true);
  for (std::size_t j = 0; j < its.size(); ++j) EXPECT_EQ(its[j], j == 3 ? 1 : 13) << "lane " << j;
}

// Drives the method itself: lanes are (re)started at different iterations,
// so they run different Arnoldi steps together, and every lane must follow
// the one-lane backend's run with the same restarts.
using Op = testing::LaneOperator;

void run_staggered(const GmresShape& shape) {
  const auto A = testing::convection_diffusion2d<double>(12, 0.05);
  const std::size_t n = A.nrows;
  const int k = 3, iters = 23;
  // Lane j is started at iteration start[j] (re-initialised from its
  // current x), at iteration 0 too.
  const int restart_at[k] = {7, 3, 11};
  std::vector<std::vector<double>> b(k), x_one(k);
  for (int j = 0; j < k; ++j) b[j] = testing::random_vector<double>(static_cast<int>(n), 700 + j);

  using S = GmresSlots;
  const int slots = GmresMethod<cpu::VectorBackend<double>>::layout(shape).count();
  for (int j = 0; j < k; ++j) {
    cpu::VectorBackend<double> be(n, slots, nullptr);
    GmresMethod<cpu::VectorBackend<double>> m(be, shape, true);
    Op op{A, b[j].data(), 0};
    std::vector<double> x(n, 0.0), r = b[j];
    for (int it = 0; it < iters; ++it) {
      if (it == 0 || it == restart_at[j]) {
        if (it > 0) {
          m.finalize(op, x.data(), backend::kAllLanes);
          cpu::residual(A, x.data(), b[j].data(), r.data());
        }
        be.slots()[S::kInit] = 1.0;
        m.init(r.data());
      }
      m.iteration(op, x.data(), r.data());
      ASSERT_EQ(decltype(m)::outcome(be.slots()), IterationResult::kContinue);
    }
    m.finalize(op, x.data(), backend::kAllLanes);
    x_one[j] = x;
  }

  // A slot of the caller's own after the method's: the lanes to finalize.
  const int ending = slots;
  lanes::VectorBackend<double> be(n, k, slots + 1);
  be.start(k);
  GmresMethod<lanes::VectorBackend<double>> m(be, shape, true);
  std::vector<double> B(n * k), X(n * k, 0.0), R(n * k), W(n * k);
  for (int j = 0; j < k; ++j) lanes::set_lane<double>(n, k, j, b[j].data(), B.data());
  Op op{A, B.data(), k};
  R = B;
  for (int it = 0; it < iters; ++it) {
    bool any = false;
    for (int j = 0; j < k; ++j) {
      if (it == 0 || it == restart_at[j]) {
        if (it > 0) be.slots(j)[ending] = 1.0;
        be.slots(j)[S::kInit] = 1.0;
        any = any || it > 0;
      }
    }
    if (any) {
      m.finalize(op, X.data(), ending);
      lanes::residual(A, X.data(), B.data(), W.data(), k);
      std::vector<std::uint8_t> on(k);
      for (int j = 0; j < k; ++j) on[j] = be.slots(j)[ending] != 0.0;
      lanes::copy<double>(n, k, W.data(), R.data(), on.data());
      for (int j = 0; j < k; ++j) be.slots(j)[ending] = 0.0;
    }
    m.init(R.data());
    m.iteration(op, X.data(), R.data());
  }
  for (int j = 0; j < k; ++j) be.slots(j)[ending] = 1.0;
  m.finalize(op, X.data(), ending);
  for (int j = 0; j < k; ++j) {
    std::vector<double> x(n);
    lanes::get_lane<double>(n, k, j, X.data(), x.data());
    EXPECT_EQ(x, x_one[j]) << "lane " << j;
  }
}

TEST(BatchedGmres, LanesAtDifferentArnoldiStepsMatchOneLaneRuns) {
  for (bool flexible : {false, true}) {
    for (bool precond : {false, true}) {
      SCOPED_TRACE(std::string(flexible ? "FGMRES" : "GMRES") + (precond ? " with M" : ""));
      GmresShape sh;
      sh.cycle = 5;
      sh.window = 5;
      sh.flexible = flexible;
      sh.preconditioned = precond;
      run_staggered(sh);
      if (flexible) {
        sh.window = 2;  // truncated
        run_staggered(sh);
      }
    }
  }
}

}  // namespace
}  // namespace jaxamg
