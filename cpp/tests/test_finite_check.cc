// first_non_finite (core/finite_check.h): the blocked, branch-free check of
// solve operands must find exactly the first NaN or infinity, wherever it
// falls against its 8-entry lanes and 2048-entry blocks, and accept every
// finite value (largest, subnormal, signed zero).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "api/linear_solver.h"
#include "core/error.h"
#include "core/finite_check.h"

namespace jaxamg {
namespace {

template <class T>
class FiniteCheck : public ::testing::Test {};
using ValueTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(FiniteCheck, ValueTypes);

const std::int64_t kLengths[] = {0, 1, 7, 8, 9, 2047, 2048, 2049, 4103, 10000};

TYPED_TEST(FiniteCheck, AcceptsEveryKindOfFiniteValue) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  for (const T v : {T(0), -T(0), T(1.5), L::max(), -L::max(), L::min(), L::denorm_min(),
                    -L::denorm_min()}) {
    for (const std::int64_t n : kLengths) {
      const std::vector<T> x(static_cast<std::size_t>(n), v);
      EXPECT_EQ(first_non_finite(x.data(), n), n) << "value " << v << ", n " << n;
      EXPECT_TRUE(all_entries_finite(x.data(), n));
    }
  }
}

TYPED_TEST(FiniteCheck, FindsTheFirstNaNOrInfinityAtEveryPosition) {
  using T = TypeParam;
  using L = std::numeric_limits<T>;
  std::mt19937 gen(7);
  std::normal_distribution<double> normal;
  for (const T bad : {L::quiet_NaN(), -L::quiet_NaN(), L::signaling_NaN(), L::infinity(),
                      -L::infinity()}) {
    for (const std::int64_t n : kLengths) {
      std::vector<T> x(static_cast<std::size_t>(n));
      for (auto& e : x) e = static_cast<T>(normal(gen));
      for (std::int64_t p = 0; p < n; ++p) {
        // Every position near the lane and block edges, a sample elsewhere.
        const std::int64_t in_block = p % 2048;
        if (n > 64 && in_block > 9 && in_block < 2038 && p % 97 != 0 && p != n - 1) continue;
        x[p] = bad;
        EXPECT_EQ(first_non_finite(x.data(), n), p) << "n " << n << ", position " << p;
        EXPECT_FALSE(all_entries_finite(x.data(), n));
        // A second bad entry later on: the first one is still reported.
        if (p + 1 < n) {
          const T keep = x[n - 1];
          x[n - 1] = bad;
          EXPECT_EQ(first_non_finite(x.data(), n), p);
          x[n - 1] = keep;
        }
        x[p] = static_cast<T>(normal(gen));
      }
    }
  }
}

// LinearSolver::solve names the first non-finite entry of b, past the first
// block of the check too.
TEST(FiniteCheck, SolveNamesTheFirstNonFiniteEntryOfB) {
  const Index n = 5000;
  std::vector<Index> rp(n + 1), col(n);
  std::vector<double> val(n, 2.0), b(n, 1.0), x(n, 0.0);
  for (Index i = 0; i < n; ++i) {
    rp[i] = i;
    col[i] = i;
  }
  rp[n] = n;
  LinearSolver<double> s(
      R"({"config_version": 2, "solver": {"scope": "main", "solver": "CG", "max_iters": 5,
          "tolerance": 1e-10, "convergence": "RELATIVE_INI", "monitor_residual": 1}})");
  s.setup(n, rp.data(), col.data(), val.data(), n);
  b[4100] = std::numeric_limits<double>::infinity();
  b[4500] = std::numeric_limits<double>::quiet_NaN();
  try {
    s.solve(b.data(), x.data(), n, false);
    FAIL() << "expected InvalidInput";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(), "b: entry 4100 is NaN or infinite; pass finite values");
  }
  b[4100] = b[4500] = 1.0;
  const SolveResult r = s.solve(b.data(), x.data(), n, false);
  EXPECT_EQ(r.status, Status::kSuccess);
  EXPECT_DOUBLE_EQ(x[4100], 0.5);
}

}  // namespace
}  // namespace jaxamg
