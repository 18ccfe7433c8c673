// Helpers of the fused small-system CG tests (test_small_cg.cc,
// test_small_cg_status.cc): test matrices, configs, one device solve on
// the fused or the multi-kernel path, and tolerant comparisons.
#pragma once
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "api/linear_solver.h"
#include "backend/cuda/device_array.h"
#include "backend/cuda/device_csr.h"
#include "cuda/gpu_testing.h"
#include "device/device_solver.h"
#include "device/small_cg.h"
#include "problems.h"

namespace jaxamg::testing_small_cg {

// Sets an environment variable (or unsets it: nullptr) for a scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// tridiag(-1, diag, -1): diag 2.5 gives cond 9 (~28 CG iterations to 1e-8).
template <class T>
CsrMatrix<T> tridiagonal(int n, double diag) {
  CsrMatrix<T> A(n, n);
  for (int i = 0; i < n; ++i) {
    if (i > 0) {
      A.col.push_back(i - 1);
      A.val.push_back(T(-1));
    }
    A.col.push_back(i);
    A.val.push_back(static_cast<T>(diag));
    if (i + 1 < n) {
      A.col.push_back(i + 1);
      A.val.push_back(T(-1));
    }
    A.row_ptr[i + 1] = static_cast<Index>(A.col.size());
  }
  A.find_diagonal();
  return A;
}

// Symmetric, random pattern and signs, strictly diagonally dominant by 0.5:
// SPD with a condition number of a few tens.
template <class T>
CsrMatrix<T> random_spd(int n, int links, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::uniform_real_distribution<double> mag(0.1, 1.1);
  std::vector<std::map<int, double>> rows(n);
  for (int i = 0; i < n; ++i) {
    for (int l = 0; l < links; ++l) {
      const int j = pick(gen);
      if (j == i) continue;
      const double w = (gen() & 1u) ? mag(gen) : -mag(gen);
      rows[i][j] += w;
      rows[j][i] += w;
    }
  }
  CsrMatrix<T> A(n, n);
  for (int i = 0; i < n; ++i) {
    double sum = 0;
    for (const auto& [j, w] : rows[i]) sum += std::abs(static_cast<double>(static_cast<T>(w)));
    rows[i][i] = sum + 0.5;
    for (const auto& [j, w] : rows[i]) {
      A.col.push_back(j);
      A.val.push_back(static_cast<T>(w));
    }
    A.row_ptr[i + 1] = static_cast<Index>(A.col.size());
  }
  A.find_diagonal();
  return A;
}

inline std::string cg_config(const std::string& params, const char* solver = "CG") {
  return std::string(R"({"config_version": 2, "solver": {"scope": "main", "solver": ")") +
         solver + R"(", )" + params + "}}";
}

// Monitored, with history.
inline std::string monitored(double tol, int max_iters,
                             const char* convergence = "RELATIVE_INI_CORE",
                             const char* norm = "L2") {
  char t[32];
  std::snprintf(t, sizeof(t), "%.17g", tol);  // std::to_string would print 1e-8 as 0.000000
  return R"("monitor_residual": 1, "store_res_history": 1, "tolerance": )" + std::string(t) +
         R"(, "max_iters": )" + std::to_string(max_iters) +
         R"(, "convergence": ")" + convergence + R"(", "norm": ")" + norm + "\"";
}

template <class T>
struct Outcome {
  SolveResult res;
  std::vector<T> x;
  double bytes = 0;
  int blocks = 0;  // of the fused kernel; 0: the multi-kernel path ran
};

// x0 arguments take nullptr for a zero guess: keep them out of deduction.
template <class T>
using GuessOf = const typename std::common_type<std::vector<T>>::type*;

// Solves with `dev` on device copies of b and x0 (a zero guess if x0 is
// null: x then starts as NaN, which the solve must not read).
template <class T>
Outcome<T> run_on(cuda::DeviceSolver<T>& dev, const std::vector<T>& b, GuessOf<T> x0) {
  const std::size_t n = b.size();
  cuda::DeviceArray<T> db, dx;
  db.assign(b);
  dx.assign(x0 ? *x0 : std::vector<T>(n, std::numeric_limits<T>::quiet_NaN()));
  Outcome<T> out;
  out.res = dev.solve(db.data(), dx.data(), x0 != nullptr, nullptr);
  out.x.resize(n);
  cuda::check(cudaMemcpy(out.x.data(), dx.data(), n * sizeof(T), cudaMemcpyDeviceToHost),
              "cudaMemcpy (x)");
  out.bytes = dev.last_solve_bytes();
  out.blocks = dev.last_small_cg_blocks();
  return out;
}

// One solve on a fresh DeviceSolver: the fused kernel (blocks > 0 forces
// its block count) or the multi-kernel path.
template <class T>
Outcome<T> device_run(const Solver<T>& tree, const std::vector<T>& b, GuessOf<T> x0,
                  bool fused, int blocks = 0) {
  ScopedEnv on("JAXAMG_SMALL_CG", fused ? "1" : "0");
  const std::string g = std::to_string(blocks);
  ScopedEnv forced("JAXAMG_SMALL_CG_BLOCKS", blocks > 0 ? g.c_str() : nullptr);
  cuda::DeviceSolver<T> dev(tree);
  return run_on(dev, b, x0);
}

template <class T>
double rel_diff(const std::vector<T>& a, const std::vector<T>& ref) {
  double d = 0, r = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += std::pow(static_cast<double>(a[i]) - static_cast<double>(ref[i]), 2);
    r += std::pow(static_cast<double>(ref[i]), 2);
  }
  return std::sqrt(d / r);
}

// Histories of two paths, entry by entry over their common length: within
// `rel` of the entry plus `abs_frac` of the initial norm (rounding
// differences grow relative to the initial norm, not to a small late one).
inline void expect_close_histories(const std::vector<double>& a,
                                   const std::vector<double>& ref, double rel, double abs_frac) {
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(ref.empty());
  const std::size_t m = std::min(a.size(), ref.size());
  for (std::size_t k = 0; k < m; ++k) {
    EXPECT_LE(std::abs(a[k] - ref[k]), rel * ref[k] + abs_frac * ref[0])
        << "history entry " << k << ": " << a[k] << " vs " << ref[k];
  }
}

template <class T>
constexpr double hist_rel() { return std::is_same<T, double>::value ? 1e-6 : 5e-2; }
template <class T>
constexpr double hist_abs() { return std::is_same<T, double>::value ? 1e-9 : 1e-3; }
template <class T>
constexpr double solve_tol() { return std::is_same<T, double>::value ? 1e-8 : 1e-5; }


// A status test: the fused path and the multi-kernel path on one config.
struct Pair {
  Outcome<double> fused, multi;
};

inline Pair both_paths(const std::string& config, const CsrMatrix<double>& A,
                       const std::vector<double>& b, const std::vector<double>* x0 = nullptr) {
  LinearSolver<double> s(config);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  Pair p;
  p.fused = device_run(s.solver(), b, x0, true);
  p.multi = device_run(s.solver(), b, x0, false);
  EXPECT_GT(p.fused.blocks, 0);
  EXPECT_EQ(p.multi.blocks, 0);
  return p;
}


}  // namespace jaxamg::testing_small_cg
