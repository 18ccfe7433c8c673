#include "batched/batched_smoothers.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "backend/lanes/multivector.h"
#include "backend/lanes/row_kernels.h"
#include "solvers/direct/dense_lu.h"
#include "solvers/smoothers/block_jacobi.h"
#include "solvers/smoothers/chebyshev.h"
#include "solvers/smoothers/jacobi_l1.h"

namespace jaxamg::batched {

// The lane-interleaved kernels of the CPU lanes backend.
using namespace ::jaxamg::lanes;

namespace {

// smoothers::diagonal_sweep on k lanes: x <- x + dw .* (b - A x), the new
// iterate formed in `next` and copied back (x is read by neighbours).
template <class T>
class DiagonalSweepNode final : public Node<T> {
 public:
  DiagonalSweepNode(const CsrMatrix<T>& A, const T* dw, int max_iters, int max_lanes)
      : A_(A), dw_(dw), next_(static_cast<std::size_t>(A.nrows) * max_lanes) {
    this->max_iters_ = max_iters;
  }

  const T* zero_start_scale() const override { return dw_; }

  void apply(const T* B, T* X, int k, bool x_is_zero, int iterations) override {
    const Index n = A_.nrows;
    if (iterations <= 0) {
      if (x_is_zero) fill<T>(n, k, T(0), X);
      return;
    }
    const T* dw = dw_;
    for (int it = 0; it < iterations; ++it) {
      if (x_is_zero && it == 0) {
        rows::for_each_row(n, k, [=](std::ptrdiff_t i) {
          const std::size_t o = static_cast<std::size_t>(i) * k;
          for (int j = 0; j < k; ++j) X[o + j] = dw[i] * B[o + j];
        });
        continue;
      }
      T* tmp = next_.data();
      rows::residual_rows(A_, X, B, k, [=](Index i, int j0, auto W, const T* r) {
        const std::size_t o = static_cast<std::size_t>(i) * k + j0;
        for (int j = 0; j < W.value; ++j) tmp[o + j] = X[o + j] + dw[i] * r[j];
      });
      copy<T>(n, k, tmp, X);
    }
  }

 private:
  const CsrMatrix<T>& A_;
  const T* dw_;
  Vector<T> next_;
};

// ChebyshevSolver's diagonal recurrence on k lanes (step_diagonal): the
// coefficients depend only on the step, so every lane shares them.
template <class T>
class ChebyshevNode final : public Node<T> {
 public:
  ChebyshevNode(const ChebyshevSolver<T>& s, int max_lanes)
      : s_(s), A_(s.matrix()), scale_(s.diagonal_scale()),
        p_(static_cast<std::size_t>(A_.nrows) * max_lanes) {
    this->max_iters_ = s.max_iters();
  }

  void apply(const T* B, T* X, int k, bool x_is_zero, int iterations) override {
    if (iterations <= 0) {
      if (x_is_zero) fill<T>(A_.nrows, k, T(0), X);
      return;
    }
    int step = 0;
    double alpha_prev = 0;
    for (int it = 0; it < iterations; ++it) {
      for (int o = 0; o < s_.order(); ++o) {
        double alpha, beta;
        s_.step_coefficients(step, alpha_prev, &alpha, &beta);
        one_step(step, B, X, k, x_is_zero && it == 0 && o == 0, static_cast<T>(alpha),
                 static_cast<T>(beta));
        alpha_prev = alpha;
        ++step;
      }
    }
  }

 private:
  // p_k = S (b - A x_k) + beta_k p_{k-1}, then x_{k+1} = x_k + alpha_k p_k.
  void one_step(int step, const T* B, T* X, int k, bool x_is_zero, T alpha, T beta) {
    const Index n = A_.nrows;
    const T* s = scale_;
    T* p = p_.data();
    if (step == 0 && x_is_zero) {
      rows::for_each_row(n, k, [=](std::ptrdiff_t i) {
        const std::size_t o = static_cast<std::size_t>(i) * k;
        for (int j = 0; j < k; ++j) {
          const T pi = s[i] * B[o + j];
          p[o + j] = pi;
          X[o + j] = alpha * pi;
        }
      });
      return;
    }
    // One pass forms the residual and the new direction, a second one
    // updates x (read by neighbours in the first).
    const bool first = step == 0;
    rows::residual_rows(A_, X, B, k, [=](Index i, int j0, auto W, const T* r) {
      T* pi = p + static_cast<std::size_t>(i) * k + j0;
      for (int j = 0; j < W.value; ++j) pi[j] = first ? s[i] * r[j] : s[i] * r[j] + beta * pi[j];
    });
    rows::for_each_row(n, k, [=](std::ptrdiff_t i) {
      const std::size_t o = static_cast<std::size_t>(i) * k;
      for (int j = 0; j < k; ++j) X[o + j] += alpha * p[o + j];
    });
  }

  const ChebyshevSolver<T>& s_;
  const CsrMatrix<T>& A_;
  const T* scale_;
  Vector<T> p_;
};

// DenseLUSolver::solve_iteration on k lanes: row swaps, then the unit lower
// and the upper triangular solves, each lane in the single-lane order.
template <class T>
class DenseLUNode final : public Node<T> {
 public:
  DenseLUNode(const DenseLUSolver<T>& s, int max_lanes)
      : s_(s), acc_(static_cast<std::size_t>(max_lanes)) {
    this->max_iters_ = s.max_iters();
  }

  void apply(const T* B, T* X, int k, bool x_is_zero, int iterations) override {
    const Index n = s_.size();
    if (iterations <= 0) {
      if (x_is_zero) fill<T>(n, k, T(0), X);
      return;
    }
    // The solve is exact (kConverged): further iterations stop, as in
    // Solver::apply.
    const T* a = s_.factors().data();
    const Index* piv = s_.pivots().data();
    const std::size_t nk = static_cast<std::size_t>(n) * k;
    if (X != B) std::copy(B, B + nk, X);
    for (Index i = 0; i < n; ++i) {
      if (piv[i] == i) continue;
      T* xi = X + static_cast<std::size_t>(i) * k;
      T* xp = X + static_cast<std::size_t>(piv[i]) * k;
      for (int j = 0; j < k; ++j) std::swap(xi[j], xp[j]);
    }
    T* s = acc_.data();
    for (Index i = 1; i < n; ++i) {
      const T* ri = a + static_cast<std::size_t>(i) * n;
      T* xi = X + static_cast<std::size_t>(i) * k;
      for (int j = 0; j < k; ++j) s[j] = xi[j];
      for (Index c = 0; c < i; ++c) {
        const T l = ri[c];
        const T* xc = X + static_cast<std::size_t>(c) * k;
        for (int j = 0; j < k; ++j) s[j] -= l * xc[j];
      }
      for (int j = 0; j < k; ++j) xi[j] = s[j];
    }
    for (Index i = n - 1; i >= 0; --i) {
      const T* ri = a + static_cast<std::size_t>(i) * n;
      T* xi = X + static_cast<std::size_t>(i) * k;
      for (int j = 0; j < k; ++j) s[j] = xi[j];
      for (Index c = i + 1; c < n; ++c) {
        const T u = ri[c];
        const T* xc = X + static_cast<std::size_t>(c) * k;
        for (int j = 0; j < k; ++j) s[j] -= u * xc[j];
      }
      for (int j = 0; j < k; ++j) xi[j] = s[j] / ri[i];
    }
  }

 private:
  const DenseLUSolver<T>& s_;
  Vector<T> acc_;
};

}  // namespace

template <class T>
std::unique_ptr<Node<T>> make_smoother_node(const Solver<T>& s, int max_lanes) {
  if (auto* j = dynamic_cast<const JacobiL1Solver<T>*>(&s)) {
    return std::make_unique<DiagonalSweepNode<T>>(s.matrix(), j->scaled_inverse_diagonal().data(),
                                                  s.max_iters(), max_lanes);
  }
  if (auto* j = dynamic_cast<const BlockJacobiSolver<T>*>(&s)) {
    if (j->block_dim() != 1) return nullptr;
    return std::make_unique<DiagonalSweepNode<T>>(s.matrix(), j->scaled_inverse_diagonal().data(),
                                                  s.max_iters(), max_lanes);
  }
  if (auto* c = dynamic_cast<const ChebyshevSolver<T>*>(&s)) {
    if (!c->diagonal_scale()) return nullptr;
    return std::make_unique<ChebyshevNode<T>>(*c, max_lanes);
  }
  if (auto* d = dynamic_cast<const DenseLUSolver<T>*>(&s)) {
    return std::make_unique<DenseLUNode<T>>(*d, max_lanes);
  }
  return nullptr;
}

template std::unique_ptr<Node<float>> make_smoother_node(const Solver<float>&, int);
template std::unique_ptr<Node<double>> make_smoother_node(const Solver<double>&, int);

}  // namespace jaxamg::batched
