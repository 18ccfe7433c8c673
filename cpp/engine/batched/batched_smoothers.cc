#include "batched/batched_smoothers.h"

#include <cstddef>

#include "backend/lanes/multivector.h"
#include "backend/lanes/vector_backend.h"
#include "solvers/direct/dense_lu.h"
#include "solvers/smoothers/block_jacobi.h"
#include "solvers/smoothers/chebyshev.h"
#include "solvers/smoothers/chebyshev_method.h"
#include "solvers/smoothers/diagonal_sweep_method.h"
#include "solvers/smoothers/jacobi_l1.h"
#include "solvers/smoothers/multicolor_dilu.h"
#include "solvers/smoothers/multicolor_gs.h"
#include "solvers/smoothers/multicolor_ilu.h"
#include "solvers/smoothers/multicolor_methods.h"

namespace jaxamg::batched {

// The lane-interleaved kernels of the CPU lanes backend.
using namespace ::jaxamg::lanes;

namespace {

// Nodes of the smoothers written once over backends: the method on the lanes
// backend, sized for blocks of up to max_lanes lanes, following the width of
// each apply.
template <class T, template <class> class Method>
class MethodNode final : public Node<T> {
 public:
  template <class... Args>
  MethodNode(const CsrMatrix<T>& A, int max_iters, int max_lanes, const T* zero_start_scale,
             Args&&... args)
      : be_(static_cast<std::size_t>(A.nrows), max_lanes, 1), method_(be_, args...),
        zero_start_scale_(zero_start_scale) {
    this->max_iters_ = max_iters;
  }

  const T* zero_start_scale() const override { return zero_start_scale_; }

  void apply(const T* B, T* X, int k, bool x_is_zero, int iterations) override {
    be_.set_lanes(k);
    method_.apply(B, X, x_is_zero, iterations);
  }

 private:
  lanes::VectorBackend<T> be_;
  Method<lanes::VectorBackend<T>> method_;
  const T* zero_start_scale_;
};

template <class T>
using DiagonalSweepNode = MethodNode<T, DiagonalSweepMethod>;
template <class T>
using ChebyshevNode = MethodNode<T, ChebyshevMethod>;
template <class T>
using BlockJacobiNode = MethodNode<T, BlockJacobiSweepMethod>;
template <class T>
using MulticolorGSNode = MethodNode<T, MulticolorGSMethod>;
template <class T>
using MulticolorDILUNode = MethodNode<T, MulticolorDILUMethod>;
template <class T>
using MulticolorILUNode = MethodNode<T, MulticolorILUMethod>;

// DENSE_LU_SOLVER on k lanes: the one substitution of DenseLUSolver, lane by
// lane on a contiguous copy (a lane's numbers are then those of a one-lane
// solve by construction; the O(n k) gather and scatter are small next to
// the O(n^2 k) substitutions).
template <class T>
class DenseLUNode final : public Node<T> {
 public:
  explicit DenseLUNode(const DenseLUSolver<T>& s)
      : s_(s), lane_(static_cast<std::size_t>(s.size())) {
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
    for (int j = 0; j < k; ++j) {
      get_lane<T>(n, k, j, B, lane_.data());
      s_.substitute(lane_.data(), lane_.data());
      set_lane<T>(n, k, j, lane_.data(), X);
    }
  }

 private:
  const DenseLUSolver<T>& s_;
  Vector<T> lane_;
};

}  // namespace

template <class T>
std::unique_ptr<Node<T>> make_smoother_node(const Solver<T>& s, int max_lanes) {
  // One sweep of either from a zero guess is x = d .* b.
  const T* d = nullptr;
  if (auto* j = dynamic_cast<const JacobiL1Solver<T>*>(&s)) {
    d = j->scaled_inverse_diagonal().data();
  }
  const CsrMatrix<T>& A = s.matrix();
  // The block sweeps keep a node's residuals in registers.
  constexpr Index kMaxBlock = backend::kMaxDeviceBlock;
  if (auto* j = dynamic_cast<const BlockJacobiSolver<T>*>(&s)) {
    const Index k = j->block_dim();
    if (k == 1) {
      d = j->scaled_inverse_diagonal().data();
    } else if (k <= kMaxBlock && !A.dist) {
      return std::make_unique<BlockJacobiNode<T>>(
          A, s.max_iters(), max_lanes, nullptr, A,
          backend::BlockScale<T>{k, j->scaled_block_inverses().data()});
    } else {
      return nullptr;
    }
  }
  if (d) return std::make_unique<DiagonalSweepNode<T>>(A, s.max_iters(), max_lanes, d, A, d);
  if (auto* c = dynamic_cast<const ChebyshevSolver<T>*>(&s)) {
    if (!c->diagonal_scale()) return nullptr;
    return std::make_unique<ChebyshevNode<T>>(A, s.max_iters(), max_lanes, nullptr, A,
                                              c->diagonal_scale(), c->lambda_min(),
                                              c->lambda_max(), c->order());
  }
  // The multicolour smoothers on one process (a distributed matrix runs
  // one-lane solves).
  if (A.dist) return nullptr;
  if (auto* gs = dynamic_cast<const MulticolorGSSolver<T>*>(&s)) {
    if (gs->block_dim() > kMaxBlock) return nullptr;
    return std::make_unique<MulticolorGSNode<T>>(
        A, s.max_iters(), max_lanes, nullptr, A, gs->color_rows().data(), gs->color_ptr(),
        backend::BlockScale<T>{gs->block_dim(), gs->scale().data()}, gs->symmetric());
  }
  if (auto* dilu = dynamic_cast<const MulticolorDILUSolver<T>*>(&s)) {
    return std::make_unique<MulticolorDILUNode<T>>(A, s.max_iters(), max_lanes, nullptr,
                                                   dilu->factors(), dilu->coloring().color_ptr,
                                                   dilu->relaxation_factor());
  }
  if (auto* ilu = dynamic_cast<const MulticolorILUSolver<T>*>(&s)) {
    return std::make_unique<MulticolorILUNode<T>>(A, s.max_iters(), max_lanes, nullptr,
                                                  ilu->factors(), ilu->coloring().color_ptr,
                                                  ilu->relaxation_factor());
  }
  if (auto* lu = dynamic_cast<const DenseLUSolver<T>*>(&s)) {
    return std::make_unique<DenseLUNode<T>>(*lu);
  }
  return nullptr;
}

template std::unique_ptr<Node<float>> make_smoother_node(const Solver<float>&, int);
template std::unique_ptr<Node<double>> make_smoother_node(const Solver<double>&, int);

}  // namespace jaxamg::batched
