// Helpers for the smoother tests: building a solver from JSON, random
// diagonally dominant matrices, dense copies and dense reference kernels.
#pragma once
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "core/csr_matrix.h"
#include "problems.h"
#include "solvers/factory.h"
#include "solvers/solver.h"

namespace jaxamg::testing {

// A solver built from a JSON config (the top "solver" object), set up on A.
template <class T>
struct Built {
  std::unique_ptr<SolverContext> ctx;
  std::unique_ptr<Solver<T>> solver;
  Solver<T>* operator->() { return solver.get(); }
};

template <class T>
Built<T> build_solver(const std::string& json, std::shared_ptr<const CsrMatrix<T>> A) {
  Built<T> b;
  b.ctx = std::make_unique<SolverContext>();
  b.ctx->config = Config::parse(json);
  b.solver = create_solver<T>(*b.ctx, b.ctx->config.top_solver());
  if (A) b.solver->setup(std::move(A));
  return b;
}

// {"config_version": 2, "solver": {"solver": NAME, "scope": "main", EXTRA}}
inline std::string solver_json(const std::string& name, const std::string& extra = "") {
  std::string s = "{\"config_version\": 2, \"solver\": {\"solver\": \"" + name +
                  "\", \"scope\": \"main\"";
  if (!extra.empty()) s += ", " + extra;
  return s + "}}";
}

// Random nonsymmetric sparse matrix with about `per_row` off-diagonal entries
// per row and a strictly dominant diagonal (a_ii = margin + sum_j |a_ij|,
// with a random sign when `signed_diag`).
template <class T>
std::shared_ptr<CsrMatrix<T>> random_dominant(int n, int per_row, unsigned seed,
                                              double margin = 0.5, bool symmetric = false) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, n - 1);
  std::uniform_real_distribution<double> val(-1.0, 1.0);
  std::vector<std::vector<std::pair<int, double>>> rows(n);
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < per_row; ++k) {
      const int j = pick(gen);
      if (j == i) continue;
      const double a = val(gen);
      rows[i].emplace_back(j, a);
      if (symmetric) rows[j].emplace_back(i, a);
    }
  }
  std::vector<Index> rp{0}, ci;
  std::vector<T> v;
  for (int i = 0; i < n; ++i) {
    double abs_sum = 0;
    for (auto& [j, a] : rows[i]) {
      ci.push_back(j);
      v.push_back(static_cast<T>(a));
      abs_sum += std::abs(a);  // duplicates are summed later; |sum| <= sum of ||
    }
    ci.push_back(i);
    v.push_back(static_cast<T>(abs_sum + margin + (val(gen) + 1.0) * 0.5));
    rp.push_back(static_cast<Index>(ci.size()));
  }
  return std::make_shared<CsrMatrix<T>>(
      make_csr<T>(n, n, rp.data(), ci.data(), v.data(), static_cast<Index>(ci.size())));
}

// Row-major dense copy in double.
template <class T>
std::vector<double> to_dense(const CsrMatrix<T>& A) {
  std::vector<double> M(static_cast<size_t>(A.nrows) * A.ncols, 0.0);
  for (Index i = 0; i < A.nrows; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      M[static_cast<size_t>(i) * A.ncols + A.col[k]] += A.val[k];
  return M;
}

// r = b - M x (dense, double).
inline std::vector<double> dense_residual(const std::vector<double>& M, int n,
                                          const std::vector<double>& x,
                                          const std::vector<double>& b) {
  std::vector<double> r(b);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) r[i] -= M[static_cast<size_t>(i) * n + j] * x[j];
  return r;
}

template <class T>
std::vector<double> to_double(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// max_i |a_i - b_i| / max(1, max_i |b_i|)
template <class T>
double max_rel_diff(const std::vector<T>& a, const std::vector<double>& b) {
  double d = 0, s = 1;
  for (size_t i = 0; i < b.size(); ++i) {
    d = std::max(d, std::abs(static_cast<double>(a[i]) - b[i]));
    s = std::max(s, std::abs(b[i]));
  }
  return d / s;
}

// True if no two coupled rows (a_ij != 0 or a_ji != 0, i != j) share a color.
template <class T>
bool coloring_is_valid(const CsrMatrix<T>& A, const std::vector<int>& color) {
  for (Index i = 0; i < A.nrows; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col[k] != i && color[i] == color[A.col[k]]) return false;
  return true;
}

}  // namespace jaxamg::testing

namespace jaxamg::testing {

// Residual-norm history of a standalone solve of A x = b from x = 0 with
// monitoring on; returns the solver status.
template <class T>
Status solve_monitored(Solver<T>& s, const std::vector<T>& b, std::vector<T>& x) {
  s.set_monitor_residual(true);
  s.set_store_history(true);
  std::fill(x.begin(), x.end(), T(0));
  return s.solve(b.data(), x.data(), true);
}

// Geometric mean of the last `tail` residual ratios.
inline double asymptotic_rate(const std::vector<double>& h, int tail) {
  const int n = static_cast<int>(h.size());
  return std::pow(h[n - 1] / h[n - 1 - tail], 1.0 / tail);
}

}  // namespace jaxamg::testing
