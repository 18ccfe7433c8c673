// The cycles of the distributed AMG (dist_amg.h): the serial AMG's
// recursion (amg/amg_cycle.cc) on distributed levels. Prolongation reads the
// coarse values of P's ghost columns (a halo exchange along P's plan);
// restriction by P^T sends the partial sums of those columns back to their
// owners (the reverse exchange); a block-diagonal P needs neither. The
// coarsest level is gathered to rank 0 and solved there; the K-cycle's
// inner products are global sums, so every process takes the same branches.
#include <algorithm>

#include "amg/cycle_recursion.h"
#include "backend/cpu/blas.h"
#include "dist/dist_amg.h"

namespace jaxamg::dist {

template <class T>
void DistAmg<T>::coarse_solve(const T* b, T* x) {
  gathered_->gather(b, cb_.data());
  if (coarse_) coarse_->solve(cb_.data(), cx_.data(), true);
  gathered_->scatter(cx_.data(), x);
}

template <class T>
void DistAmg<T>::fixed(std::size_t l, CycleType type, const T* b, T* x, bool x_is_zero) {
  Level& L = levels_[l];
  const Index n = L.A->nrows;
  if (l + 1 == levels_.size()) {
    if (consolidated_) {
      coarse_solve(b, x);
    } else if (L.smoother) {
      L.smoother->apply(b, x, x_is_zero, coarsest_sweeps_);
    } else if (x_is_zero) {
      std::fill(x, x + n, T(0));
    }
    return;
  }
  bool zero = x_is_zero;
  if (L.smoother && presweeps_ > 0) {
    L.smoother->apply(b, x, zero, presweeps_);
    zero = false;
  }
  T* r = L.r.data();
  if (zero) {
    std::copy(b, b + n, r);
    std::fill(x, x + n, T(0));
  } else {
    L.op->residual(*L.A, x, b, r);
  }
  Level& C = levels_[l + 1];
  const CsrMatrix<T>& P = L.P;
  const Index nc = L.nc;
  // Restriction: owned coarse rows directly, ghost ones to their owners.
  std::fill(C.b.begin(), C.b.end(), T(0));
  std::fill(L.p_halo.begin(), L.p_halo.end(), T(0));
  for (Index i = 0; i < n; ++i) {
    for (Index k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
      const Index c = P.col[k];
      (c < nc ? C.b[c] : L.p_halo[c - nc]) += P.val[k] * r[i];
    }
  }
  // Neighbour-to-neighbour only: a process without neighbours in P's plan
  // takes no part.
  const bool halo = L.p_plan != nullptr &&
                    (!L.p_plan->send_ranks().empty() || !L.p_plan->recv_ranks().empty());
  if (halo) {
    const auto& sidx = L.p_plan->send_index();
    L.p_back.resize(sidx.size());
    L.p_plan->reverse(L.p_halo.data(), L.p_back.data());
    for (std::size_t s = 0; s < sidx.size(); ++s) C.b[sidx[s]] += L.p_back[s];
  }
  // As the serial cycle: the coarsest level is always solved once.
  dispatch(l + 1, l + 2 == levels_.size() ? CycleType::kV : type);
  if (halo) L.p_plan->exchange(C.x.data(), L.p_halo.data());
  for (Index i = 0; i < n; ++i) {
    T s = 0;
    for (Index k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
      const Index c = P.col[k];
      s += P.val[k] * (c < nc ? C.x[c] : L.p_halo[c - nc]);
    }
    x[i] += s;
  }
  if (L.smoother && postsweeps_ > 0) L.smoother->apply(b, x, false, postsweeps_);
}

template <class T>
void DistAmg<T>::dispatch(std::size_t m, CycleType type) {
  Level& L = levels_[m];
  dispatch_cycle(
      type, [&](CycleType kind, bool zero) { fixed(m, kind, L.b.data(), L.x.data(), zero); },
      [&] {
        // Global inner products: every process takes the same branches.
        kcycle_steps<T>(
            L.b.size(), cycle_iters_, type == CycleType::kCGF, L.b.data(), L.x.data(),
            L.kr.data(), L.kz.data(), L.kp.data(), L.ky.data(),
            [&](const T* r, T* z) { fixed(m, type, r, z, true); },
            [&](const T* p, T* y) { L.op->spmv(*L.A, p, y); },
            [&](const T* u, const T* v) { return dot(L, u, v); });
      });
}

template <class T>
double DistAmg<T>::dot(const Level& L, const T* a, const T* b) const {
  double s = cpu::dot(static_cast<std::size_t>(L.A->nrows), a, b);
  comm_.sum(&s, 1);
  return s;
}

template <class T>
IterationResult DistAmg<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  fixed(0, type_, b, x, x_is_zero);
  return IterationResult::kContinue;
}

// The class is instantiated in dist_amg.cc; these are its members defined here.
template void DistAmg<float>::coarse_solve(const float*, float*);
template void DistAmg<float>::fixed(std::size_t, CycleType, const float*, float*, bool);
template void DistAmg<float>::dispatch(std::size_t, CycleType);
template double DistAmg<float>::dot(const Level&, const float*, const float*) const;
template IterationResult DistAmg<float>::solve_iteration(const float*, float*, bool);
template void DistAmg<double>::coarse_solve(const double*, double*);
template void DistAmg<double>::fixed(std::size_t, CycleType, const double*, double*, bool);
template void DistAmg<double>::dispatch(std::size_t, CycleType);
template double DistAmg<double>::dot(const Level&, const double*, const double*) const;
template IterationResult DistAmg<double>::solve_iteration(const double*, double*, bool);

}  // namespace jaxamg::dist
