// The multigrid cycles, following AmgX's FixedCycle and its dispatchers:
//
//   fixed cycle on level l: pre-smooth, r = b - A x, b_c = R r, solve the
//   coarse level with the dispatcher, x += P x_c, post-smooth;
//   dispatchers on level l+1: V (one fixed cycle), W (two W cycles), F (an F
//   then a V cycle), CG / CGF (cycle_iters steps of CG / flexible CG on A_l+1,
//   preconditioned by a fixed cycle of the same kind: the K-cycle).
//
// The level just above the coarsest always dispatches V, and the coarsest
// level runs the coarse solver once or coarsest_sweeps smoother sweeps.
// Every vector is sized on its level before the first cycle runs
// (AmgSolver::allocate_work), so a cycle never allocates.
#include <algorithm>
#include <cmath>

#include "amg/amg_level.h"
#include "amg/cycle_recursion.h"
#include "backend/cpu/blas.h"

namespace jaxamg {

template <class T>
std::size_t AmgLevel<T>::bytes() const {
  auto mat = [](const CsrMatrix<T>& M) {
    return M.row_ptr.size() * sizeof(Index) + M.col.size() * sizeof(Index) +
           M.val.size() * sizeof(T) + M.diag_pos.size() * sizeof(Index);
  };
  std::size_t total = A ? mat(*A) : 0;
  total += mat(ops.P) + mat(ops.R);
  for (const Vector<T>* v : {&b, &x, &r, &restrict_work, &e, &Ae, &kr, &kz, &kp, &ky}) {
    total += v->size() * sizeof(T);
  }
  return total;
}

namespace {

template <class T>
class CycleRunner {
 public:
  CycleRunner(std::vector<AmgLevel<T>>& levels, Solver<T>* coarse, const CycleParams& p)
      : levels_(levels), coarse_(coarse), p_(p), coarsest_(static_cast<int>(levels.size()) - 1) {}

  void fixed(int l, CycleType type, const T* b, T* x, bool x_is_zero) {
    AmgLevel<T>& L = levels_[l];
    if (l == coarsest_) {
      if (coarse_) {
        coarse_->solve(b, x, x_is_zero);
      } else {
        smooth(L, b, x, x_is_zero, p_.coarsest_sweeps);
      }
      return;
    }
    const std::size_t n = L.rows();
    const int pre = sweeps(l, p_.presweeps);
    smooth(L, b, x, x_is_zero, pre);
    const bool x_still_zero = x_is_zero && (pre <= 0 || !L.smoother);
    AmgLevel<T>& C = levels_[l + 1];
    if (L.r_is_pt) {
      // b_c = P^T (b - A x) in one pass; r is kept only for error scaling.
      cpu::restrict_residual(*L.A, x_still_zero ? nullptr : x, b, L.ops.P, C.b.data(),
                             L.r.empty() ? nullptr : L.r.data(), L.restrict_work.data(),
                             L.restrict_work.size());
    } else {
      if (x_still_zero) {
        cpu::copy(n, b, L.r.data());
      } else {
        cpu::residual(*L.A, x, b, L.r.data());
      }
      cpu::spmv(L.ops.R, L.r.data(), C.b.data());
    }
    dispatch(l + 1, l + 1 == coarsest_ ? CycleType::kV : type);
    correct(l, x);
    smooth(L, b, x, false, sweeps(l, p_.postsweeps));
  }

 private:
  int sweeps(int l, int n) const { return p_.sweeps(l, n); }

  void smooth(AmgLevel<T>& L, const T* b, T* x, bool x_is_zero, int n) {
    if (L.smoother && n > 0) {
      L.smoother->apply(b, x, x_is_zero, n);
    } else if (x_is_zero) {
      cpu::fill<T>(L.rows(), T(0), x);
    }
  }

  // Solves level m's system A_m x_m = b_m approximately, x_m = 0 on entry.
  void dispatch(int m, CycleType type) {
    AmgLevel<T>& L = levels_[m];
    dispatch_cycle(
        type, [&](CycleType kind, bool zero) { fixed(m, kind, L.b.data(), L.x.data(), zero); },
        [&] {
          const std::size_t n = L.rows();
          kcycle_steps<T>(
              n, p_.cycle_iters, type == CycleType::kCGF, L.b.data(), L.x.data(), L.kr.data(),
              L.kz.data(), L.kp.data(), L.ky.data(),
              [&](const T* r, T* z) { fixed(m, type, r, z, true); },
              [&](const T* p, T* y) { cpu::spmv(*L.A, p, y); },
              [&](const T* u, const T* v) { return cpu::dot(n, u, v); });
        });
  }

  // x += P x_c, optionally scaled (AmgX error_scaling): the prolongated
  // correction e is smoothed against the residual r that was restricted
  // (scaling_smoother_steps sweeps of A e = r), then scaled by
  //   2: alpha = <r, A e> / <A e, A e>  (minimises ||r - alpha A e||_2)
  //   3: alpha = <r, e> / <e, A e>      (minimises the A-norm of the error)
  // with |alpha| kept in [0.3, 10], as AmgX does, and reused for
  // reuse_scale further cycles.
  void correct(int l, T* x) {
    AmgLevel<T>& L = levels_[l];
    const T* xc = levels_[l + 1].x.data();
    if (p_.error_scaling < 2) {
      cpu::spmv_axpby(L.ops.P, T(1), xc, T(1), x);
      return;
    }
    if (L.scale_counter > 0) {
      cpu::spmv_axpby(L.ops.P, L.scale, xc, T(1), x);
      --L.scale_counter;
      return;
    }
    const std::size_t n = L.rows();
    T* e = L.e.data();
    T* Ae = L.Ae.data();
    const T* r = L.r.data();
    cpu::spmv(L.ops.P, xc, e);
    smooth(L, r, e, false, p_.scaling_smoother_steps);
    cpu::spmv(*L.A, e, Ae);
    double num, den;
    if (p_.error_scaling == 2) {
      num = cpu::dot(n, r, Ae);
      den = cpu::dot(n, Ae, Ae);
    } else {
      num = cpu::dot(n, r, e);
      den = cpu::dot(n, e, Ae);
    }
    double alpha = den == 0 ? 1.0 : num / den;
    const double sign = alpha < 0 ? -1.0 : 1.0;
    if (std::abs(alpha) < 0.3) alpha = 0.3 * sign;
    if (std::abs(alpha) > 10) alpha = 10 * sign;
    cpu::axpy(n, static_cast<T>(alpha), e, x);
    L.scale = static_cast<T>(alpha);
    L.scale_counter = p_.reuse_scale;
  }

  std::vector<AmgLevel<T>>& levels_;
  Solver<T>* coarse_;
  const CycleParams& p_;
  const int coarsest_;
};

}  // namespace

template <class T>
void run_cycle(std::vector<AmgLevel<T>>& levels, Solver<T>* coarse, const CycleParams& params,
               const T* b, T* x, bool x_is_zero) {
  CycleRunner<T>(levels, coarse, params).fixed(0, params.type, b, x, x_is_zero);
}

template struct AmgLevel<float>;
template struct AmgLevel<double>;
template void run_cycle(std::vector<AmgLevel<float>>&, Solver<float>*, const CycleParams&,
                        const float*, float*, bool);
template void run_cycle(std::vector<AmgLevel<double>>&, Solver<double>*, const CycleParams&,
                        const double*, double*, bool);

}  // namespace jaxamg
