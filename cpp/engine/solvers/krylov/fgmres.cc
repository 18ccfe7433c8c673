// Flexible GMRES (AmgX's FGMRES): the preconditioned vectors z_j = M_j^{-1} v_j
// are stored, so the preconditioner may change from one application to the
// next (an AMG cycle, an inner Krylov solve) and the correction is Z y.
//
// One iteration is one Arnoldi step; gmres_n_restart (capped at max_iters)
// is the restart length m. gmres_krylov_dim = k with 0 < k < m bounds the
// memory: each new vector is orthogonalised against the last k basis vectors
// only, and the iterate is updated at every step from k + 1 stored
// directions (a direct, quasi-minimal-residual form of truncated GMRES). Then
// the rotated right-hand side no longer equals the residual norm, so the
// residual vector is carried by its recurrence and measured directly; it is
// too with L1/LMAX norms. Each restart recomputes the true residual.
// The stored vectors are allocated as the steps reach them (lazy_basis.h):
// nothing at setup, and k + 1 of each kind for a solve of k < m steps.
#include <algorithm>
#include <cmath>

#include "backend/cpu/blas.h"
#include "core/error.h"
#include "solvers/krylov/arnoldi.h"
#include "solvers/krylov/gmres_cycle.h"
#include "solvers/krylov/lazy_basis.h"

namespace jaxamg {

namespace {

template <class T>
class Fgmres final : public krylov::GmresCycle<T> {
 public:
  Fgmres(SolverContext& ctx, const std::string& scope)
      : krylov::GmresCycle<T>(ctx, scope, "FGMRES") {
    krylov_dim_ = this->param_int("gmres_krylov_dim");
    if (krylov_dim_ < 0) {
      throw ConfigError("gmres_krylov_dim: FGMRES (scope '" + scope +
                        "') needs 0 (the restart length) or a positive number of vectors, got " +
                        std::to_string(krylov_dim_) + "; set gmres_krylov_dim to 0 or more");
    }
  }

 protected:
  using Base = krylov::GmresCycle<T>;
  using Base::g_;
  using Base::j_;
  using Base::restart_;
  using Base::rot_;
  using Base::rows;
  using Base::y_;
  using KrylovSolver<T>::max_iters_;
  using KrylovSolver<T>::norm_;
  using KrylovSolver<T>::monitor_residual_;

  void krylov_setup() override {
    shaped_n_ = 0;
    configure();
  }

  void solve_init(const T* b, T* x, bool x_is_zero) override {
    this->initial_residual(b, x, x_is_zero);
    configure();  // max_iters may have changed since setup
    this->begin_solve(monitor_residual_ && (norm_ != NormType::kL2 || truncated_));
  }

  IterationResult solve_iteration(const T* b, T* x, bool /*x_is_zero*/) override {
    const std::size_t n = rows();
    if (j_ == 0) {
      const IterationResult start = this->start_cycle(b, x, vec(0));
      if (start != IterationResult::kContinue) return start;
    }
    const int j = j_;
    T* z = dir(j);
    T* w = vec(j + 1);
    if (z != vec(j)) this->precondition(vec(j), z);
    this->matvec(z, w);

    // Rows rlo..j+1 of column j: orthogonalisation fills rows lo..j, the
    // rotation of row rlo = lo - 1 (truncated case) brings in one more.
    const int lo = truncated_ ? std::max(0, j - window_ + 1) : 0;
    const int rlo = truncated_ ? std::max(0, j - window_) : 0;
    double* col = truncated_ ? col_.data() : &H_[static_cast<std::size_t>(j) * ld_];
    if (lo > rlo) col[0] = 0;
    for (int i = lo; i <= j; ++i) ptrs_[i - lo] = vec(i);
    const double hn = krylov::orthogonalize<T>(n, ptrs_.data(), j - lo + 1, col + (lo - rlo), w,
                                                  this->distribution());
    double col2 = hn * hn;
    for (int i = lo; i <= j; ++i) col2 += col[i - rlo] * col[i - rlo];
    bool invariant = false;
    if (!this->rotate_column(col, rlo, j, hn, col2, &invariant)) return IterationResult::kBreakdown;
    const double diag = col[j - rlo];
    const double gj = g_[j];
    if (!invariant) cpu::scale<T>(n, static_cast<T>(1.0 / hn), w);

    if (truncated_) {
      // p_j = (z_j - sum_i R(i,j) p_i) / R(j,j), in z's slot; x += g_j p_j.
      for (int i = rlo; i < j; ++i) {
        ptrs_[i - rlo] = dir(i);
        coef_[i - rlo] = -col[i - rlo];
      }
      krylov::add_combination<T>(n, ptrs_.data(), j - rlo, coef_.data(), z);
      cpu::scale<T>(n, static_cast<T>(1.0 / diag), z);
      cpu::axpy<T>(n, static_cast<T>(gj), z, x);
    }
    this->advance_residual(j, w, invariant);
    j_ = j + 1;
    if (j_ == cycle_ || invariant) {
      if (!truncated_) update_solution(x);
      j_ = 0;
    }
    return IterationResult::kContinue;
  }

  void solve_finalize(const T* /*b*/, T* x) override {
    if (j_ > 0 && !truncated_) update_solution(x);
    j_ = 0;
  }

  bool residual_norm_estimate(double* norm) const override {
    // Truncated, the rotated right-hand side no longer equals the residual.
    return this->estimate_from_rotations(norm, !truncated_);
  }

 public:
  std::size_t stored_vectors() const override { return V_.allocated() + Z_.allocated(); }

 private:
  // Full storage: v_0..v_m and z_0..z_{m-1}. Truncated: rings of k + 1.
  // Full storage without a preconditioner: z_j = v_j, nothing stored.
  T* vec(int i) { return V_[static_cast<std::size_t>(i % vslots_)]; }
  T* dir(int i) {
    if (zslots_ == 0) return vec(i);
    return Z_[static_cast<std::size_t>(i % zslots_)];
  }

  void configure() {
    cycle_ = std::min(restart_, std::max(1, max_iters_));
    window_ = krylov_dim_ > 0 ? std::min(krylov_dim_, cycle_) : cycle_;
    truncated_ = window_ < cycle_;
    const int vslots = truncated_ ? window_ + 1 : cycle_ + 1;
    const int zslots = truncated_ ? window_ + 1 : (this->has_preconditioner() ? cycle_ : 0);
    const std::size_t n = rows();
    if (shaped_n_ == n && vslots == vslots_ && zslots == zslots_ &&
        static_cast<int>(rot_.size()) >= cycle_) {
      return;
    }
    shaped_n_ = n;
    vslots_ = vslots;
    zslots_ = zslots;
    V_.shape(static_cast<std::size_t>(vslots), n);
    Z_.shape(static_cast<std::size_t>(zslots), n);
    ld_ = static_cast<std::size_t>(cycle_) + 1;
    H_.assign(truncated_ ? 0 : ld_ * cycle_, 0.0);
    col_.assign(window_ + 2, 0.0);
    coef_.assign(window_ + 1, 0.0);
    this->resize_least_squares(cycle_);
    ptrs_.assign(std::max(vslots, zslots), nullptr);
  }

  // Full storage: x += Z y with R y = g over the first j_ columns.
  void update_solution(T* x) {
    const int k = j_;
    std::copy(g_.begin(), g_.begin() + k, y_.begin());
    krylov::back_substitute(H_, static_cast<int>(ld_), k, y_);
    for (int i = 0; i < k; ++i) ptrs_[i] = dir(i);
    krylov::add_combination<T>(rows(), ptrs_.data(), k, y_.data(), x);
  }

  int krylov_dim_ = 0;
  int cycle_ = 1;
  int window_ = 1;
  bool truncated_ = false;
  int vslots_ = 0, zslots_ = 0;
  std::size_t shaped_n_ = 0;
  std::size_t ld_ = 0;
  krylov::LazyBasis<T> V_, Z_;
  std::vector<const T*> ptrs_;
  std::vector<double> H_, col_, coef_;
};

}  // namespace

template <class T>
std::unique_ptr<Solver<T>> make_fgmres(SolverContext& ctx, const std::string& scope) {
  return std::make_unique<Fgmres<T>>(ctx, scope);
}

template std::unique_ptr<Solver<float>> make_fgmres<float>(SolverContext&, const std::string&);
template std::unique_ptr<Solver<double>> make_fgmres<double>(SolverContext&, const std::string&);

}  // namespace jaxamg
