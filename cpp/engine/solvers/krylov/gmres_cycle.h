// What GMRES and FGMRES share: the restart cycle. Each cycle starts from the
// true residual r = b - A x (beta = |r|, v_0 = r / beta); each Arnoldi step
// rotates the new Hessenberg column into triangular form and updates the
// rotated right-hand side g, whose last entry |g_{j+1}| is the residual norm
// of the least-squares iterate; with L1/LMAX norms (or truncated FGMRES) the
// residual vector is carried by its own recurrence instead.
#pragma once
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/blas.h"
#include "solvers/krylov/hessenberg.h"
#include "solvers/krylov/krylov_solver.h"

namespace jaxamg::krylov {

template <class T>
class GmresCycle : public KrylovSolver<T> {
 public:
  GmresCycle(SolverContext& ctx, const std::string& scope, const std::string& name)
      : KrylovSolver<T>(ctx, scope, name, true) {
    restart_ = this->positive_param("gmres_n_restart");
  }

  // The n-vectors the method holds besides the residual (basis vectors and
  // work space): none after setup, they are allocated as a solve needs them.
  virtual std::size_t stored_vectors() const = 0;

 protected:
  // At the start of a solve: the first cycle begins from initial_residual's r_.
  void begin_solve(bool track_residual) {
    j_ = 0;
    first_cycle_ = true;
    estimate_ = -1;
    track_residual_ = track_residual;
  }

  // At j_ == 0: r_ = b - A x (after the first cycle), v0 = r_ / |r_|, g =
  // |r_| e_1. Returns kContinue to go on with the Arnoldi step, kConverged
  // for r_ = 0 and kBreakdown for a non-finite residual.
  IterationResult start_cycle(const T* b, const T* x, T* v0) {
    const std::size_t n = this->rows();
    T* r = this->r_.data();
    if (!first_cycle_) this->residual_of(x, b, r);
    first_cycle_ = false;
    const double beta = this->global_norm(n, r, NormType::kL2);
    estimate_ = beta;
    if (beta == 0.0) return IterationResult::kConverged;
    if (!std::isfinite(beta)) return IterationResult::kBreakdown;
    cpu::copy(n, r, v0);
    cpu::scale<T>(n, static_cast<T>(1.0 / beta), v0);
    std::fill(g_.begin(), g_.end(), 0.0);
    g_[0] = beta;
    return IterationResult::kContinue;
  }

  // Column j of the Hessenberg matrix, rows first..j in col[0..j-first]
  // (col2: the squared norm of the whole column, hn included): applies the
  // earlier rotations, makes rotation j from (h_jj, hn) and rotates g.
  // Returns false when the rotated diagonal vanishes (the new direction adds
  // nothing: singular Hessenberg matrix); `invariant` is set when hn ~ 0,
  // the "happy" breakdown that closes the cycle.
  bool rotate_column(double* col, int first, int j, double hn, double col2, bool* invariant) {
    const double tiny = unit_roundoff<T>() * std::sqrt(col2);
    for (int i = first; i < j; ++i) rot_[i].apply(col[i - first], col[i + 1 - first]);
    double& diag = col[j - first];
    if (!make_givens(diag, hn, rot_[j]) || !(diag > tiny)) return false;
    g_[j + 1] = -rot_[j].s * g_[j];
    g_[j] = rot_[j].c * g_[j];
    estimate_ = std::abs(g_[j + 1]);
    *invariant = !(hn > tiny);
    return true;
  }

  // r_j = s_j^2 r_{j-1} + c_j g_{j+1} v_{j+1}: the residual of the
  // least-squares iterate without forming it (exact for any basis with
  // A Z = V H); w is v_{j+1}, unused when the space is invariant.
  void advance_residual(int j, const T* w, bool invariant) {
    if (!track_residual_) return;
    const std::size_t n = this->rows();
    T* r = this->r_.data();
    const double s2 = rot_[j].s * rot_[j].s;
    if (invariant) {
      cpu::scale<T>(n, static_cast<T>(s2), r);
    } else {
      cpu::axpby<T>(n, static_cast<T>(rot_[j].c * g_[j + 1]), w, static_cast<T>(s2), r);
    }
  }

  void resize_least_squares(int m) {
    g_.assign(m + 1, 0.0);
    y_.assign(m + 1, 0.0);
    rot_.assign(m, Givens{});
  }

  // The L2 residual norm from g, where the method keeps it.
  bool estimate_from_rotations(double* norm, bool available) const {
    if (this->norm_ != NormType::kL2 || !available || estimate_ < 0) return false;
    *norm = estimate_;
    return true;
  }

  int restart_ = 20;
  int j_ = 0;  // Arnoldi step within the cycle
  std::vector<double> g_, y_;
  std::vector<Givens> rot_;

 private:
  bool first_cycle_ = true;
  bool track_residual_ = false;
  double estimate_ = -1;
};

}  // namespace jaxamg::krylov
