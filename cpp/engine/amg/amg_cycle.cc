// The serial hierarchy's cycle: the one cycle of amg/cycle.h on the levels
// of an AmgSolver, in host memory with the CPU kernels. Every vector is
// sized on its level before the first cycle runs (AmgSolver::allocate_work),
// so a cycle never allocates.
#include <algorithm>

#include "amg/amg_level.h"
#include "amg/cycle.h"
#include "backend/cpu/blas.h"

namespace jaxamg {

template <class T>
std::size_t AmgLevel<T>::bytes() const {
  std::size_t total = A ? A->storage_bytes() : 0;
  total += ops.P.storage_bytes() + ops.R.storage_bytes();
  for (const Vector<T>* v : {&b, &x, &r, &restrict_work, &e, &ae, &kr, &kz, &kp, &ky}) {
    total += v->size() * sizeof(T);
  }
  return total;
}

namespace {

// AmgLevel<T>s as amg/cycle.h sees them.
template <class T>
class HostLevels : public LevelVectors<HostLevels<T>, T> {
 public:
  using value_type = T;

  HostLevels(std::vector<AmgLevel<T>>& levels, Solver<T>* coarse)
      : levels_(levels), coarse_(coarse) {}

  int count() const { return static_cast<int>(levels_.size()); }
  cpu::VectorBackend<T>& backend(int l) { return *levels_[l].backend; }
  AmgLevel<T>& work(int l) { return levels_[l]; }

  bool has_smoother(int l) const { return levels_[l].smoother != nullptr; }
  void smooth(int l, const T* b, T* x, bool x_is_zero, int sweeps) {
    AmgLevel<T>& L = levels_[l];
    if (L.smoother && sweeps > 0) {
      L.smoother->apply(b, x, x_is_zero, sweeps);
    } else if (x_is_zero) {
      cpu::fill<T>(L.rows(), T(0), x);
    }
  }
  void coarsest(const T* b, T* x, bool x_is_zero, int sweeps) {
    if (coarse_) {
      coarse_->solve(b, x, x_is_zero);
    } else {
      smooth(count() - 1, b, x, x_is_zero, sweeps);
    }
  }
  bool zero_start_restrict(int /*l*/, const T* /*b*/, T* /*x*/) { return false; }
  void restrict_residual(int l, const T* x, const T* b) {
    AmgLevel<T>& L = levels_[l];
    T* bc = levels_[l + 1].b.data();
    if (L.r_is_pt) {
      // b_c = P^T (b - A x) in one pass; r is kept only for error scaling.
      cpu::restrict_residual(*L.A, x, b, L.ops.P, bc, L.r.empty() ? nullptr : L.r.data(),
                             L.restrict_work.data(), L.restrict_work.size());
      return;
    }
    if (x) {
      cpu::residual(*L.A, x, b, L.r.data());
    } else {
      cpu::copy(L.rows(), b, L.r.data());
    }
    cpu::spmv(L.ops.R, L.r.data(), bc);
  }
  void prolongate(int l, T* e) { cpu::spmv(levels_[l].ops.P, this->x(l + 1), e); }
  void prolongate_add(int l, backend::Coef scale, T* x) {
    const T a = static_cast<T>(scale.value(backend(l).slots()));
    cpu::spmv_axpby(levels_[l].ops.P, a, levels_[l + 1].x.data(), T(1), x);
  }
  void matvec(int l, const T* x, T* y) { cpu::spmv(*levels_[l].A, x, y); }

 private:
  std::vector<AmgLevel<T>>& levels_;
  Solver<T>* coarse_;
};

}  // namespace

template <class T>
void run_cycle(std::vector<AmgLevel<T>>& levels, Solver<T>* coarse, const CycleParams& params,
               const T* b, T* x, bool x_is_zero) {
  HostLevels<T> host(levels, coarse);
  Cycle<HostLevels<T>>(host, params).run(b, x, x_is_zero);
}

template struct AmgLevel<float>;
template struct AmgLevel<double>;
template void run_cycle(std::vector<AmgLevel<float>>&, Solver<float>*, const CycleParams&,
                        const float*, float*, bool);
template void run_cycle(std::vector<AmgLevel<double>>&, Solver<double>*, const CycleParams&,
                        const double*, double*, bool);

}  // namespace jaxamg
