// Batched IDR and IDRMSYNC (batched/batched_krylov.cc on the one method of
// solvers/krylov/idr_method.h): every lane of a batch gives the iterations,
// status, residual history and solution of a one-lane solve, bit for bit,
// with lanes that finish at different iterations, blocks narrower than the
// first, and lanes that restart while the others go on (held until the
// shared cycle ends).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "backend/cpu/blas.h"
#include "backend/cpu/vector_backend.h"
#include "backend/lanes/multivector.h"
#include "backend/lanes/vector_backend.h"
#include "batched/batched_krylov.h"
#include "problems.h"
#include "solvers/krylov/idr_method.h"
#include "test_batched_util.h"

namespace jaxamg {
namespace {

using testing::check;

// `method` (IDR or IDRMSYNC) with subspace_dim_s `s` around `precond`
// (NOSOLVER: none).
std::string config(const std::string& method, int s, const std::string& precond,
                   int max_iters = 300) {
  return R"({"config_version": 2, "solver": {"scope": "main", "solver": ")" + method +
         R"(", "subspace_dim_s": )" + std::to_string(s) + R"(, "max_iters": )" +
         std::to_string(max_iters) +
         R"(, "tolerance": 1e-8, "convergence": "RELATIVE_INI", "norm": "L2",
         "monitor_residual": 1, "store_res_history": 1,
         "preconditioner": {"scope": "amg", "solver": ")" + precond +
         R"(", "algorithm": "CLASSICAL", "selector": "PMIS", "max_iters": 1,
         "smoother": {"scope": "s", "solver": "BLOCK_JACOBI", "relaxation_factor": 0.9},
         "coarse_solver": "DENSE_LU_SOLVER"}}})";
}

TEST(BatchedIdr, PreconditionedIdrMatchesOneLaneSolvesExactly) {
  const auto A = testing::convection_diffusion2d<double>(30, 0.05);
  for (int s : {1, 4, 8}) {
    SCOPED_TRACE("s = " + std::to_string(s));
    const std::string cfg = config("IDR", s, "AMG");
    const std::vector<int> its = check<double>(cfg, A, false);
    EXPECT_GE(std::set<int>(its.begin(), its.end()).size(), 3u);
    check<double>(cfg, A, true);
    check<float>(cfg, A, false);
  }
}

TEST(BatchedIdr, IdrmsyncAndUnpreconditionedMatchExactly) {
  const auto A = testing::convection_diffusion2d<double>(24, 0.05);
  check<double>(config("IDRMSYNC", 4, "AMG"), A, true);
  check<float>(config("IDRMSYNC", 8, "AMG"), A, false);
  check<double>(config("IDR", 4, "NOSOLVER"), testing::poisson2d<double>(20), true);
  check<double>(config("IDRMSYNC", 2, "NOSOLVER"), testing::poisson2d<double>(20), false);
}

// More right-hand sides than a block holds: the second block is narrower
// than the first, and the shadow space is laid out again for it.
TEST(BatchedIdr, NarrowerSecondBlockMatchesExactly) {
  const auto A = testing::convection_diffusion2d<double>(20, 0.05);
  LinearSolver<double> s(config("IDR", 4, "AMG"));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const std::size_t n = A.nrows;
  const int k = batched::kMaxBlockLanes + 3;
  std::vector<double> B;
  for (int j = 0; j < k; ++j) {
    const std::vector<double> b = testing::random_vector<double>(static_cast<int>(n), 900 + j);
    B.insert(B.end(), b.begin(), b.end());
  }
  std::vector<double> X(n * k, 0.0);
  std::vector<batched::LaneResult> many;
  ASSERT_TRUE(batched::solve_batched(s.solver(), B.data(), X.data(), A.nrows, k, false, &many));
  for (int j = 0; j < k; ++j) {
    std::vector<double> x(n, 0.0);
    const SolveResult one = s.solve(B.data() + j * n, x.data(), A.nrows, false);
    EXPECT_EQ(many[j].iterations, one.iterations) << "lane " << j;
    EXPECT_EQ(many[j].history, one.history) << "lane " << j;
    EXPECT_TRUE(std::equal(x.begin(), x.end(), X.begin() + j * n)) << "lane " << j;
  }
}

// Drives the method itself. Lane j asks to restart (from its current x) at
// iteration restart_at[j]; a lane restarts only between cycles, so it is
// held until the cycle ends. Each lane must end where a one-lane run ends
// that restarts after as many of its own iterations and takes as many in
// all.
using Op = testing::LaneOperator;

void run_staggered(const IdrShape& shape) {
  const auto A = testing::convection_diffusion2d<double>(20, 0.05);
  const std::size_t n = A.nrows;
  constexpr int k = 3;
  const int iters = 23;
  const int restart_at[k] = {7, 3, 10};
  using S = IdrSlots;
  using LanesMethod = IdrMethod<lanes::VectorBackend<double>>;
  const int slots = LanesMethod::layout(shape).count();
  std::vector<std::vector<double>> b(k);
  for (int j = 0; j < k; ++j) b[j] = testing::random_vector<double>(static_cast<int>(n), 700 + j);

  // The batch: held lanes (kInit set, not started) take no step.
  lanes::VectorBackend<double> be(n, k, slots);
  be.start(k);
  LanesMethod m(be, shape);
  std::vector<double> B(n * k), X(n * k, 0.0), R(n * k), W(n * k);
  for (int j = 0; j < k; ++j) lanes::set_lane<double>(n, k, j, b[j].data(), B.data());
  Op op{A, B.data(), k};
  R = B;
  for (int j = 0; j < k; ++j) be.slots(j)[S::kInit] = 1.0;
  m.init(R.data(), true);
  int own[k] = {0, 0, 0}, restarted_after[k] = {-1, -1, -1};
  bool waiting[k] = {false, false, false};
  for (int it = 0; it < iters; ++it) {
    std::vector<std::uint8_t> now(k, 0);
    for (int j = 0; j < k; ++j) {
      if (it == restart_at[j]) waiting[j] = true;
      if (!waiting[j]) continue;
      be.slots(j)[S::kInit] = 1.0;
      if (m.can_start_lanes()) {
        now[j] = 1;
        waiting[j] = false;
        restarted_after[j] = own[j];
      }
    }
    if (now[0] || now[1] || now[2]) {
      lanes::residual(A, X.data(), B.data(), W.data(), k);
      lanes::copy<double>(n, k, W.data(), R.data(), now.data());
      m.init(R.data(), false);
    }
    m.iteration(op, X.data(), R.data());
    for (int j = 0; j < k; ++j) {
      if (waiting[j]) continue;  // held
      ASSERT_EQ(LanesMethod::outcome(be.slots(j)), IterationResult::kContinue) << "lane " << j;
      ++own[j];
    }
  }
  int held = 0;
  for (int j = 0; j < k; ++j) held += iters - own[j];
  EXPECT_GT(held, 0) << "no lane was held: the test does not test holding";

  for (int j = 0; j < k; ++j) {
    SCOPED_TRACE("lane " + std::to_string(j));
    ASSERT_GE(restarted_after[j], 0);
    cpu::VectorBackend<double> one(n, slots, nullptr);
    IdrMethod<cpu::VectorBackend<double>> m1(one, shape);
    Op op1{A, b[j].data(), 0};
    std::vector<double> x(n, 0.0), r = b[j];
    for (int it = 0; it < own[j]; ++it) {
      if (it == 0 || it == restarted_after[j]) {
        if (it > 0) cpu::residual(A, x.data(), b[j].data(), r.data());
        one.slots()[S::kInit] = 1.0;
        m1.init(r.data());
      }
      m1.iteration(op1, x.data(), r.data());
      ASSERT_EQ(decltype(m1)::outcome(one.slots()), IterationResult::kContinue);
    }
    std::vector<double> xl(n);
    lanes::get_lane<double>(n, k, j, X.data(), xl.data());
    EXPECT_EQ(xl, x);
  }
}

TEST(BatchedIdr, RestartedLanesWaitForTheCycleAndMatchOneLaneRuns) {
  for (bool sync : {false, true}) {
    for (bool precond : {false, true}) {
      for (int s : {1, 4}) {
        SCOPED_TRACE(std::string(sync ? "IDRMSYNC" : "IDR") + (precond ? " with M" : "") +
                     " s = " + std::to_string(s));
        IdrShape sh;
        sh.s = s;
        sh.synchronised = sync;
        sh.preconditioned = precond;
        run_staggered(sh);
      }
    }
  }
}

}  // namespace
}  // namespace jaxamg
