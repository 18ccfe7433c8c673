#include "solvers/smoothers/block_jacobi.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"
#include "solvers/smoothers/common.h"

namespace jaxamg {

namespace {

// Inverts the k x k row-major matrix `a` in place by Gauss-Jordan elimination
// with partial pivoting. Returns false if it is singular to working precision.
bool invert_small(std::vector<double>& a, Index k) {
  double scale = 0;
  for (double v : a) scale = std::max(scale, std::abs(v));
  if (!(scale > 0)) return false;
  const double tiny = scale * static_cast<double>(k) * std::numeric_limits<double>::epsilon();
  std::vector<double> inv(static_cast<std::size_t>(k * k), 0.0);
  for (Index i = 0; i < k; ++i) inv[i * k + i] = 1.0;
  for (Index c = 0; c < k; ++c) {
    Index piv = c;
    for (Index r = c + 1; r < k; ++r) {
      if (std::abs(a[r * k + c]) > std::abs(a[piv * k + c])) piv = r;
    }
    if (!(std::abs(a[piv * k + c]) > tiny)) return false;
    if (piv != c) {
      for (Index j = 0; j < k; ++j) {
        std::swap(a[c * k + j], a[piv * k + j]);
        std::swap(inv[c * k + j], inv[piv * k + j]);
      }
    }
    const double d = 1.0 / a[c * k + c];
    for (Index j = 0; j < k; ++j) {
      a[c * k + j] *= d;
      inv[c * k + j] *= d;
    }
    for (Index r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = a[r * k + c];
      if (f == 0.0) continue;
      for (Index j = 0; j < k; ++j) {
        a[r * k + j] -= f * a[c * k + j];
        inv[r * k + j] -= f * inv[c * k + j];
      }
    }
  }
  a.swap(inv);
  return true;
}

}  // namespace

template <class T>
BlockJacobiSolver<T>::BlockJacobiSolver(SolverContext& ctx, const std::string& scope)
    : Solver<T>(ctx, scope, "BLOCK_JACOBI") {
  w_ = static_cast<T>(smoothers::read_relaxation_factor(this->param_double("relaxation_factor"),
                                                        "BLOCK_JACOBI", scope));
}

template <class T>
void BlockJacobiSolver<T>::solver_setup(bool /*reuse_structure*/) {
  const CsrMatrix<T>& A = *this->A_;
  next_.resize(A.nrows);
  k_ = std::max<Index>(A.block_dim, 1);
  if (k_ == 1) {
    binv_.clear();
    smoothers::inverse_diagonal(A, "BLOCK_JACOBI smoother", dinv_);
    for (T& d : dinv_) d *= w_;
    return;
  }
  if (A.nrows % k_ != 0) {
    throw InvalidInput("BLOCK_JACOBI smoother: " + std::to_string(A.nrows) +
                       " rows are not divisible by block_dim = " + std::to_string(k_));
  }
  const Index k = k_;
  const Index nb = A.nrows / k;
  binv_.assign(static_cast<std::size_t>(nb * k * k), T(0));
  dinv_.assign(A.nrows, T(0));
  std::vector<double> blk(static_cast<std::size_t>(k * k));
  for (Index I = 0; I < nb; ++I) {
    std::fill(blk.begin(), blk.end(), 0.0);
    for (Index c = 0; c < k; ++c) {
      const Index r = I * k + c;
      const Index* first = A.col.data() + A.row_ptr[r];
      const Index* last = A.col.data() + A.row_ptr[r + 1];
      // Columns are sorted: the diagonal block is one contiguous run.
      for (const Index* p = std::lower_bound(first, last, I * k); p != last && *p < (I + 1) * k;
           ++p) {
        blk[c * k + (*p - I * k)] = static_cast<double>(A.val[p - A.col.data()]);
      }
    }
    if (!invert_small(blk, k)) {
      throw InvalidInput("BLOCK_JACOBI smoother: the " + std::to_string(k) + "x" +
                         std::to_string(k) + " diagonal block of node " + std::to_string(I) +
                         " (rows " + std::to_string(I * k) + ".." +
                         std::to_string(I * k + k - 1) +
                         ") is singular; block Jacobi needs invertible diagonal blocks");
    }
    T* out = binv_.data() + I * k * k;
    for (Index e = 0; e < k * k; ++e) out[e] = static_cast<T>(static_cast<double>(w_) * blk[e]);
    for (Index c = 0; c < k; ++c) dinv_[I * k + c] = out[c * k + c];
  }
}

template <class T>
void BlockJacobiSolver<T>::block_sweep(const T* b, T* x, bool x_is_zero) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  const Index k = k_;
  const Index nb = n / k;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  T* r = next_.data();
  const T* bi = binv_.data();
  // A distributed matrix forms the residual with its halo exchange first.
  const bool have_residual = !x_is_zero && A.dist;
  if (have_residual) A.dist->residual(A, x, b, r);
#pragma omp parallel if (n > smoothers::kParallelRows)
  {
    if (x_is_zero) {
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) r[i] = b[i];
    } else if (!have_residual) {
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        T s = b[i];
        for (Index p = rp[i]; p < rp[i + 1]; ++p) s -= v[p] * x[ci[p]];
        r[i] = s;
      }
    }
#pragma omp for schedule(static)
    for (Index I = 0; I < nb; ++I) {
      const T* m = bi + I * k * k;
      const T* rI = r + I * k;
      T* xI = x + I * k;
      for (Index c = 0; c < k; ++c) {
        T s = 0;
        for (Index j = 0; j < k; ++j) s += m[c * k + j] * rI[j];
        xI[c] = x_is_zero ? s : xI[c] + s;
      }
    }
  }
}

template <class T>
IterationResult BlockJacobiSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  if (k_ > 1) {
    block_sweep(b, x, x_is_zero);
  } else {
    smoothers::diagonal_sweep(*this->A_, dinv_.data(), b, x, next_.data(), x_is_zero);
  }
  return IterationResult::kContinue;
}

template class BlockJacobiSolver<float>;
template class BlockJacobiSolver<double>;

}  // namespace jaxamg
