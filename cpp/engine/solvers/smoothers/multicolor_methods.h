// The multicolour smoothers' sweeps, written once over a backend (the CPU
// backend, the CUDA backend). Rows of one colour share no coupling, so the
// backend relaxes a colour's rows in parallel; the method orders the
// colours. The host smoothers (multicolor_gs.cc, multicolor_dilu.cc) and the
// device AMG cycle (device/amg_cycle.cu) run this same code.
//
// A backend provides, for the rows at positions [p0, p1) of a colouring:
//   gs_rows(A, rows, p0, p1, scale, b, x)    x_i += scale_i (b - A x)_i
//       (by node, for block_dim > 1);
//   lower_solve(F, p0, p1, b, x, x_is_zero, z) and
//   upper_solve(F, p0, p1, w, z, x, x_is_zero)
//       the forward and backward solves of the factors F
//       (backend::DiluFactors, IluFactors; the rows in backend/sweep_data.h).
// The CPU backend's gs_rows exchanges ghost values before each colour on a
// matrix distributed over processes (the colouring is valid across them).
#pragma once
#include <vector>

#include "backend/sweep_data.h"
#include "solvers/smoothers/sweep_apply.h"

namespace jaxamg {

// MULTICOLOR_GS: the colours in order (and then in reverse order with
// symmetric_GS), each row or node updated from the latest values.
template <class Backend>
class MulticolorGSMethod {
 public:
  using T = typename Backend::value_type;
  using Matrix = typename Backend::matrix_type;

  // A, rows (the rows grouped by colour, backend memory), color_ptr (the
  // colours' offsets into rows, host memory) and scale's array belong to
  // the caller and must outlive the method.
  MulticolorGSMethod(Backend& be, const Matrix& A, const Index* rows,
                     const std::vector<Index>& color_ptr, backend::BlockScale<T> scale,
                     bool symmetric)
      : be_(be), A_(A), rows_(rows), color_ptr_(color_ptr), scale_(scale),
        symmetric_(symmetric) {}

  void iteration(const T* b, T* x, bool x_is_zero) {
    if (x_is_zero) be_.fill_zero(x);
    const int nc = num_colors();
    for (int c = 0; c < nc; ++c) relax(c, b, x);
    if (symmetric_) {
      for (int c = nc - 1; c >= 0; --c) relax(c, b, x);
    }
  }

  void apply(const T* b, T* x, bool x_is_zero, int iterations) {
    apply_sweeps(be_, b, x, x_is_zero, iterations,
                 [this](const T* bb, T* xx, bool zero) { iteration(bb, xx, zero); });
  }

  int num_colors() const { return static_cast<int>(color_ptr_.size()) - 1; }
  bool symmetric() const { return symmetric_; }

 private:
  void relax(int c, const T* b, T* x) {
    be_.gs_rows(A_, rows_, color_ptr_[c], color_ptr_[c + 1], scale_, b, x);
  }

  Backend& be_;
  const Matrix& A_;
  const Index* rows_;
  const std::vector<Index>& color_ptr_;
  backend::BlockScale<T> scale_;
  bool symmetric_;
};

// MULTICOLOR_DILU and MULTICOLOR_ILU: x <- x + w M^-1 (b - A x) with M the
// colour-ordered factorisation F (DILU: (E + L) E^-1 (E + U); ILU(0): L U),
// the forward solve colour by colour (forming the residual in the same
// pass), then the backward solve in reverse colour order.
template <class Backend, class Factors>
class ColorLUSweepMethod {
 public:
  using T = typename Backend::value_type;
  using Vec = typename Backend::vector_type;

  // f's arrays and color_ptr (host memory) belong to the caller and must
  // outlive the method.
  ColorLUSweepMethod(Backend& be, Factors f, const std::vector<Index>& color_ptr, T w)
      : be_(be), f_(f), color_ptr_(color_ptr), w_(w), z_(be.make_vector()) {}

  // One sweep; x may alias b when x_is_zero (b is read by the forward solve
  // only, x written by the backward solve only).
  void iteration(const T* b, T* x, bool x_is_zero) {
    const int nc = static_cast<int>(color_ptr_.size()) - 1;
    T* z = z_.data();
    for (int c = 0; c < nc; ++c) {
      be_.lower_solve(f_, color_ptr_[c], color_ptr_[c + 1], b, x, x_is_zero, z);
    }
    for (int c = nc - 1; c >= 0; --c) {
      be_.upper_solve(f_, color_ptr_[c], color_ptr_[c + 1], w_, z, x, x_is_zero);
    }
  }

  void apply(const T* b, T* x, bool x_is_zero, int iterations) {
    apply_sweeps(be_, b, x, x_is_zero, iterations,
                 [this](const T* bb, T* xx, bool zero) { iteration(bb, xx, zero); });
  }

 private:
  Backend& be_;
  Factors f_;
  const std::vector<Index>& color_ptr_;
  T w_;
  Vec z_;  // the forward solve's result, then the correction (by row)
};

template <class Backend>
using MulticolorDILUMethod =
    ColorLUSweepMethod<Backend, backend::DiluFactors<typename Backend::value_type>>;
template <class Backend>
using MulticolorILUMethod =
    ColorLUSweepMethod<Backend, backend::IluFactors<typename Backend::value_type>>;

}  // namespace jaxamg
