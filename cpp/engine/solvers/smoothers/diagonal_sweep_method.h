// The Jacobi-type sweep with a diagonal D, written once over a backend (the
// CPU backend, the CPU lanes backend, the CUDA backend):
//   x <- x + D (b - A x),
// D = w / d_i with the damping folded in at setup (JACOBI_L1: d the l1 row
// norm; BLOCK_JACOBI with block_dim 1: d the diagonal). The host smoothers
// (jacobi_l1.cc, block_jacobi.cc) and the batched nodes of several
// right-hand sides (batched/batched_smoothers.cc) run this same code, so a
// lane of a batch is a one-vector sweep step for step.
//
// The backend provides the fused row kernels: diagonal_scale (x = D b, the
// sweep from a zero guess, which needs no product) and diagonal_sweep (the
// residual row and the update in one pass over A, the new iterate formed
// beside the old one because neighbouring rows still read it). The sweeps
// of one apply alternate between x and a scratch vector (alternate_steps).
#pragma once
#include "backend/sweep_data.h"
#include "solvers/smoothers/sweep_apply.h"

namespace jaxamg {

template <class Backend>
class DiagonalSweepMethod {
 public:
  using T = typename Backend::value_type;
  using Vec = typename Backend::vector_type;
  using Matrix = typename Backend::matrix_type;

  // A and d (D's entries) belong to the caller and must outlive the method.
  DiagonalSweepMethod(Backend& be, const Matrix& A, const T* d) : be_(be), A_(A), d_(d) {}

  // One sweep (Solver::solve_iteration).
  void iteration(const T* b, T* x, bool x_is_zero) { apply(b, x, x_is_zero, 1); }

  // `iterations` sweeps, as Solver::apply runs them (x = 0 when none runs
  // from a zero guess).
  void apply(const T* b, T* x, bool x_is_zero, int iterations) {
    // Sized by the first apply that needs it: a smoother serving only as
    // CHEBYSHEV's diagonal never sweeps.
    if (iterations > 1 || (iterations == 1 && !x_is_zero)) {
      if (next_.empty()) next_ = be_.make_vector();
    }
    alternate_steps(be_, x, next_.data(), x_is_zero, iterations,
                    [&](int k, const T* cur, T* out) {
                      if (k == 0 && x_is_zero) {
                        be_.diagonal_scale(d_, b, out);
                      } else {
                        be_.diagonal_sweep(A_, d_, b, cur, out);
                      }
                    });
  }

 private:
  Backend& be_;
  const Matrix& A_;
  const T* d_;
  Vec next_;
};

// BLOCK_JACOBI with block_dim k > 1, the same sweep by node:
//   x_I <- x_I + w D_I^-1 (b - A x)_I,
// with the k x k blocks w D_I^-1 inverted at setup. The backend provides
// block_jacobi_sweep (the residual into a scratch vector, then the node
// updates; from a zero guess x_I = w D_I^-1 b_I).
template <class Backend>
class BlockJacobiSweepMethod {
 public:
  using T = typename Backend::value_type;
  using Vec = typename Backend::vector_type;
  using Matrix = typename Backend::matrix_type;

  // A and the blocks of `scale` belong to the caller and must outlive the method.
  BlockJacobiSweepMethod(Backend& be, const Matrix& A, backend::BlockScale<T> scale)
      : be_(be), A_(A), scale_(scale), r_(be.make_vector()) {}

  void iteration(const T* b, T* x, bool x_is_zero) {
    be_.block_jacobi_sweep(A_, scale_, b, x, x_is_zero, r_.data());
  }

  void apply(const T* b, T* x, bool x_is_zero, int iterations) {
    apply_sweeps(be_, b, x, x_is_zero, iterations,
                 [this](const T* bb, T* xx, bool zero) { iteration(bb, xx, zero); });
  }

 private:
  Backend& be_;
  const Matrix& A_;
  backend::BlockScale<T> scale_;
  Vec r_;  // the residual
};

}  // namespace jaxamg
