#include "solvers/direct/dense_lu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/error.h"
#include "solvers/direct/dense_kernels.h"

namespace jaxamg {

namespace {

constexpr Index kPanel = 64;
// Beyond this the dense copy alone would take more memory than a coarse
// level should (32768^2 doubles = 8 GiB).
constexpr double kMaxBytes = 8.0 * 1024 * 1024 * 1024;

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

template <class T>
DenseLUSolver<T>::DenseLUSolver(SolverContext& ctx, const std::string& scope)
    : Solver<T>(ctx, scope, "DENSE_LU_SOLVER") {
  this->max_iters_ = 1;
}

template <class T>
void DenseLUSolver<T>::solver_setup(bool /*reuse_structure*/) {
  gathered_.reset();
  std::shared_ptr<const CsrMatrix<T>> whole = this->A_;
  if (const Distribution<T>* dist = this->A_->dist.get()) {
    // Collective; only rank 0 receives (and factors) the matrix. Its errors
    // reach every process through setup's agreement.
    gathered_ = dist->gather_system(*this->A_);
    whole = gathered_->matrix();
    gb_.assign(whole ? whole->nrows : 0, T(0));
    gx_.assign(gb_.size(), T(0));
    if (!whole) {
      n_ = 0;
      lu_.clear();
      piv_.clear();
      return;
    }
  }
  const CsrMatrix<T>& A = *whole;
  n_ = A.nrows;
  const double bytes = static_cast<double>(n_) * n_ * sizeof(T);
  if (bytes > kMaxBytes) {
    throw SetupError("DENSE_LU_SOLVER: a dense copy of the " + std::to_string(n_) + " x " +
                     std::to_string(n_) + " matrix needs " + fmt(bytes / (1 << 30)) +
                     " GiB; coarsen further (lower dense_lu_num_rows or raise max_levels) or "
                     "set dense_lu_max_rows so that AMG uses its smoother on this level");
  }
  lu_.assign(static_cast<size_t>(n_) * n_, T(0));
  for (Index i = 0; i < n_; ++i)
    for (Index k = A.row_ptr[i]; k < A.row_ptr[i + 1]; ++k)
      lu_[static_cast<size_t>(i) * n_ + A.col[k]] += A.val[k];
  piv_.resize(n_);
  pin_zero_pivots_ = this->context().config.get_int("x_singular_system", "default") != 0;
  factor();
}

template <class T>
void DenseLUSolver<T>::factor() {
  const Index n = n_;
  T* a = lu_.data();
  auto at = [&](Index i, Index j) -> T& { return a[static_cast<size_t>(i) * n + j]; };
  double amax = 0;
  for (const T& v : lu_) amax = std::max(amax, std::abs(static_cast<double>(v)));
  const double tiny = static_cast<double>(n) * std::numeric_limits<T>::epsilon() * amax;
  std::vector<T> panel;  // column-major copy of the current panel
  pinned_ = 0;

  for (Index k0 = 0; k0 < n; k0 += kPanel) {
    const Index kb = std::min(kPanel, n - k0);
    const Index k1 = k0 + kb;
    const Index m = n - k0;  // panel rows
    // 1. Factor the panel (rows k0.., columns k0..k1) column-major, where
    //    the pivot search, scaling and rank-1 updates run down contiguous
    //    columns.
    panel.resize(static_cast<size_t>(m) * kb);
    for (Index i = 0; i < m; ++i)
      for (Index j = 0; j < kb; ++j) panel[j * m + i] = at(k0 + i, k0 + j);
    for (Index j = 0; j < kb; ++j) {
      T* cj = panel.data() + j * m;
      Index p = j;
      T best = std::abs(cj[j]);
      for (Index i = j + 1; i < m; ++i) {
        if (std::abs(cj[i]) > best) {
          best = std::abs(cj[i]);
          p = i;
        }
      }
      if (!(static_cast<double>(best) > tiny) && pin_zero_pivots_ && std::isfinite(amax)) {
        // A declared null space: the remaining column is zero to working
        // precision. A pivot of the matrix's scale pins this unknown, so a
        // right-hand side in the range is solved exactly (the pinned
        // component is zero) and the factors stay finite.
        cj[j] = static_cast<T>(amax > 0 ? amax : 1.0);
        best = std::abs(cj[j]);
        p = j;
        ++pinned_;
      }
      if (!(static_cast<double>(best) > tiny)) {
        throw SetupError(
            "DENSE_LU_SOLVER: the " + std::to_string(n) + " x " + std::to_string(n) +
            " matrix is singular to working precision: pivot " + std::to_string(k0 + j) +
            " is " + fmt(static_cast<double>(best)) + " after partial pivoting (threshold n * "
            "eps * max|a_ij| = " + fmt(tiny) + "). A singular coarse matrix usually means the "
            "system has a null space (e.g. pure Neumann boundaries): declare it (the nullspace "
            "argument of jaxamg.solve), or use another coarse solver (\"coarse_solver\": "
            "\"NOSOLVER\" with coarsest_sweeps, or a smoother such as MULTICOLOR_GS)");
      }
      piv_[k0 + j] = k0 + p;
      if (p != j) {
        for (Index c = 0; c < kb; ++c) std::swap(panel[c * m + j], panel[c * m + p]);
      }
      const T inv = T(1) / cj[j];
      for (Index i = j + 1; i < m; ++i) cj[i] *= inv;
      for (Index c = j + 1; c < kb; ++c) {
        T* cc = panel.data() + c * m;
        const T u = cc[j];
        if (u == T(0)) continue;
        for (Index i = j + 1; i < m; ++i) cc[i] -= cj[i] * u;
      }
    }
    for (Index i = 0; i < m; ++i)
      for (Index j = 0; j < kb; ++j) at(k0 + i, k0 + j) = panel[j * m + i];
    // 2. The panel's row swaps on the columns left and right of it.
    for (Index j = k0; j < k1; ++j) {
      const Index p = piv_[j];
      if (p == j) continue;
      T* rj = a + static_cast<size_t>(j) * n;
      T* rp = a + static_cast<size_t>(p) * n;
      std::swap_ranges(rj, rj + k0, rp);
      std::swap_ranges(rj + k1, rj + n, rp + k1);
    }
    if (k1 == n) break;
    // 3. U12 = L11^-1 A12 (unit lower triangular), by column chunks.
    const Index ncols = n - k1;
#pragma omp parallel for schedule(static) if (static_cast<double>(ncols) * kb * kb > 1e6)
    for (Index c0 = 0; c0 < ncols; c0 += 256) {
      const Index c1 = std::min(ncols, c0 + 256);
      for (Index i = k0 + 1; i < k1; ++i) {
        T* ri = a + static_cast<size_t>(i) * n + k1;
        for (Index j = k0; j < i; ++j) {
          const T l = at(i, j);
          const T* rj = a + static_cast<size_t>(j) * n + k1;
          for (Index c = c0; c < c1; ++c) ri[c] -= l * rj[c];
        }
      }
    }
    // 4. A22 -= L21 U12.
    dense::gemm_minus<T>(n - k1, ncols, kb, a + static_cast<size_t>(k1) * n + k0, n,
                         a + static_cast<size_t>(k0) * n + k1, n,
                         a + static_cast<size_t>(k1) * n + k1, n);
  }
}

template <class T>
IterationResult DenseLUSolver<T>::solve_iteration(const T* b, T* x, bool /*x_is_zero*/) {
  // The exact solution does not depend on the initial guess: x = A^-1 b.
  if (gathered_) {
    gathered_->gather(b, gb_.data());
    if (gathered_->matrix()) substitute(gb_.data(), gx_.data());
    gathered_->scatter(gx_.data(), x);
  } else {
    substitute(b, x);
  }
  return IterationResult::kConverged;
}

template <class T>
void DenseLUSolver<T>::substitute(const T* b, T* x) const {
  const Index n = n_;
  const T* a = lu_.data();
  if (x != b) std::copy(b, b + n, x);
  for (Index i = 0; i < n; ++i) {
    if (piv_[i] != i) std::swap(x[i], x[piv_[i]]);
  }
  for (Index i = 1; i < n; ++i) {
    const T* ri = a + static_cast<size_t>(i) * n;
    T s = x[i];
    for (Index j = 0; j < i; ++j) s -= ri[j] * x[j];
    x[i] = s;
  }
  for (Index i = n - 1; i >= 0; --i) {
    const T* ri = a + static_cast<size_t>(i) * n;
    T s = x[i];
    for (Index j = i + 1; j < n; ++j) s -= ri[j] * x[j];
    x[i] = s / ri[i];
  }
}

template class DenseLUSolver<float>;
template class DenseLUSolver<double>;

}  // namespace jaxamg
