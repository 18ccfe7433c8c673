// Test utilities for the AMG tests: a geometric coarsening written here (so the
// cycle is tested against a coarsening whose behaviour is known), its
// injection into AmgSolver, and config builders.
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "amg/amg_solver.h"
#include "amg/coarsening.h"
#include "config/config.h"
#include "core/csr_matrix.h"
#include "problems.h"
#include "solvers/factory.h"

namespace jaxamg::testing {

struct CoarseningCounters {
  int builds = 0;
  int rebuilds = 0;
};

// Standard geometric coarsening of an nx (1D) or nx*nx (2D) grid with nx
// odd: coarse points are the odd fine points, P interpolates linearly
// (bilinearly in 2D). In 1D the weights are operator dependent,
// p_(i,I) = -a_(i,j)/a_(i,i) for the coarse neighbour j of an even fine i
// (0.5 on Poisson), so a rebuild after new values changes P. R = P^T, with
// row I scaled by 1 + r_skew * (I mod 3) when r_skew != 0 (Petrov-Galerkin).
// A grid that cannot be halved gets a P with no columns (coarsening stalls).
template <class T>
class GeometricCoarsening : public Coarsening<T> {
 public:
  GeometricCoarsening(int dim, CoarseningCounters* counters, double r_skew = 0.0)
      : dim_(dim), counters_(counters), r_skew_(r_skew) {}

  void build(const CsrMatrix<T>& A, TransferOperators<T>& ops) override {
    if (counters_) ++counters_->builds;
    make(A, ops);
  }
  void rebuild(const CsrMatrix<T>& A, TransferOperators<T>& ops) override {
    if (counters_) ++counters_->rebuilds;
    make(A, ops);
  }

 private:
  static T entry(const CsrMatrix<T>& A, Index i, Index j) {
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      if (A.col[k] == j) return A.val[k];
    return T(0);
  }

  void make(const CsrMatrix<T>& A, TransferOperators<T>& ops) const {
    const Index n = A.nrows;
    const Index nx = dim_ == 1 ? n : static_cast<Index>(std::lround(std::sqrt(double(n))));
    if ((dim_ == 2 && nx * nx != n) || nx < 3 || nx % 2 == 0) {
      ops.P = CsrMatrix<T>(n, 0);
      ops.R = CsrMatrix<T>(0, n);
      return;
    }
    const Index ncx = (nx - 1) / 2;
    // 1D weights: rows of P1 as (coarse index, weight) lists.
    std::vector<std::vector<std::pair<Index, double>>> p1(nx);
    for (Index i = 0; i < nx; ++i) {
      if (i % 2 == 1) {
        p1[i].push_back({(i - 1) / 2, 1.0});
        continue;
      }
      for (Index j : {i - 1, i + 1}) {
        if (j < 0 || j >= nx) continue;
        double w = 0.5;
        if (dim_ == 1) w = -static_cast<double>(entry(A, i, j)) / static_cast<double>(A.val[A.diag_pos[i]]);
        p1[i].push_back({(j - 1) / 2, w});
      }
    }
    const Index nc = dim_ == 1 ? ncx : ncx * ncx;
    CsrMatrix<T> P(n, nc);
    if (dim_ == 1) {
      for (Index i = 0; i < n; ++i) {
        for (auto [c, w] : p1[i]) {
          P.col.push_back(c);
          P.val.push_back(static_cast<T>(w));
        }
        P.row_ptr[i + 1] = P.nnz();
      }
    } else {
      for (Index iy = 0; iy < nx; ++iy)
        for (Index ix = 0; ix < nx; ++ix) {
          for (auto [cy, wy] : p1[iy])
            for (auto [cx, wx] : p1[ix]) {
              P.col.push_back(cy * ncx + cx);
              P.val.push_back(static_cast<T>(wy * wx));
            }
          P.row_ptr[iy * nx + ix + 1] = P.nnz();
        }
    }
    P.find_diagonal();
    ops.R = transpose(P);
    if (r_skew_ != 0) {
      for (Index I = 0; I < ops.R.nrows; ++I)
        for (Index k = ops.R.row_ptr[I]; k < ops.R.row_ptr[I + 1]; ++k)
          ops.R.val[k] *= static_cast<T>(1 + r_skew_ * (I % 3));
    }
    ops.P = std::move(P);
  }

  int dim_;
  CoarseningCounters* counters_;
  double r_skew_;
};

// Installs a coarsening factory for AmgSolver<T> for the lifetime of the
// object, then restores the configured algorithms.
template <class T>
class InjectCoarsening {
 public:
  explicit InjectCoarsening(typename AmgSolver<T>::CoarseningFactory f) {
    AmgSolver<T>::set_coarsening_factory(std::move(f));
  }
  ~InjectCoarsening() { AmgSolver<T>::set_coarsening_factory(nullptr); }
  InjectCoarsening(const InjectCoarsening&) = delete;
  InjectCoarsening& operator=(const InjectCoarsening&) = delete;
};

template <class T>
typename AmgSolver<T>::CoarseningFactory geometric(int dim, CoarseningCounters* counters = nullptr,
                                                   double r_skew = 0.0) {
  return [=](const Config&, const std::string&, int) {
    return std::make_unique<GeometricCoarsening<T>>(dim, counters, r_skew);
  };
}

// An AMG solver in scope "amg" monitoring the relative residual, with a
// Jacobi smoother and, as coarse solver, 60 Jacobi sweeps (exact to rounding
// on the 1- to 9-row coarsest grids of the geometric hierarchies).
inline std::string amg_json(const std::string& extra = "", double tolerance = 1e-8) {
  return std::string("{\"config_version\": 2, \"solver\": {\"solver\": \"AMG\", \"scope\": \"amg\", ") +
         "\"max_iters\": 100, \"monitor_residual\": 1, \"convergence\": \"RELATIVE_INI\", " +
         "\"tolerance\": " + std::to_string(tolerance) + ", \"min_coarse_rows\": 2, " +
         "\"smoother\": {\"scope\": \"jacobi\", \"solver\": \"BLOCK_JACOBI\", " +
         "\"relaxation_factor\": 0.7}, " +
         "\"coarse_solver\": {\"scope\": \"coarse\", \"solver\": \"BLOCK_JACOBI\", " +
         "\"max_iters\": 60}" + (extra.empty() ? "" : ", " + extra) + "}}";
}

template <class T>
struct AmgRun {
  std::unique_ptr<SolverContext> ctx;
  std::unique_ptr<Solver<T>> solver;
  AmgSolver<T>& amg() { return dynamic_cast<AmgSolver<T>&>(*solver); }
};

template <class T>
AmgRun<T> make_amg(const std::string& json, std::shared_ptr<const CsrMatrix<T>> A) {
  AmgRun<T> run;
  run.ctx = std::make_unique<SolverContext>();
  run.ctx->config = Config::parse(json);
  run.solver = create_solver<T>(*run.ctx, run.ctx->config.top_solver());
  if (A) run.solver->setup(std::move(A));
  return run;
}

// Average residual reduction per iteration of a monitored solve.
inline double average_rate(const std::vector<double>& history) {
  if (history.size() < 2 || history.front() <= 0) return 1.0;
  return std::pow(history.back() / history.front(), 1.0 / double(history.size() - 1));
}

inline bool solver_available(const std::string& name) {
  const std::string names = implemented_solver_names<double>();
  const std::string padded = ", " + names + ",";
  return padded.find(", " + name + ",") != std::string::npos;
}

}  // namespace jaxamg::testing
