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
  // Throws for a missing or zero diagonal entry or, for blocks, for a
  // singular diagonal block (a block may have zeros on its diagonal).
  std::vector<T> wdinv;
  if (k > 1) {
    smoothers::inverse_block_diagonal(A, k, w_, "MULTICOLOR_GS smoother", binv_);
  } else {
    smoothers::inverse_diagonal(A, "MULTICOLOR_GS smoother", wdinv);
  }
  if (!reuse_structure || k != k_ || coloring_.color.size() != static_cast<size_t>(n)) {
    coloring_ = smoothers::greedy_coloring(A, k);
    split_ = smoothers::split_by_color(A, coloring_);
  }
  k_ = k;
  smoothers::gather_split_values(A, split_, val_);
  if (k > 1) {
    wdinv_.clear();
    return;
  }
  binv_.clear();
  wdinv_.resize(n);
  for (Index p = 0; p < n; ++p) wdinv_[p] = w_ * wdinv[coloring_.rows[p]];
}

template <class T>
void MulticolorGSSolver<T>::relax_node(Index p0, const T* b, T* x) const {
  const Index k = k_;
  const Index* srp = split_.row_ptr.data();
  const Index* sc = split_.col.data();
  const T* v = val_.data();
  const Index first = coloring_.rows[p0];  // the node's rows are first .. first + k - 1
  T r[kMaxStackBlock];
  std::vector<T> heap;
  T* rr = r;
  if (k > kMaxStackBlock) {
    heap.resize(static_cast<std::size_t>(k));
    rr = heap.data();
  }
  for (Index c = 0; c < k; ++c) {
    T s = b[first + c];
    for (Index q = srp[p0 + c]; q < srp[p0 + c + 1]; ++q) s -= v[q] * x[sc[q]];
    rr[c] = s;
  }
  smoothers::apply_block(binv_.data() + (first / k) * k * k, rr, x + first, k, true);
}

template <class T>
IterationResult MulticolorGSSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  const Index n = this->A_->nrows;
  const Index* srp = split_.row_ptr.data();
  const Index* sc = split_.col.data();
  const T* v = val_.data();
  const T* dw = wdinv_.data();
  const Index* cp = coloring_.color_ptr.data();
  const Index* rows = coloring_.rows.data();
  const int nc = coloring_.num_colors;
  const Index block = k_;
#pragma omp parallel if (n > smoothers::kParallelRows)
  {
    if (x_is_zero) {
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) x[i] = T(0);
    }
    // One worksharing loop per colour; its implicit barrier publishes the
    // colour's new values before the next colour reads them. The colour's
    // rows are contiguous in the split copy of A.
    auto relax = [&](int c) {
      if (block > 1) {
#pragma omp for schedule(static)
        for (Index p = cp[c]; p < cp[c + 1]; p += block) relax_node(p, b, x);
        return;
      }
#pragma omp for schedule(static)
      for (Index p = cp[c]; p < cp[c + 1]; ++p) {
        const Index i = rows[p];
        T r = b[i];
        for (Index k = srp[p]; k < srp[p + 1]; ++k) r -= v[k] * x[sc[k]];
        x[i] += dw[p] * r;
      }
    };
    for (int c = 0; c < nc; ++c) relax(c);
    if (symmetric_) {
      for (int c = nc - 1; c >= 0; --c) relax(c);
    }
  }
  return IterationResult::kContinue;
}

template class MulticolorGSSolver<float>;
template class MulticolorGSSolver<double>;

}  // namespace jaxamg
