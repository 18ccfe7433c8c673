#include "solvers/smoothers/multicolor_dilu.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/format.h"
#include "solvers/smoothers/common.h"

namespace jaxamg {

template <class T>
MulticolorDILUSolver<T>::MulticolorDILUSolver(SolverContext& ctx, const std::string& scope)
    : Solver<T>(ctx, scope, "MULTICOLOR_DILU") {
  w_ = static_cast<T>(smoothers::read_relaxation_factor(this->param_double("relaxation_factor"),
                                                        "MULTICOLOR_DILU", scope));
}

template <class T>
void MulticolorDILUSolver<T>::solver_setup(bool reuse_structure) {
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
  smoothers::require_diag_index(*this->A_, "MULTICOLOR_DILU smoother");
  require_nonzero_diagonal(*this->A_, "MULTICOLOR_DILU smoother");
  if (!reuse_structure || coloring_.color.size() != static_cast<size_t>(n)) {
    coloring_ = smoothers::greedy_coloring(A);
    split_ = smoothers::split_by_color(A, coloring_);
    transposed_.assign(A.nnz(), -1);
#pragma omp parallel for schedule(static) if (n > smoothers::kParallelRows)
    for (Index p = 0; p < n; ++p) {
      const Index i = coloring_.rows[p];
      for (Index k = split_.row_ptr[p]; k < split_.diag[p]; ++k) {
        const Index j = split_.col[k];
        const Index* b = A.col.data() + A.row_ptr[j];
        const Index* e = A.col.data() + A.row_ptr[j + 1];
        const Index* q = std::lower_bound(b, e, i);
        if (q != e && *q == i) transposed_[k] = split_.dst[q - A.col.data()];
      }
    }
  }
  smoothers::gather_split_values(A, split_, val_);
  einv_.resize(n);
  const Index* srp = split_.row_ptr.data();
  const Index* sc = split_.col.data();
  const Index* sd = split_.diag.data();
  const Index* pos = split_.pos.data();
  const Index* tr = transposed_.data();
  const T* v = val_.data();
  const Index* cp = coloring_.color_ptr.data();
  Index bad_row = -1;
  double bad_value = 0;
#pragma omp parallel if (n > smoothers::kParallelRows)
  for (int c = 0; c < coloring_.num_colors; ++c) {
#pragma omp for schedule(static)
    for (Index p = cp[c]; p < cp[c + 1]; ++p) {
      T e = v[sd[p]];
      for (Index k = srp[p]; k < sd[p]; ++k) {
        if (tr[k] >= 0) e -= v[k] * v[tr[k]] * einv_[pos[sc[k]]];
      }
      if (e == T(0) || !std::isfinite(static_cast<double>(e))) {
        const Index i = coloring_.rows[p];
#pragma omp critical(dilu_bad_pivot)
        if (bad_row < 0 || i < bad_row) {
          bad_row = i;
          bad_value = static_cast<double>(e);
        }
        e = T(1);  // keeps the loop finite; setup throws below
      }
      einv_[p] = T(1) / e;
    }
  }
  if (bad_row >= 0) {
    throw SetupError("MULTICOLOR_DILU smoother: the DILU diagonal of " +
                     row_name(*this->A_, bad_row) + " is " + format_number(bad_value) +
                     " (e_i = a_ii - sum_j a_ij a_ji / e_j vanished); the matrix is too far from "
                     "diagonally dominant for DILU: use JACOBI_L1 or MULTICOLOR_GS");
  }
  backend_ = std::make_unique<Backend>(static_cast<std::size_t>(n), 1, nullptr);
  sweep_ = std::make_unique<MulticolorDILUMethod<Backend>>(*backend_, factors(),
                                                           coloring_.color_ptr, w_);
}

template <class T>
backend::DiluFactors<T> MulticolorDILUSolver<T>::factors() const {
  return {coloring_.rows.data(), split_.row_ptr.data(), split_.col.data(),
          split_.diag.data(),    val_.data(),           einv_.data()};
}

template <class T>
IterationResult MulticolorDILUSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
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

template class MulticolorDILUSolver<float>;
template class MulticolorDILUSolver<double>;

}  // namespace jaxamg
