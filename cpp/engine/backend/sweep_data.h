// What every backend's block and colour-ordered sweeps read (the smoothers'
// methods of solvers/smoothers/multicolor_methods.h and
// diagonal_sweep_method.h): plain pointers into the backend's memory --
// host memory for the CPU backend, device memory for CUDA -- so one method
// drives every backend.
#pragma once

#include "core/types.h"

namespace jaxamg::backend {

// The largest node (block_dim) whose residuals a device block sweep keeps in
// registers.
constexpr Index kMaxDeviceBlock = 8;

// The update of a (block) Jacobi or Gauss-Seidel step: block_dim 1 scales a
// row's residual by scale[i] = w / a_ii; block_dim k > 1 multiplies a
// node's k residuals by the row-major k x k block scale[I*k*k ..] = w D_I^-1.
template <class T>
struct BlockScale {
  Index block_dim = 1;
  const T* scale = nullptr;
};

// A matrix regrouped by colour for the DILU sweeps (smoothers::ColorSplit):
// position p holds row rows[p]; its entries row_ptr[p] .. row_ptr[p + 1]
// are ordered [earlier colours | diagonal at diag[p] | later colours], with
// columns col and values val; einv[p] = 1 / e_p, the DILU diagonal.
template <class T>
struct DiluFactors {
  const Index* rows = nullptr;
  const Index* row_ptr = nullptr;
  const Index* col = nullptr;
  const Index* diag = nullptr;
  const T* val = nullptr;
  const T* einv = nullptr;
};

// The ILU(0) factors of a matrix regrouped by colour, in the layout of
// DiluFactors: val holds A's values (for the residual), lu the factors (L
// part with its unit diagonal implied, U's diagonal, U part), udinv[p] =
// 1 / u_pp.
template <class T>
struct IluFactors {
  const Index* rows = nullptr;
  const Index* row_ptr = nullptr;
  const Index* col = nullptr;
  const Index* diag = nullptr;
  const T* val = nullptr;
  const T* lu = nullptr;
  const T* udinv = nullptr;
};

// x[0..k) (+)= m r, with m a row-major k x k block: `accumulate` adds to x,
// otherwise x is overwritten (the block smoothers' node update). x's
// entries are read at `stride` (see the row kernels below).
template <class T>
JAXAMG_HOST_DEVICE inline void apply_block(const T* m, const T* r, T* x, Index k,
                                           bool accumulate, Index stride = 1) {
  for (Index c = 0; c < k; ++c) {
    T s = 0;
    for (Index j = 0; j < k; ++j) s += m[c * k + j] * r[j];
    x[c * stride] = accumulate ? x[c * stride] + s : s;
  }
}

// The row kernels of the colour-ordered sweeps, shared by the CPU loops
// (cpu/smoother_sweeps.h), the CUDA kernels (cuda/smoother_sweeps.cuh) and
// the lanes backend. A vector's entry i is read at i * stride: 1 for one
// vector, k for lane j of k lane-interleaved vectors (the pointers then
// offset by j), so every lane does a one-vector sweep's arithmetic.

// (b - A x)_i from CSR arrays; column c >= n reads ghost[c - n] (a
// distributed matrix's exchanged values; ghost is nullptr on one process).
template <class T>
JAXAMG_HOST_DEVICE inline T row_residual(const Index* rp, const Index* ci, const T* v, Index i,
                                         const T* b, const T* x, Index n, const T* ghost,
                                         Index stride = 1) {
  T r = b[i * stride];
  for (Index q = rp[i]; q < rp[i + 1]; ++q) {
    const Index j = ci[q];
    r -= v[q] * (ghost && j >= n ? ghost[j - n] : x[j * stride]);
  }
  return r;
}

// The Gauss-Seidel update of the node of k rows from row `first`:
// x_I += binv_I (b - A x)_I, with binv_I the row-major k x k block of node
// I = first / k. The k residuals are formed first, into the caller's
// scratch r (k entries), so the update reads the node's old values.
template <class T>
JAXAMG_HOST_DEVICE inline void gs_node(const Index* rp, const Index* ci, const T* v, Index first,
                                       Index k, const T* binv, const T* b, T* x, Index n,
                                       const T* ghost, T* r, Index stride = 1) {
  for (Index c = 0; c < k; ++c) r[c] = row_residual(rp, ci, v, first + c, b, x, n, ghost, stride);
  apply_block(binv + (first / k) * k * k, r, x + first * stride, k, true, stride);
}

// The lower (forward) and upper (backward) solves at colour position p of
// the colour-ordered incomplete factorisations, with x <- x + w M^-1 (b - A x)
// formed across the two: the residual inside the forward solve, the update
// inside the backward one.

// DILU forward:
//   z_i = e_i^-1 ((b - A x)_i - sum_{j earlier} a_ij z_j)
// (b - A x read as b when x_is_zero).
template <class T>
JAXAMG_HOST_DEVICE inline void lower_row(const DiluFactors<T>& f, Index p, const T* b, const T* x,
                                         bool x_is_zero, T* z, Index stride = 1) {
  const Index i = f.rows[p];
  T r = b[i * stride], t = 0;
  if (x_is_zero) {
    for (Index k = f.row_ptr[p]; k < f.diag[p]; ++k) t += f.val[k] * z[f.col[k] * stride];
  } else {
    for (Index k = f.row_ptr[p]; k < f.diag[p]; ++k) {
      r -= f.val[k] * x[f.col[k] * stride];
      t += f.val[k] * z[f.col[k] * stride];
    }
    for (Index k = f.diag[p]; k < f.row_ptr[p + 1]; ++k) r -= f.val[k] * x[f.col[k] * stride];
  }
  z[i * stride] = (r - t) * f.einv[p];
}

// DILU backward:
//   z_i -= e_i^-1 sum_{j later} a_ij z_j,  then x_i = w z_i (x_is_zero) or x_i += w z_i.
template <class T>
JAXAMG_HOST_DEVICE inline void upper_row(const DiluFactors<T>& f, Index p, T w, T* z, T* x,
                                         bool x_is_zero, Index stride = 1) {
  const Index i = f.rows[p];
  T u = 0;
  for (Index k = f.diag[p] + 1; k < f.row_ptr[p + 1]; ++k) u += f.val[k] * z[f.col[k] * stride];
  const T d = z[i * stride] - f.einv[p] * u;
  z[i * stride] = d;
  x[i * stride] = x_is_zero ? w * d : x[i * stride] + w * d;
}

// ILU forward: y_i = (b - A x)_i - sum_{j earlier} l_ij y_j.
template <class T>
JAXAMG_HOST_DEVICE inline void lower_row(const IluFactors<T>& f, Index p, const T* b, const T* x,
                                         bool x_is_zero, T* y, Index stride = 1) {
  const Index i = f.rows[p];
  T r = b[i * stride];
  if (!x_is_zero) {
    for (Index k = f.row_ptr[p]; k < f.row_ptr[p + 1]; ++k) {
      r -= f.val[k] * x[f.col[k] * stride];
    }
  }
  for (Index k = f.row_ptr[p]; k < f.diag[p]; ++k) r -= f.lu[k] * y[f.col[k] * stride];
  y[i * stride] = r;
}

// ILU backward: d_i = (y_i - sum_{j later} u_ij d_j) / u_ii, then
// x_i = w d_i (x_is_zero) or x_i += w d_i.
template <class T>
JAXAMG_HOST_DEVICE inline void upper_row(const IluFactors<T>& f, Index p, T w, T* y, T* x,
                                         bool x_is_zero, Index stride = 1) {
  const Index i = f.rows[p];
  T s = y[i * stride];
  for (Index k = f.diag[p] + 1; k < f.row_ptr[p + 1]; ++k) s -= f.lu[k] * y[f.col[k] * stride];
  const T d = s * f.udinv[p];
  y[i * stride] = d;
  x[i * stride] = x_is_zero ? w * d : x[i * stride] + w * d;
}

}  // namespace jaxamg::backend
