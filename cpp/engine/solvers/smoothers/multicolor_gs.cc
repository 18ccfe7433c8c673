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
  auto check = [&] {
    if (k > 1) {
      smoothers::inverse_block_diagonal(A, k, w_, "MULTICOLOR_GS smoother", binv_);
    } else {
      smoothers::require_diag_index(A, "MULTICOLOR_GS smoother");
      require_nonzero_diagonal(A, "MULTICOLOR_GS smoother");
      binv_.clear();
    }
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
void MulticolorGSSolver<T>::relax_node(Index first, const T* b, T* x, const T* ghost) const {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  const Index k = k_;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  T r[kMaxStackBlock];
  std::vector<T> heap;
  T* rr = r;
  if (k > kMaxStackBlock) {
    heap.resize(static_cast<std::size_t>(k));
    rr = heap.data();
  }
  for (Index c = 0; c < k; ++c) {
    const Index i = first + c;
    T s = b[i];
    for (Index q = rp[i]; q < rp[i + 1]; ++q) {
      const Index j = ci[q];
      s -= v[q] * (j < n ? x[j] : ghost[j - n]);
    }
    rr[c] = s;
  }
  smoothers::apply_block(binv_.data() + (first / k) * k * k, rr, x + first, k, true);
}

template <class T>
void MulticolorGSSolver<T>::distributed_sweep(const T* b, T* x, bool x_is_zero) {
  const CsrMatrix<T>& A = *this->A_;
  const Index n = A.nrows;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const Index* dp = A.diag_pos.data();
  const T* v = A.val.data();
  const T w = w_;
  const Index* cp = coloring_.color_ptr.data();
  const Index* rows = coloring_.rows.data();
  if (x_is_zero) std::fill(x, x + n, T(0));
  auto relax = [&](int c) {
    // Every process exchanges for every colour (it is collective), also
    // where it owns no row of that colour.
    const T* g = A.dist->ghost_values(x);
    if (k_ > 1) {
#pragma omp parallel for schedule(static) if (cp[c + 1] - cp[c] > smoothers::kParallelRows)
      for (Index p = cp[c]; p < cp[c + 1]; p += k_) relax_node(rows[p], b, x, g);
      return;
    }
#pragma omp parallel for schedule(static) if (cp[c + 1] - cp[c] > smoothers::kParallelRows)
    for (Index p = cp[c]; p < cp[c + 1]; ++p) {
      const Index i = rows[p];
      T r = b[i];
      for (Index q = rp[i]; q < rp[i + 1]; ++q) {
        const Index j = ci[q];
        r -= v[q] * (j < n ? x[j] : g[j - n]);
      }
      x[i] += w * (T(1) / v[dp[i]]) * r;
    }
  };
  const int nc = coloring_.num_colors;
  for (int c = 0; c < nc; ++c) relax(c);
  if (symmetric_) {
    for (int c = nc - 1; c >= 0; --c) relax(c);
  }
}

template <class T>
IterationResult MulticolorGSSolver<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  const CsrMatrix<T>& A = *this->A_;
  if (A.dist) {
    distributed_sweep(b, x, x_is_zero);
    return IterationResult::kContinue;
  }
  const Index n = A.nrows;
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const Index* dp = A.diag_pos.data();
  const T* v = A.val.data();
  const T w = w_;
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
    // colour's new values before the next colour reads them. A colour's rows
    // are read in place, in ascending order; w / a_ii is formed per row
    // rather than stored, so the smoother keeps no per-entry or per-row
    // values of its own besides the colouring.
    auto relax = [&](int c) {
      if (block > 1) {
#pragma omp for schedule(static)
        for (Index p = cp[c]; p < cp[c + 1]; p += block) relax_node(rows[p], b, x, nullptr);
        return;
      }
      // A colour's rows are scattered over A: each is fetched a few rows
      // ahead of its use (15% of a 1-thread solve on 2D convection-diffusion).
      constexpr Index kAhead = 8;
      const Index pend = cp[c + 1];
#pragma omp for schedule(static)
      for (Index p = cp[c]; p < pend; ++p) {
        if (p + kAhead < pend) {
          const Index ahead = rp[rows[p + kAhead]];
          __builtin_prefetch(ci + ahead);
          __builtin_prefetch(v + ahead);
        }
        const Index i = rows[p];
        T r = b[i];
        for (Index q = rp[i]; q < rp[i + 1]; ++q) r -= v[q] * x[ci[q]];
        x[i] += w * (T(1) / v[dp[i]]) * r;
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
