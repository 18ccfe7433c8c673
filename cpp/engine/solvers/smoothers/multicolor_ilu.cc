#include "solvers/smoothers/multicolor_ilu.h"

#include <cmath>

#include "core/error.h"
#include "core/format.h"
#include "solvers/smoothers/common.h"

namespace jaxamg {

template <class T>
MulticolorILUSolver<T>::MulticolorILUSolver(SolverContext& ctx, const std::string& scope)
    : Solver<T>(ctx, scope, "MULTICOLOR_ILU") {
  w_ = static_cast<T>(smoothers::read_relaxation_factor(this->param_double("relaxation_factor"),
                                                        "MULTICOLOR_ILU", scope));
  const int level = this->param_int("ilu_sparsity_level");
  if (level != 0) {
    throw ConfigError("MULTICOLOR_ILU: ilu_sparsity_level = " + std::to_string(level) +
                      " in scope '" + scope + "' is not implemented; only ILU(0) is. Set "
                      "ilu_sparsity_level to 0 (the nearest) or use MULTICOLOR_DILU");
  }
}

template <class T>
void MulticolorILUSolver<T>::solver_setup(bool reuse_structure) {
  // Dropped first: a setup that throws must not leave a sweep of the
  // previous matrix behind.
  sweep_.reset();
  backend_.reset();
  // Distributed: the owned block alone is coloured and factored (block
  // Jacobi across processes; see the top of the header).
  if (this->A_->dist) {
    own_ = smoothers::owned_block(*this->A_);
    res_.resize(own_.nrows);
  } else {
    own_ = CsrMatrix<T>();
    res_.clear();
  }
  const CsrMatrix<T>& A = this->A_->dist ? own_ : *this->A_;
  const Index n = A.nrows;
  // Checked on the distributed matrix, whose errors name global rows.
  smoothers::require_diag_index(*this->A_, "MULTICOLOR_ILU smoother");
  require_nonzero_diagonal(*this->A_, "MULTICOLOR_ILU smoother");
  if (!reuse_structure || coloring_.color.size() != static_cast<size_t>(n)) {
    coloring_ = smoothers::greedy_coloring(A);
    split_ = smoothers::split_by_color(A, coloring_);
  }
  smoothers::gather_split_values(A, split_, val_);
  lu_ = val_;
  udinv_.resize(n);
  const Index* rp = A.row_ptr.data();
  const Index* ac = A.col.data();
  const Index* srp = split_.row_ptr.data();
  const Index* sc = split_.col.data();
  const Index* sd = split_.diag.data();
  const Index* dst = split_.dst.data();
  const Index* pos = split_.pos.data();
  const Index* cp = coloring_.color_ptr.data();
  const Index* rows = coloring_.rows.data();
  T* lu = lu_.data();
  Index bad_row = -1;
  double bad_value = 0;
  // Row-wise (IKJ) ILU(0). A row only reads finished rows of earlier
  // colours, so each colour is one parallel loop.
#pragma omp parallel if (n > smoothers::kParallelRows)
  for (int c = 0; c < coloring_.num_colors; ++c) {
#pragma omp for schedule(static)
    for (Index p = cp[c]; p < cp[c + 1]; ++p) {
      const Index i = rows[p];
      // L entries in elimination order: the split sorts them by colour.
      for (Index k = srp[p]; k < sd[p]; ++k) {
        const Index j = sc[k];
        const Index pj = pos[j];
        const T l = lu[k] * udinv_[pj];
        lu[k] = l;
        // Row i -= l * (U part of row j), restricted to row i's pattern: both
        // rows are walked in A's column order and matched by merging.
        Index a = rp[i];
        for (Index q = rp[j]; q < rp[j + 1]; ++q) {
          if (dst[q] <= sd[pj]) continue;  // L part or diagonal of row j
          const Index m = ac[q];
          while (a < rp[i + 1] && ac[a] < m) ++a;
          if (a == rp[i + 1]) break;
          if (ac[a] == m) lu[dst[a]] -= l * lu[dst[q]];
        }
      }
      const T u = lu[sd[p]];
      if (u == T(0) || !std::isfinite(static_cast<double>(u))) {
#pragma omp critical(ilu_bad_pivot)
        if (bad_row < 0 || i < bad_row) {
          bad_row = i;
          bad_value = static_cast<double>(u);
        }
        udinv_[p] = T(0);
      } else {
        udinv_[p] = T(1) / u;
      }
    }
  }
  if (bad_row >= 0) {
    throw SetupError("MULTICOLOR_ILU smoother: the ILU(0) pivot of " +
                     row_name(*this->A_, bad_row) + " is " + format_number(bad_value) +
                     "; the incomplete factorisation breaks down on this matrix: use "
                     "MULTICOLOR_GS or JACOBI_L1");
  }
  backend_ = std::make_unique<Backend>(static_cast<std::size_t>(n), 1, nullptr);
  sweep_ = std::make_unique<MulticolorILUMethod<Backend>>(*backend_, factors(),
                                                          coloring_.color_ptr, w_);
}

template <class T>
backend::IluFactors<T> MulticolorILUSolver<T>::factors() const {
  return {coloring_.rows.data(), split_.row_ptr.data(), split_.col.data(), split_.diag.data(),
          val_.data(),           lu_.data(),            udinv_.data()};
}

template <class T>
IterationResult MulticolorILUSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  if (!this->A_->dist || x_is_zero) {
    sweep_->iteration(b, x, x_is_zero);  // a zero x has zero ghosts: the local sweep is exact
    return IterationResult::kContinue;
  }
  // The residual with exchanged ghost values, then the local correction.
  T* r = res_.data();
  const Index n = this->A_->nrows;
  this->residual_of(x, b, r);
  sweep_->iteration(r, r, true);
  for (Index i = 0; i < n; ++i) x[i] += r[i];
  return IterationResult::kContinue;
}

template class MulticolorILUSolver<float>;
template class MulticolorILUSolver<double>;

}  // namespace jaxamg
