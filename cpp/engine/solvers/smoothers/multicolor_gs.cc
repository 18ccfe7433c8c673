#include "solvers/smoothers/multicolor_gs.h"

#include <algorithm>

#include "solvers/smoothers/block_diagonal.h"
#include "solvers/smoothers/common.h"

namespace jaxamg {

template <class T>
MulticolorGSSolver<T>::MulticolorGSSolver(SolverContext& ctx, const std::string& scope)
    : Solver<T>(ctx, scope, "MULTICOLOR_GS") {
  w_ = static_cast<T>(smoothers::read_relaxation_factor(this->param_double("relaxation_factor"),
                                                        "MULTICOLOR_GS", scope));
  symmetric_ = this->param_int("symmetric_GS") != 0;
}

template <class T>
void MulticolorGSSolver<T>::solver_setup(bool reuse_structure) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  const Index k = std::max<Index>(A.block_dim, 1);
  // Dropped first: a setup that throws must not leave a sweep of the
  // previous matrix behind.
  sweep_.reset();
  backend_.reset();
  // Throws for a missing or zero diagonal entry or, for blocks, for a
  // singular diagonal block (a block may have zeros on its diagonal).
  auto check = [&] {
    if (k > 1) {
      smoothers::inverse_block_diagonal(A, k, w_, "MULTICOLOR_GS smoother", scale_);
      return;
    }
    smoothers::require_diag_index(A, "MULTICOLOR_GS smoother");
    require_nonzero_diagonal(A, "MULTICOLOR_GS smoother");
    scale_.resize(n);
    const Index* dp = A.diag_pos.data();
    const T* v = A.val.data();
    // w * (1 / a_ii), the product the update forms.
#pragma omp parallel for schedule(static) if (n > smoothers::kParallelRows)
    for (Index i = 0; i < n; ++i) scale_[i] = w_ * (T(1) / v[dp[i]]);
  };
  bool recolor = !reuse_structure || k != k_ || coloring_.rows.size() != static_cast<size_t>(n);
  if (const Distribution<T>* dist = A.dist.get()) {
    // The colouring is collective: every process agrees on the checks and
    // on whether to colour before any of them starts.
    int kind = 0;
    const std::string error = capture_error(check, &kind);
    dist->agree(error, kind);
    recolor = dist->max(recolor ? 1.0 : 0.0) > 0;
  } else {
    check();
  }
  if (recolor) {
    coloring_ = smoothers::greedy_coloring(A, k);
    // The sweeps need only the rows grouped by colour; coloring() forms the
    // colour of each row again from them.
    std::vector<int>().swap(coloring_.color);
  }
  k_ = k;
  backend_ = std::make_unique<Backend>(static_cast<std::size_t>(n), 1, nullptr);
  sweep_ = std::make_unique<MulticolorGSMethod<Backend>>(
      *backend_, A, coloring_.rows.data(), coloring_.color_ptr,
      backend::BlockScale<T>{k, scale_.data()}, symmetric_);
}

template <class T>
smoothers::Coloring MulticolorGSSolver<T>::coloring() const {
  smoothers::Coloring c = coloring_;
  c.color.assign(c.rows.size(), -1);
  for (int q = 0; q < c.num_colors; ++q)
    for (Index p = c.color_ptr[q]; p < c.color_ptr[q + 1]; ++p) c.color[c.rows[p]] = q;
  return c;
}

template <class T>
IterationResult MulticolorGSSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  sweep_->iteration(b, x, x_is_zero);
  return IterationResult::kContinue;
}

template class MulticolorGSSolver<float>;
template class MulticolorGSSolver<double>;

}  // namespace jaxamg
