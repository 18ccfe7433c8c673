// The smoothers written once over backends (diagonal_sweep_method.h,
// chebyshev_method.h) on the CPU backend, one vector at a time, and on the
// lanes backend, k vectors together: every lane must carry the bits of its
// one-vector run, on random matrices, diagonals, right-hand sides and
// guesses, with and without a zero guess, below and above the sizes where
// the kernels go parallel, and on a block narrower than the backend's
// capacity; and the one-vector runs against the recurrences written out
// plainly, for every parity of the step count (the methods alternate the
// iterate between x and a scratch vector).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <type_traits>
#include <vector>

#include "backend/cpu/vector_backend.h"
#include "backend/lanes/multivector.h"
#include "backend/lanes/vector_backend.h"
#include "problems.h"
#include "solvers/smoothers/chebyshev_method.h"
#include "solvers/smoothers/diagonal_sweep_method.h"

namespace jaxamg {
namespace {

// The 2D Poisson pattern with random values: a diagonal in [3, 5] and
// off-diagonals in [-1.2, 0.2], so no two rows are alike.
template <class T>
CsrMatrix<T> random_matrix(int grid, unsigned seed) {
  CsrMatrix<T> A = testing::poisson2d<T>(grid);
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> diag(3.0, 5.0), off(-1.2, 0.2);
  for (Index i = 0; i < A.nrows; ++i) {
    for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) {
      A.val[p] = static_cast<T>(A.col[p] == i ? diag(gen) : off(gen));
    }
  }
  return A;
}

template <class T>
std::vector<T> uniform(std::size_t n, double lo, double hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(n);
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

// Runs `run(method, b, x)` on the lanes backend (a block of k lanes out of
// a capacity of `cap`) and on the CPU backend lane by lane, and compares
// the results bit for bit. make(backend) builds the method on a backend.
template <class T, class Make, class Run>
void expect_lanes_match(const CsrMatrix<T>& A, int k, int cap, bool x_is_zero, unsigned seed,
                        Make make, Run run) {
  const std::size_t n = static_cast<std::size_t>(A.nrows);
  const std::vector<T> B = uniform<T>(n * k, -1.0, 1.0, seed);
  // A guess that the zero-guess runs must overwrite, not read.
  const std::vector<T> X0 = uniform<T>(n * k, -1.0, 1.0, seed + 1);

  lanes::VectorBackend<T> lb(n, cap, 1);
  lb.set_lanes(k);
  auto lanes_method = make(lb);
  std::vector<T> X(X0);
  run(*lanes_method, B.data(), X.data(), x_is_zero);

  std::vector<T> b(n), x(n), xl(n);
  for (int j = 0; j < k; ++j) {
    cpu::VectorBackend<T> cb(n, 1, nullptr);
    auto cpu_method = make(cb);
    lanes::get_lane<T>(n, k, j, B.data(), b.data());
    lanes::get_lane<T>(n, k, j, X0.data(), x.data());
    run(*cpu_method, b.data(), x.data(), x_is_zero);
    lanes::get_lane<T>(n, k, j, X.data(), xl.data());
    ASSERT_EQ(0, std::memcmp(x.data(), xl.data(), n * sizeof(T)))
        << "lane " << j << " of " << k << " (n = " << n << ", x_is_zero = " << x_is_zero << ")";
  }
}

template <class T>
void check_diagonal_sweep(int grid, int k, int cap) {
  const CsrMatrix<T> A = random_matrix<T>(grid, 7u + grid);
  const std::vector<T> d = uniform<T>(A.nrows, 0.1, 0.3, 11u + grid);
  for (bool zero : {true, false}) {
    for (int iterations : {0, 1, 3}) {
      expect_lanes_match<T>(
          A, k, cap, zero, 100u + iterations,
          [&](auto& be) {
            using Be = std::remove_reference_t<decltype(be)>;
            return std::make_unique<DiagonalSweepMethod<Be>>(be, A, d.data());
          },
          [&](auto& m, const T* b, T* x, bool x_is_zero) { m.apply(b, x, x_is_zero, iterations); });
    }
  }
}

template <class T>
void check_chebyshev(int grid, int k, int cap) {
  const CsrMatrix<T> A = random_matrix<T>(grid, 17u + grid);
  const std::vector<T> s = uniform<T>(A.nrows, 0.1, 0.3, 19u + grid);
  const double lmax = 1.7, lmin = lmax / 8;
  for (bool zero : {true, false}) {
    for (int order : {1, 3}) {
      expect_lanes_match<T>(
          A, k, cap, zero, 200u + order,
          [&](auto& be) {
            using Be = std::remove_reference_t<decltype(be)>;
            return std::make_unique<ChebyshevMethod<Be>>(be, A, s.data(), lmin, lmax, order);
          },
          // Two applies: the second restarts the recurrence from the first's x.
          [&](auto& m, const T* b, T* x, bool x_is_zero) {
            m.apply(b, x, x_is_zero, 2);
            m.apply(b, x, false, 1);
          });
    }
  }
}

// r = b - A x, row by row in double.
std::vector<double> plain_residual(const CsrMatrix<double>& A, const std::vector<double>& b,
                                   const std::vector<double>& x) {
  std::vector<double> r(b);
  for (Index i = 0; i < A.nrows; ++i) {
    for (Index p = A.row_ptr[i]; p < A.row_ptr[i + 1]; ++p) r[i] -= A.val[p] * x[A.col[p]];
  }
  return r;
}

void expect_close(const std::vector<double>& want, const std::vector<double>& got,
                  const char* what, int steps, bool zero) {
  double err = 0, ref = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(want[i] - got[i]));
    ref = std::max(ref, std::abs(want[i]));
  }
  EXPECT_LE(err, 1e-13 * ref) << what << ": " << steps << " steps, x_is_zero = " << zero;
}

TEST(SmootherMethods, SweepsMatchThePlainRecurrencesForEveryStepCount) {
  const CsrMatrix<double> A = random_matrix<double>(9, 31u);
  const std::size_t n = static_cast<std::size_t>(A.nrows);
  const std::vector<double> d = uniform<double>(n, 0.1, 0.3, 37u);
  const std::vector<double> b = uniform<double>(n, -1.0, 1.0, 41u);
  const std::vector<double> x0 = uniform<double>(n, -1.0, 1.0, 43u);
  const double lmax = 1.7, lmin = lmax / 8;
  for (bool zero : {true, false}) {
    for (int sweeps = 0; sweeps <= 4; ++sweeps) {
      // x <- x + D (b - A x), `sweeps` times.
      std::vector<double> want = zero ? std::vector<double>(n, 0.0) : x0;
      for (int k = 0; k < sweeps; ++k) {
        const std::vector<double> r = plain_residual(A, b, want);
        for (std::size_t i = 0; i < n; ++i) want[i] += d[i] * r[i];
      }
      cpu::VectorBackend<double> be(n, 1, nullptr);
      DiagonalSweepMethod<cpu::VectorBackend<double>> jacobi(be, A, d.data());
      std::vector<double> x = x0;
      jacobi.apply(b.data(), x.data(), zero, sweeps);
      expect_close(want, x, "diagonal sweep", sweeps, zero);

      // Chebyshev of order 2: p_k = S (b - A x_k) + beta_k p_{k-1},
      // x_{k+1} = x_k + alpha_k p_k; one apply of `sweeps` iterations, and
      // the same steps as iterations (Solver::solve_iteration) after init.
      want = zero ? std::vector<double>(n, 0.0) : x0;
      std::vector<double> p(n, 0.0);
      double alpha_prev = 0;
      for (int k = 0; k < 2 * sweeps; ++k) {
        double alpha, beta;
        chebyshev_step_coefficients(lmin, lmax, k, alpha_prev, &alpha, &beta);
        const std::vector<double> r = plain_residual(A, b, want);
        for (std::size_t i = 0; i < n; ++i) {
          p[i] = d[i] * r[i] + (k == 0 ? 0.0 : beta * p[i]);
          want[i] += alpha * p[i];
        }
        alpha_prev = alpha;
      }
      ChebyshevMethod<cpu::VectorBackend<double>> cheby(be, A, d.data(), lmin, lmax, 2);
      x = x0;
      cheby.apply(b.data(), x.data(), zero, sweeps);
      expect_close(want, x, "Chebyshev apply", 2 * sweeps, zero);
      if (sweeps == 0) continue;
      x = x0;
      cheby.init();
      for (int it = 0; it < sweeps; ++it) cheby.iteration(b.data(), x.data(), zero && it == 0);
      expect_close(want, x, "Chebyshev iterations", 2 * sweeps, zero);
    }
  }
}

TEST(SmootherMethods, DiagonalSweepLanesMatchOneVectorExactly) {
  check_diagonal_sweep<double>(7, 11, 11);
  check_diagonal_sweep<float>(7, 5, 11);
  // 10,000 rows: both backends take their parallel paths.
  check_diagonal_sweep<double>(100, 3, 4);
  check_diagonal_sweep<float>(100, 9, 9);
}

TEST(SmootherMethods, ChebyshevLanesMatchOneVectorExactly) {
  check_chebyshev<double>(7, 11, 11);
  check_chebyshev<float>(7, 5, 11);
  check_chebyshev<double>(100, 3, 4);
  check_chebyshev<float>(100, 9, 9);
}

}  // namespace
}  // namespace jaxamg
