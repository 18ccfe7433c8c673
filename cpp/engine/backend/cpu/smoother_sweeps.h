// The CPU backend's block and colour-ordered sweeps (solvers/smoothers/
// multicolor_methods.h, diagonal_sweep_method.h). The rows at positions
// [p0, p1) of a colouring share no coupling, so each colour is one parallel
// loop (OpenMP above kParallelRows rows), whose end publishes the colour's
// values to the next.
#pragma once
#include <vector>

#include "backend/row_product.h"
#include "backend/sweep_data.h"
#include "core/csr_matrix.h"
#include "core/distribution.h"
#include "core/parallel.h"

namespace jaxamg::cpu {

namespace sweeps {

using jaxamg::kParallelRows;
// Node residuals up to this block size stay on the stack.
constexpr Index kMaxStackBlock = 8;

// The update of the node whose k rows start at row `first` (backend::gs_node,
// with scratch for its residuals). Ghost column c >= n reads ghost[c - n]
// (nullptr on one process).
template <class T>
void relax_node(const CsrMatrix<T>& A, Index first, const T* binv, const T* b, T* x,
                const T* ghost) {
  const Index k = A.block_dim > 1 ? A.block_dim : 1;
  T r[kMaxStackBlock];
  std::vector<T> heap;
  T* rr = r;
  if (k > kMaxStackBlock) {
    heap.resize(static_cast<std::size_t>(k));
    rr = heap.data();
  }
  backend::gs_node(A.row_ptr.data(), A.col.data(), A.val.data(), first, k, binv, b, x, A.nrows,
                   ghost, rr);
}

}  // namespace sweeps

// x_i += scale_i (b - A x)_i for the rows rows[p0 .. p1) (by node for
// block_dim > 1, whose nodes are listed as k consecutive rows). On a
// distributed matrix the ghost values of x are exchanged first: every
// process calls this for every colour, also where it owns none of its rows.
template <class T>
void gs_rows(const CsrMatrix<T>& A, const Index* rows, Index p0, Index p1,
             backend::BlockScale<T> scale, const T* b, T* x) {
  using sweeps::kParallelRows;
  const Index n = A.nrows;
  const T* ghost = A.dist ? A.dist->ghost_values(x) : nullptr;
  const T* s = scale.scale;
  const Index k = scale.block_dim;
  if (k > 1) {
#pragma omp parallel for schedule(static) if (p1 - p0 > kParallelRows)
    for (Index p = p0; p < p1; p += k) sweeps::relax_node(A, rows[p], s, b, x, ghost);
    return;
  }
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
  // A colour's rows are scattered over A: each is fetched a few rows ahead
  // of its use (15% of a 1-thread solve on 2D convection-diffusion).
  constexpr Index kAhead = 8;
#pragma omp parallel for schedule(static) if (p1 - p0 > kParallelRows)
  for (Index p = p0; p < p1; ++p) {
    if (p + kAhead < p1) {
      const Index ahead = rp[rows[p + kAhead]];
      __builtin_prefetch(ci + ahead);
      __builtin_prefetch(v + ahead);
    }
    const Index i = rows[p];
    x[i] += s[i] * backend::row_residual(rp, ci, v, i, b, x, n, ghost);
  }
}

// The lower and upper solves of a colour-ordered factorisation (Factors:
// backend::DiluFactors or IluFactors) for the rows at colour positions
// [p0, p1): backend::lower_row and upper_row.
template <class Factors, class T>
void lower_solve(const Factors& f, Index p0, Index p1, const T* b, const T* x, bool x_is_zero,
                 T* z) {
#pragma omp parallel for schedule(static) if (p1 - p0 > sweeps::kParallelRows)
  for (Index p = p0; p < p1; ++p) backend::lower_row(f, p, b, x, x_is_zero, z);
}

template <class Factors, class T>
void upper_solve(const Factors& f, Index p0, Index p1, T w, T* z, T* x, bool x_is_zero) {
#pragma omp parallel for schedule(static) if (p1 - p0 > sweeps::kParallelRows)
  for (Index p = p0; p < p1; ++p) backend::upper_row(f, p, w, z, x, x_is_zero);
}

// A block Jacobi sweep x <- x (+) scale (b - A x) by node (block_dim k > 1;
// x = scale b when x_is_zero), the residual formed in r (n entries) first,
// since neighbouring nodes read x. A distributed matrix exchanges its halo
// for the residual.
template <class T>
void block_jacobi_sweep(const CsrMatrix<T>& A, backend::BlockScale<T> scale, const T* b, T* x,
                        bool x_is_zero, T* r) {
  using sweeps::kParallelRows;
  const Index n = A.nrows;
  const Index k = scale.block_dim;
  const bool have_residual = !x_is_zero && A.dist;
  if (have_residual) A.dist->residual(A, x, b, r);
  const Index* rp = A.row_ptr.data();
  const Index* ci = A.col.data();
  const T* v = A.val.data();
#pragma omp parallel if (n > kParallelRows)
  {
    if (x_is_zero) {
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) r[i] = b[i];
    } else if (!have_residual) {
#pragma omp for schedule(static)
      for (Index i = 0; i < n; ++i) {
        r[i] = backend::csr_row_residual(b[i], rp, ci, v, x, i);
      }
    }
#pragma omp for schedule(static)
    for (Index I = 0; I < n / k; ++I) {
      backend::apply_block(scale.scale + I * k * k, r + I * k, x + I * k, k, !x_is_zero);
    }
  }
}

}  // namespace jaxamg::cpu
