// What the batched-solve tests share: right-hand sides that make lanes
// finish at different iterations, and the check that every lane of a
// batched solve gives the numbers of a one-lane solve bit for bit.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <type_traits>
#include <vector>

#include "api/linear_solver.h"
#include "backend/cpu/blas.h"
#include "backend/lanes/multivector.h"
#include "batched/batched_krylov.h"
#include "core/csr_matrix.h"
#include "problems.h"

namespace jaxamg::testing {

// A with values of type T.
template <class T>
CsrMatrix<T> in_type(const CsrMatrix<double>& A) {
  if constexpr (std::is_same<T, double>::value) {
    return A;
  } else {
    return convert_values<T>(A);
  }
}

// The operator of a method driven directly, on one lane (k = 0: the CPU
// backend) or on a block of k lanes; a fixed diagonal scaling stands for M.
struct LaneOperator {
  const CsrMatrix<double>& A;
  const double* b;
  int k;
  void matvec(const double* x, double* y) const {
    if (k == 0) {
      cpu::spmv(A, x, y);
    } else {
      lanes::spmv(A, x, y, k);
    }
  }
  void precondition(const double* r, double* z) const {
    const std::size_t n = A.nrows, w = k == 0 ? 1 : k;
    for (std::size_t i = 0; i < n * w; ++i) z[i] = r[i] * (1.0 + 0.25 * ((i / w) % 3));
  }
  void residual(const double* x, double* r) const {
    if (k == 0) {
      cpu::residual(A, x, b, r);
    } else {
      lanes::residual(A, x, b, r, k);
    }
  }
};

// Seven right-hand sides: random ones of different scales, a zero one, and
// one whose guess is close to its solution; with x0, random guesses on some
// lanes.
struct Lanes {
  std::vector<double> B, X0;
};
inline Lanes make_lanes(const CsrMatrix<double>& A, bool with_x0) {
  const Index n = A.nrows;
  const double scale[] = {1.0, 1e3, 1e-2, 0.0, 1.0, 7.0, 1.0};
  Lanes L;
  for (int j = 0; j < 7; ++j) {
    std::vector<double> b = testing::random_vector<double>(n, 300 + j);
    std::vector<double> x0(n, 0.0);
    for (double& v : b) v *= scale[j];
    if (j == 6) {
      // b = A xs, x0 = xs + a small perturbation: few iterations.
      const std::vector<double> xs = testing::random_vector<double>(n, 400);
      cpu::spmv(A, xs.data(), b.data());
      if (with_x0) {
        x0 = testing::random_vector<double>(n, 401);
        for (Index i = 0; i < n; ++i) x0[i] = xs[i] + 1e-5 * x0[i];
      }
    } else if (with_x0 && (j == 1 || j == 4)) {
      x0 = testing::random_vector<double>(n, 500 + j);
    }
    L.B.insert(L.B.end(), b.begin(), b.end());
    L.X0.insert(L.X0.end(), x0.begin(), x0.end());
  }
  return L;
}

// Solves the lanes one by one and batched (batched::solve_batched, so the
// batched path must run) and expects the same numbers bit for bit. Returns
// the lanes' iteration counts.
template <class T>
std::vector<int> check(const std::string& cfg, const CsrMatrix<double>& Ad, bool use_x0) {
  const CsrMatrix<T> A = in_type<T>(Ad);
  const Index n = A.nrows;
  LinearSolver<T> s(cfg);
  s.setup(n, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  const Lanes L = make_lanes(Ad, use_x0);
  const int k = static_cast<int>(L.B.size() / n);
  const std::vector<T> B(L.B.begin(), L.B.end()), X0(L.X0.begin(), L.X0.end());

  std::vector<T> X = X0;
  std::vector<batched::LaneResult> many;
  EXPECT_TRUE(batched::solve_batched(s.solver(), B.data(), X.data(), n, k, use_x0, &many));
  std::vector<int> iterations;
  for (int j = 0; j < k; ++j) {
    SCOPED_TRACE("lane " + std::to_string(j));
    std::vector<T> x(X0.begin() + j * n, X0.begin() + (j + 1) * n);
    const SolveResult one = s.solve(B.data() + j * n, x.data(), n, use_x0);
    iterations.push_back(one.iterations);
    EXPECT_EQ(many[j].status, one.status);
    EXPECT_EQ(many[j].iterations, one.iterations);
    EXPECT_EQ(many[j].history, one.history);
    EXPECT_EQ(many[j].residual, one.residual);
    EXPECT_TRUE(std::equal(x.begin(), x.end(), X.begin() + j * n)) << "solution differs";
  }
  // The batched path of LinearSolver (solve_many) gives the same.
  std::vector<T> Xm = X0;
  const std::vector<SolveResult> viaapi = s.solve_many(B.data(), Xm.data(), n, k, use_x0);
  EXPECT_EQ(Xm, X);
  for (int j = 0; j < k; ++j) EXPECT_EQ(viaapi[j].iterations, many[j].iterations);
  return iterations;
}

}  // namespace jaxamg::testing
