// Helpers for the Krylov tests: configs in AmgX JSON, a solve through the
// public LinearSolver, reference errors against dense_solve, and small
// matrices built from dense arrays.
#pragma once
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "api/linear_solver.h"
#include "core/csr_matrix.h"
#include "problems.h"

namespace jaxamg::testing {

// Every Krylov solver name with its preconditioner key honoured or not.
inline const std::vector<std::string>& krylov_names() {
  static const std::vector<std::string> names = {"CG",     "PCG",   "PCGF", "BICGSTAB", "PBICGSTAB",
                                                 "GMRES",  "FGMRES", "IDR", "IDRMSYNC"};
  return names;
}

inline bool symmetric_only(const std::string& name) {
  return name == "CG" || name == "PCG" || name == "PCGF";
}

// The "main" solver object: NAME with monitoring and history on, RELATIVE_INI
// 1e-8, max_iters 1000, and a scoped preconditioner (NOSOLVER by default);
// `extra` adds fields or replaces those defaults.
inline std::string krylov_json(const std::string& name, const std::string& extra = "",
                               const std::string& precond = "NOSOLVER",
                               const std::string& precond_extra = "") {
  std::string s = "{\"config_version\": 2, \"solver\": {\"scope\": \"main\", \"solver\": \"" + name + "\"";
  const char* defaults[][2] = {{"max_iters", "1000"},       {"tolerance", "1e-8"},
                               {"convergence", "\"RELATIVE_INI\""}, {"monitor_residual", "1"},
                               {"store_res_history", "1"}};
  for (const auto& d : defaults) {
    const std::string key = std::string("\"") + d[0] + "\"";
    if (extra.find(key) == std::string::npos) s += ", " + key + ": " + d[1];
  }
  if (!extra.empty()) s += ", " + extra;
  s += ", \"preconditioner\": {\"scope\": \"p\", \"solver\": \"" + precond + "\", \"max_iters\": 1";
  if (!precond_extra.empty()) s += ", " + precond_extra;
  return s + "}}}";
}

template <class T>
struct Outcome {
  SolveResult result;
  std::vector<T> x;
};

// Sets up a LinearSolver on A and solves A x = b (x0 if given, else zero).
template <class T>
Outcome<T> run(const std::string& json, const CsrMatrix<T>& A, const std::vector<T>& b,
               const std::vector<T>* x0 = nullptr, bool transpose = false) {
  LinearSolver<T> s(json);
  s.setup(A.nrows, A.row_ptr.data(), A.col.data(), A.val.data(), A.nnz());
  Outcome<T> o;
  o.x = x0 ? *x0 : std::vector<T>(b.size(), T(0));
  o.result = s.solve(b.data(), o.x.data(), static_cast<Index>(b.size()), x0 != nullptr, transpose);
  return o;
}

// ||x - ref||_2 / ||ref||_2 in double.
template <class T>
double relative_error(const std::vector<T>& x, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    num += (x[i] - ref[i]) * (x[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

// The residual norm b - A x in the given norm, accumulated in double.
template <class T>
double true_residual(const CsrMatrix<T>& A, const std::vector<T>& x, const std::vector<T>& b,
                     NormType type) {
  std::vector<double> r(b.begin(), b.end());
  for (Index i = 0; i < A.nrows; ++i) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      r[i] -= static_cast<double>(A.val[k]) * static_cast<double>(x[A.col[k]]);
    }
  }
  double s = 0;
  for (double v : r) {
    if (type == NormType::kL2) s += v * v;
    if (type == NormType::kL1) s += std::abs(v);
    if (type == NormType::kLMax) s = std::max(s, std::abs(v));
  }
  return type == NormType::kL2 ? std::sqrt(s) : s;
}

// A CSR matrix from a dense row-major array (zeros dropped).
template <class T>
CsrMatrix<T> from_dense(int n, const std::vector<double>& M) {
  std::vector<Index> rp{0}, ci;
  std::vector<T> v;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      if (M[i * n + j] != 0) {
        ci.push_back(j);
        v.push_back(static_cast<T>(M[i * n + j]));
      }
    }
    rp.push_back(static_cast<Index>(ci.size()));
  }
  return make_csr<T>(n, n, rp.data(), ci.data(), v.data(), static_cast<Index>(ci.size()));
}

// D A D with D a random positive diagonal spanning two orders of magnitude:
// still SPD when A is, but Jacobi preconditioning now changes the spectrum.
template <class T>
CsrMatrix<T> badly_scaled(const CsrMatrix<T>& A, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> e(-1.0, 1.0);
  std::vector<double> d(A.nrows);
  for (auto& di : d) di = std::pow(10.0, e(gen));
  CsrMatrix<T> B = A;
  for (Index i = 0; i < A.nrows; ++i) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k) {
      B.val[k] = static_cast<T>(d[i] * static_cast<double>(A.val[k]) * d[A.col[k]]);
    }
  }
  return B;
}

}  // namespace jaxamg::testing
