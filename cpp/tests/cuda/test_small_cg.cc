// The fused small-system CG (SmallCg: the whole solve as one cooperative
// kernel) against the multi-kernel device path (JAXAMG_SMALL_CG=0: the
// iteration graph) and against independent references (the engine's CPU
// CG, a dense solve): iteration counts, histories, solutions, traffic,
// block counts forced by JAXAMG_SMALL_CG_BLOCKS, and when the solver
// dispatches to it (statuses: test_small_cg_status.cc). Every test skips
// where no GPU is present.
//
// The two device paths sum in different orders (the fused kernel's
// row-sequential SpMV and per-block partial sums; cuSPARSE CSR_ALG2 and the
// two-stage reduction), so their norms agree to rounding, not bitwise: an
// iteration count can move by one where a norm lands within that rounding
// of the threshold, which the comparisons with other paths allow. Runs of
// the fused kernel with one block count are compared bitwise.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "cuda/small_cg_testing.h"

namespace jaxamg {
namespace {

using namespace testing_small_cg;

// The fused solve against the multi-kernel path, the CPU CG and (small n)
// a dense solve, from a zero guess.
template <class T>
void expect_matches_references(const CsrMatrix<T>& A) {
  const double tol = solve_tol<T>();
  LinearSolver<T> s(cg_config(monitored(tol, 2000)));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const Index n = A.nrows;
  const std::vector<T> b = testing::random_vector<T>(n, 7);
  const Outcome<T> fused = device_run(s.solver(), b, nullptr, true);
  const Outcome<T> multi = device_run(s.solver(), b, nullptr, false);
  std::vector<T> x_cpu(n);
  const SolveResult cpu = s.solve(b.data(), x_cpu.data(), n, false);

  const int natural = (n + cuda::kSmallCgRowsPerBlock - 1) / cuda::kSmallCgRowsPerBlock;
  EXPECT_GE(fused.blocks, 1);
  EXPECT_LE(fused.blocks, natural);
  if (natural > 1) {
    EXPECT_GT(fused.blocks, 1);
  }
  EXPECT_EQ(multi.blocks, 0);

  EXPECT_EQ(fused.res.status, Status::kSuccess);
  EXPECT_EQ(multi.res.status, Status::kSuccess);
  EXPECT_EQ(cpu.status, Status::kSuccess);
  EXPECT_GT(fused.res.iterations, 1);
  EXPECT_LE(std::abs(fused.res.iterations - multi.res.iterations), 1)
      << "fused " << fused.res.iterations << " multi-kernel " << multi.res.iterations;
  EXPECT_LE(std::abs(fused.res.iterations - cpu.iterations), 1)
      << "fused " << fused.res.iterations << " cpu " << cpu.iterations;
  ASSERT_EQ(fused.res.history.size(), static_cast<std::size_t>(fused.res.iterations) + 1);
  EXPECT_EQ(fused.res.residual, fused.res.history.back());
  EXPECT_NEAR(fused.res.history[0], cpu.history[0], 1e-10 * cpu.history[0]);
  expect_close_histories(fused.res.history, multi.res.history, hist_rel<T>(), hist_abs<T>());
  expect_close_histories(fused.res.history, cpu.history, hist_rel<T>(), hist_abs<T>());

  // SUCCESS passed the true-residual check: recomputed on the host (float
  // residuals carry rounding of a few 1e-7 of ||b||).
  const double slack = std::is_same<T, double>::value ? 1.01 : 1.5;
  EXPECT_LT(testing::relative_residual(A, fused.x, b), tol * slack);
  EXPECT_LT(rel_diff(fused.x, multi.x), 1e4 * tol);
  EXPECT_LT(rel_diff(fused.x, x_cpu), 1e4 * tol);
  if (n <= 1200) {
    const std::vector<double> exact = testing::dense_solve(A, b);
    const std::vector<T> xe(exact.begin(), exact.end());
    EXPECT_LT(rel_diff(fused.x, xe), 1e4 * tol);
  }
  // The same traffic model: equal for equal iteration counts (one pass,
  // one true check each).
  if (fused.res.iterations == multi.res.iterations) {
    EXPECT_DOUBLE_EQ(fused.bytes, multi.bytes);
  }
}

template <class T>
class SmallCgTyped : public ::testing::Test {};
using Precisions = ::testing::Types<double, float>;
TYPED_TEST_SUITE(SmallCgTyped, Precisions);

TYPED_TEST(SmallCgTyped, OneBlockSystems) {
  REQUIRE_GPU();
  using T = TypeParam;
  expect_matches_references(random_spd<T>(100, 3, 1));
  expect_matches_references(testing::poisson1d<T>(60));
}

// 777 rows: two blocks, the second partly filled; 1024: two full blocks.
TYPED_TEST(SmallCgTyped, FewBlockSystems) {
  REQUIRE_GPU();
  using T = TypeParam;
  expect_matches_references(random_spd<T>(777, 4, 2));
  expect_matches_references(testing::poisson2d<T>(32));
}

TYPED_TEST(SmallCgTyped, ManyBlockSystems) {
  REQUIRE_GPU();
  using T = TypeParam;
  expect_matches_references(tridiagonal<T>(10000, 2.5));
  expect_matches_references(random_spd<T>(5000, 5, 3));
}

// The largest size dispatched: 256 blocks, or as many as fit.
TYPED_TEST(SmallCgTyped, LargestSystem) {
  REQUIRE_GPU();
  using T = TypeParam;
  expect_matches_references(tridiagonal<T>(cuda::kSmallCgMaxRows, 2.5));
}

TEST(SmallCg, Poisson2dDouble) {
  REQUIRE_GPU();
  expect_matches_references(testing::poisson2d<double>(64));
  expect_matches_references(testing::poisson1d<double>(100));
}

// The same solve with forced block counts: the same iterations and status,
// solutions equal to rounding; repeated runs with one count are bitwise equal.
template <class T>
void expect_block_counts_agree() {
  const auto A = random_spd<T>(3000, 4, 5);
  LinearSolver<T> s(cg_config(monitored(solve_tol<T>(), 500)));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const std::vector<T> b = testing::random_vector<T>(A.nrows, 9);
  const Outcome<T> base = device_run(s.solver(), b, nullptr, true, 1);
  EXPECT_EQ(base.blocks, 1);
  EXPECT_EQ(base.res.status, Status::kSuccess);
  for (int g : {2, 7, 0}) {
    SCOPED_TRACE("blocks " + std::to_string(g));
    const Outcome<T> r = device_run(s.solver(), b, nullptr, true, g);
    if (g > 0) {
      EXPECT_EQ(r.blocks, g);
    }
    EXPECT_EQ(r.res.status, base.res.status);
    EXPECT_EQ(r.res.iterations, base.res.iterations);
    expect_close_histories(r.res.history, base.res.history, hist_rel<T>(), hist_abs<T>());
    EXPECT_LT(rel_diff(r.x, base.x), 1e3 * solve_tol<T>());
  }
  const Outcome<T> a = device_run(s.solver(), b, nullptr, true, 7);
  const Outcome<T> again = device_run(s.solver(), b, nullptr, true, 7);
  EXPECT_EQ(a.x, again.x);
  EXPECT_EQ(a.res.history, again.res.history);
  EXPECT_EQ(a.res.iterations, again.res.iterations);
}

TEST(SmallCg, ForcedBlockCountsAgreeDouble) {
  REQUIRE_GPU();
  expect_block_counts_agree<double>();
}

TEST(SmallCg, ForcedBlockCountsAgreeFloat) {
  REQUIRE_GPU();
  expect_block_counts_agree<float>();
}

// One DeviceSolver, several solves: no state leaks from one to the next.
TEST(SmallCg, RepeatedSolvesOnOneSolver) {
  REQUIRE_GPU();
  ScopedEnv on("JAXAMG_SMALL_CG", nullptr);
  ScopedEnv forced("JAXAMG_SMALL_CG_BLOCKS", nullptr);
  const auto A = random_spd<double>(2500, 4, 8);
  LinearSolver<double> s(cg_config(monitored(1e-9, 300)));
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const auto b1 = testing::random_vector<double>(A.nrows, 1);
  const auto b2 = testing::random_vector<double>(A.nrows, 2);
  cuda::DeviceSolver<double> dev(s.solver());
  const Outcome<double> r1 = run_on(dev, b1, nullptr);
  const Outcome<double> r2 = run_on(dev, b2, &r1.x);  // a guess of another system
  const Outcome<double> r1_again = run_on(dev, b1, nullptr);
  cuda::DeviceSolver<double> fresh(s.solver());
  const Outcome<double> r2_fresh = run_on(fresh, b2, &r1.x);
  EXPECT_GT(r1.blocks, 0);
  EXPECT_EQ(r1_again.x, r1.x);
  EXPECT_EQ(r1_again.res.history, r1.res.history);
  EXPECT_EQ(r2_fresh.x, r2.x);
  EXPECT_EQ(r2_fresh.res.iterations, r2.res.iterations);
  EXPECT_EQ(r2.res.status, Status::kSuccess);
}

// Which solves take the fused path, and the fallback when it cannot run.
TEST(SmallCg, Dispatch) {
  REQUIRE_GPU();
  ScopedEnv forced("JAXAMG_SMALL_CG_BLOCKS", nullptr);
  const auto A = random_spd<double>(2000, 4, 8);
  const auto b = testing::random_vector<double>(A.nrows, 1);
  auto blocks_of = [&](const std::string& cfg, const CsrMatrix<double>& M,
                       const std::vector<double>& rhs, Status* status = nullptr) {
    LinearSolver<double> s(cfg);
    s.setup(M.nrows, M.row_ptr.data(), M.col.data(), M.val.data(), M.nnz());
    cuda::DeviceSolver<double> dev(s.solver());
    const Outcome<double> r = run_on(dev, rhs, nullptr);
    if (status) *status = r.res.status;
    return r.blocks;
  };
  const std::string cg = cg_config(monitored(1e-8, 200));
  EXPECT_GT(blocks_of(cg, A, b), 0);
  {
    ScopedEnv off("JAXAMG_SMALL_CG", "0");
    EXPECT_EQ(blocks_of(cg, A, b), 0);
  }
  // PCG without a preconditioner is CG.
  EXPECT_GT(blocks_of(cg_config(monitored(1e-8, 200) + R"(, "preconditioner": "NOSOLVER")",
                                "PCG"),
                      A, b),
            0);
  // With an AMG preconditioner it is not.
  EXPECT_EQ(blocks_of(cg_config(monitored(1e-8, 200) + R"(, "preconditioner": {"scope": "amg",
                "solver": "AMG", "max_iters": 1, "algorithm": "AGGREGATION", "selector": "SIZE_8",
                "presweeps": 1, "postsweeps": 1, "coarse_solver": "DENSE_LU_SOLVER",
                "smoother": {"scope": "l1", "solver": "JACOBI_L1", "relaxation_factor": 0.9}})",
                                "PCG"),
                      A, b),
            0);
  // Above the size limit.
  const auto big = tridiagonal<double>(cuda::kSmallCgMaxRows + 1, 2.5);
  const auto b_big = testing::random_vector<double>(big.nrows, 1);
  EXPECT_EQ(blocks_of(cg_config(R"("monitor_residual": 0, "max_iters": 3)"), big, b_big), 0);
  // A forced block count that cannot be co-resident: the multi-kernel path
  // solves instead.
  {
    ScopedEnv huge("JAXAMG_SMALL_CG_BLOCKS", "1000000");
    Status status = Status::kFailed;
    EXPECT_EQ(blocks_of(cg, A, b, &status), 0);
    EXPECT_EQ(status, Status::kSuccess);
  }
  // A value that is not a block count is an error naming the variable.
  for (const char* bad : {"0", "-3", "12x", "many", "2000000"}) {
    ScopedEnv wrong("JAXAMG_SMALL_CG_BLOCKS", bad);
    try {
      cuda::small_cg_forced_blocks();
      ADD_FAILURE() << "JAXAMG_SMALL_CG_BLOCKS=" << bad << " was accepted";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("JAXAMG_SMALL_CG_BLOCKS='") + bad + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

// Timing of one solve call (launch to result on the host) of plain CG on a
// tridiagonal system: the fused kernel at several block counts against the
// multi-kernel path. Run with --gtest_also_run_disabled_tests.
TEST(SmallCgBench, DISABLED_Tridiagonal) {
  REQUIRE_GPU();
  for (int n : {1000, 10000, 100000}) {
    const auto A = tridiagonal<double>(n, 2.5);
    LinearSolver<double> s(cg_config(monitored(1e-8, 200)));
    s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
    const auto b = testing::random_vector<double>(n, 1);
    cuda::DeviceArray<double> db, dx(n);
    db.assign(b);
    cudaStream_t stream;
    cuda::check(cudaStreamCreate(&stream), "cudaStreamCreate");
    auto time = [&](const char* label, bool fused, int blocks) {
      ScopedEnv on("JAXAMG_SMALL_CG", fused ? "1" : "0");
      const std::string g = std::to_string(blocks);
      ScopedEnv forced("JAXAMG_SMALL_CG_BLOCKS", blocks > 0 ? g.c_str() : nullptr);
      cuda::DeviceSolver<double> dev(s.solver());
      SolveResult r;
      for (int k = 0; k < 5; ++k) r = dev.solve(db.data(), dx.data(), false, stream);
      std::vector<double> us;
      for (int k = 0; k < 100; ++k) {
        const auto t0 = std::chrono::steady_clock::now();
        r = dev.solve(db.data(), dx.data(), false, stream);
        us.push_back(std::chrono::duration<double, std::micro>(
                         std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(us.begin(), us.end());
      std::printf("n=%-7d %-22s blocks=%-4d iters=%-3d status=%d  median %8.1f us  min %8.1f us"
                  "  (%.2f us/iter)\n",
                  n, label, dev.last_small_cg_blocks(), r.iterations, static_cast<int>(r.status),
                  us[us.size() / 2], us[0], us[us.size() / 2] / std::max(r.iterations, 1));
    };
    time("multi-kernel (graph)", false, 0);
    time("fused, auto blocks", true, 0);
    for (int g : {1, 2, 4, 8, 16, 32, 64, 128}) time("fused, forced", true, g);
    cudaStreamDestroy(stream);
  }
}

}  // namespace
}  // namespace jaxamg
