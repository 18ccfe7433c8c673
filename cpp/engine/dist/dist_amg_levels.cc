// The distributed hierarchy's levels as the one cycle of amg/cycle.h sees
// them. Prolongation reads the coarse values of P's ghost columns (a halo
// exchange along P's plan); restriction by P^T sends the partial sums of
// those columns back to their owners (the reverse exchange); a
// block-diagonal P needs neither. The coarsest level is gathered to rank 0
// and solved there. The level backends' inner products are global sums, so
// every process takes the same branches.
#include <algorithm>

#include "amg/cycle.h"
#include "backend/cpu/blas.h"
#include "dist/dist_amg.h"

namespace jaxamg::dist {

template <class T>
class DistAmg<T>::CycleLevels : public LevelVectors<CycleLevels, T> {
 public:
  using value_type = T;

  explicit CycleLevels(DistAmg& amg) : amg_(amg), levels_(amg.levels_) {}

  int count() const { return static_cast<int>(levels_.size()); }
  cpu::VectorBackend<T>& backend(int l) { return *levels_[l].backend; }
  Level& work(int l) { return levels_[l]; }

  bool has_smoother(int l) const { return levels_[l].smoother != nullptr; }
  void smooth(int l, const T* b, T* x, bool x_is_zero, int sweeps) {
    Level& L = levels_[l];
    if (L.smoother && sweeps > 0) {
      L.smoother->apply(b, x, x_is_zero, sweeps);
    } else if (x_is_zero) {
      std::fill(x, x + L.A->nrows, T(0));
    }
  }
  void coarsest(const T* b, T* x, bool x_is_zero, int sweeps) {
    if (amg_.consolidated_) {
      amg_.coarse_solve(b, x);
    } else {
      smooth(count() - 1, b, x, x_is_zero, sweeps);
    }
  }
  bool zero_start_restrict(int /*l*/, const T* /*b*/, T* /*x*/) { return false; }

  // b_c = P^T (b - A x): owned coarse rows directly, ghost ones to their
  // owners.
  void restrict_residual(int l, const T* x, const T* b) {
    Level& L = levels_[l];
    const Index n = L.A->nrows;
    T* r = L.r.data();
    if (x) {
      L.op->residual(*L.A, x, b, r);
    } else {
      std::copy(b, b + n, r);
    }
    Level& C = levels_[l + 1];
    const CsrMatrix<T>& P = L.P;
    const Index nc = L.nc;
    std::fill(C.b.begin(), C.b.end(), T(0));
    std::fill(L.p_halo.begin(), L.p_halo.end(), T(0));
    for (Index i = 0; i < n; ++i) {
      for (Index k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
        const Index c = P.col[k];
        (c < nc ? C.b[c] : L.p_halo[c - nc]) += P.val[k] * r[i];
      }
    }
    if (exchanges(L)) {
      const auto& sidx = L.p_plan->send_index();
      L.p_back.resize(sidx.size());
      L.p_plan->reverse(L.p_halo.data(), L.p_back.data());
      for (std::size_t s = 0; s < sidx.size(); ++s) C.b[sidx[s]] += L.p_back[s];
    }
  }
  void prolongate(int l, T* e) { prolongate_into(l, T(1), e, false); }
  void prolongate_add(int l, backend::Coef scale, T* x) {
    prolongate_into(l, static_cast<T>(scale.value(backend(l).slots())), x, true);
  }
  void matvec(int l, const T* x, T* y) { levels_[l].op->spmv(*levels_[l].A, x, y); }

 private:
  // Neighbour-to-neighbour only: a process without neighbours in P's plan
  // takes no part.
  static bool exchanges(const Level& L) {
    return L.p_plan != nullptr &&
           (!L.p_plan->send_ranks().empty() || !L.p_plan->recv_ranks().empty());
  }
  // out_i = a (P x_c)_i (+ out_i when add), as cpu::spmv_axpby forms it.
  void prolongate_into(int l, T a, T* out, bool add) {
    Level& L = levels_[l];
    const T* xc = levels_[l + 1].x.data();
    if (exchanges(L)) L.p_plan->exchange(xc, L.p_halo.data());
    const CsrMatrix<T>& P = L.P;
    const Index nc = L.nc;
    for (Index i = 0; i < L.A->nrows; ++i) {
      T s = 0;
      for (Index k = P.row_ptr[i]; k < P.row_ptr[i + 1]; ++k) {
        const Index c = P.col[k];
        s += P.val[k] * (c < nc ? xc[c] : L.p_halo[c - nc]);
      }
      out[i] = add ? a * s + out[i] : a * s;
    }
  }

  DistAmg& amg_;
  std::vector<Level>& levels_;
};

template <class T>
void DistAmg<T>::coarse_solve(const T* b, T* x) const {
  gathered_->gather(b, cb_.data());
  if (coarse_) coarse_->solve(cb_.data(), cx_.data(), true);
  gathered_->scatter(cx_.data(), x);
}

template <class T>
HierarchyView<T> DistAmg<T>::view() const {
  HierarchyView<T> v;
  v.cycle = cycle_;
  if (levels_.empty()) return v;
  v.reducer = levels_.front().op;
  v.levels.resize(levels_.size());
  for (std::size_t l = 0; l < levels_.size(); ++l) {
    const Level& L = levels_[l];
    HierarchyLevelView<T>& V = v.levels[l];
    V.A = L.A.get();
    V.smoother = L.smoother.get();
    if (l + 1 < levels_.size()) {
      V.P = &L.P;
      V.p_halo = L.p_plan.get();
    }
  }
  if (consolidated_) v.host_coarse = [this](const T* b, T* x) { coarse_solve(b, x); };
  return v;
}

template <class T>
IterationResult DistAmg<T>::solve_iteration(const T* b, T* x, bool x_is_zero) {
  CycleLevels levels(*this);
  Cycle<CycleLevels>(levels, cycle_).run(b, x, x_is_zero);
  return IterationResult::kContinue;
}

// The class is instantiated in dist_amg.cc; these are its members defined here.
template void DistAmg<float>::coarse_solve(const float*, float*) const;
template HierarchyView<float> DistAmg<float>::view() const;
template IterationResult DistAmg<float>::solve_iteration(const float*, float*, bool);
template void DistAmg<double>::coarse_solve(const double*, double*) const;
template HierarchyView<double> DistAmg<double>::view() const;
template IterationResult DistAmg<double>::solve_iteration(const double*, double*, bool);

}  // namespace jaxamg::dist
