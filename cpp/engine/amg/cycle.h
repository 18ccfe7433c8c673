// The multigrid cycle, written once for every hierarchy: the serial one
// (amg_cycle.cc), the batched lanes (batched/batched_amg.cc) and the
// distributed one (dist/dist_amg_levels.cc). It follows AmgX's FixedCycle
// and its dispatchers:
//
//   fixed cycle on level l: pre-smooth, b_c = R (b - A x), solve the coarse
//   level with the dispatcher, x += P x_c (optionally scaled), post-smooth;
//   dispatchers on level l+1: V (one fixed cycle), W (two W cycles), F (an F
//   then a V cycle), CG / CGF (cycle_iters steps of CG / flexible CG on A_l+1,
//   preconditioned by a fixed cycle of the same kind: the K-cycle).
//
// The level just above the coarsest always dispatches V, and the coarsest
// level runs the coarse solver once or coarsest_sweeps smoother sweeps.
//
// A hierarchy provides `Levels`: its level vectors and the operations on one
// level, in the storage of its backend --
//   value_type; int count() const;
//   backend(l): the level's vector backend (backend/slots.h), whose slots
//     carry the K-cycle's and the error scaling's scalars;
//   b(l), x(l) (levels > 0), r(l) (the restricted residual, kept for error
//     scaling), e(l), ae(l) (error scaling), kr/kz/kp/ky(l) (K-cycle);
//   has_smoother(l); smooth(l, b, x, x_is_zero, sweeps) (x = 0 when no sweep
//     runs from a zero guess); coarsest(b, x, x_is_zero, sweeps);
//   zero_start_restrict(l, b, x): one diagonal sweep from zero fused with
//     the restriction, where the hierarchy has that specialisation (false
//     otherwise: the cycle then smooths and restricts);
//   restrict_residual(l, x or nullptr for zero, b): b(l+1) = R (b - A x),
//     keeping r(l) when error scaling;
//   prolongate(l, e): e = P x(l+1); prolongate_add(l, scale, x): x += scale
//     P x(l+1); matvec(l, x, y): y = A_l x;
//   scale_counter(l): cycles that may still reuse the level's last scale
//   (LevelVectors below gives the vectors and the counter from a level's
//   members).
// Products, restriction and prolongation exchange halo values on a
// distributed hierarchy, and the backend's inner products are global sums,
// so every process takes the same branches.
#pragma once
#include "amg/amg_level.h"
#include "backend/slots.h"

namespace jaxamg {

// The vector accessors of `Levels` for a hierarchy whose level l keeps its
// cycle vectors as members b, x, r, e, ae, kr, kz, kp, ky (each with
// data()) and scale_counter of the object Derived::work(l) returns -- the
// layout every hierarchy shares, whatever its vector type.
template <class Derived, class T>
class LevelVectors {
 public:
  T* b(int l) { return w(l).b.data(); }
  T* x(int l) { return w(l).x.data(); }
  T* r(int l) { return w(l).r.data(); }
  T* e(int l) { return w(l).e.data(); }
  T* ae(int l) { return w(l).ae.data(); }
  T* kr(int l) { return w(l).kr.data(); }
  T* kz(int l) { return w(l).kz.data(); }
  T* kp(int l) { return w(l).kp.data(); }
  T* ky(int l) { return w(l).ky.data(); }
  int& scale_counter(int l) { return w(l).scale_counter; }

 private:
  decltype(auto) w(int l) { return static_cast<Derived&>(*this).work(l); }
};

// Scalar slots of a level's backend used by the cycle.
struct CycleSlots {
  enum : int {
    kGo = backend::kGo,  // K-cycle: this lane's CG steps go on
    kRz,                 // K-cycle: <r, z>
    kRzNew,
    kYp,                 // K-cycle: <A p, p>
    kZy,                 // K-cycle, flexible: <z, A p>
    kAlpha,
    kBeta,
    kNum,                // error scaling: numerator and denominator of alpha
    kDen,
    kScale,              // error scaling: the level's scale
    kCount
  };
};

namespace cycle_steps {
using S = CycleSlots;

struct KStart {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    s[S::kGo] = 1.0;
    s[S::kRz] = s[S::kRzNew];
  }
};
// A zero residual or search direction: x is already the answer (and
// dividing would put NaN into the hierarchy).
struct KStep {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kGo] == 0.0) return;
    if (s[S::kRz] == 0.0 || s[S::kYp] == 0.0) {
      s[S::kGo] = 0.0;
      return;
    }
    s[S::kAlpha] = s[S::kRz] / s[S::kYp];
  }
};
struct KBeta {
  bool flexible;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kGo] == 0.0) return;
    if (flexible) {
      // <z_new, r_new - r_old> / <r, z> with r_new - r_old = -alpha A p.
      s[S::kBeta] = -s[S::kAlpha] * s[S::kZy] / s[S::kRz];
    } else {
      s[S::kBeta] = s[S::kRzNew] / s[S::kRz];
    }
    s[S::kRz] = s[S::kRzNew];
  }
};
// AmgX's error scaling: alpha = num / den, |alpha| kept in [0.3, 10].
struct Scale {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    double alpha = s[S::kDen] == 0.0 ? 1.0 : s[S::kNum] / s[S::kDen];
    const double sign = alpha < 0 ? -1.0 : 1.0;
    const double mag = alpha < 0 ? -alpha : alpha;
    if (mag < 0.3) alpha = 0.3 * sign;
    if (mag > 10) alpha = 10 * sign;
    s[S::kScale] = alpha;
  }
};
}  // namespace cycle_steps

template <class Levels>
class Cycle {
 public:
  using T = typename Levels::value_type;
  using S = CycleSlots;

  Cycle(Levels& levels, const CycleParams& params)
      : lv_(levels), p_(params), coarsest_(levels.count() - 1) {}

  // One cycle from level 0: b and x are level 0's vectors; x is overwritten
  // if x_is_zero.
  void run(const T* b, T* x, bool x_is_zero) { fixed(0, p_.type, b, x, x_is_zero); }

 private:
  void fixed(int l, CycleType type, const T* b, T* x, bool x_is_zero) {
    if (l == coarsest_) {
      lv_.coarsest(b, x, x_is_zero, p_.coarsest_sweeps);
      return;
    }
    const int pre = p_.sweeps(l, p_.presweeps);
    if (!(x_is_zero && pre == 1 && lv_.zero_start_restrict(l, b, x))) {
      lv_.smooth(l, b, x, x_is_zero, pre);
      const bool x_still_zero = x_is_zero && (pre <= 0 || !lv_.has_smoother(l));
      lv_.restrict_residual(l, x_still_zero ? nullptr : x, b);
    }
    dispatch(l + 1, l + 1 == coarsest_ ? CycleType::kV : type);
    correct(l, x);
    lv_.smooth(l, b, x, false, p_.sweeps(l, p_.postsweeps));
  }

  // Solves level m's system A_m x_m = b_m approximately, x_m = 0 on entry.
  void dispatch(int m, CycleType type) {
    T* b = lv_.b(m);
    T* x = lv_.x(m);
    switch (type) {
      case CycleType::kV:
        fixed(m, CycleType::kV, b, x, true);
        break;
      case CycleType::kW:
        fixed(m, CycleType::kW, b, x, true);
        fixed(m, CycleType::kW, b, x, false);
        break;
      case CycleType::kF:
        fixed(m, CycleType::kF, b, x, true);
        fixed(m, CycleType::kV, b, x, false);
        break;
      case CycleType::kCG:
      case CycleType::kCGF:
        kcycle(m, type);
        break;
    }
  }

  // The K-cycle on level m: cycle_iters steps of preconditioned CG on
  // A x = b from x = 0, the preconditioner one fixed cycle of the same kind
  // (z from zero). CGF uses the flexible beta, so no copy of the old
  // residual is needed.
  void kcycle(int m, CycleType type) {
    namespace st = cycle_steps;
    using backend::kAllLanes;
    using backend::slot;
    auto& be = lv_.backend(m);
    const bool flexible = type == CycleType::kCGF;
    const T* b = lv_.b(m);
    T *x = lv_.x(m), *r = lv_.kr(m), *z = lv_.kz(m), *p = lv_.kp(m), *y = lv_.ky(m);
    be.fill_zero(x);
    be.copy(b, r, kAllLanes);
    fixed(m, type, r, z, true);
    be.copy(z, p, kAllLanes);
    be.dot(r, z, S::kRzNew);
    be.update(st::KStart{});
    for (int k = 1;; ++k) {
      lv_.matvec(m, p, y);
      be.dot(y, p, S::kYp);
      be.update(st::KStep{});
      be.axpy(slot(S::kAlpha), p, x, S::kGo);
      if (k >= p_.cycle_iters || !be.any(S::kGo)) break;
      be.axpy(slot(S::kAlpha, -1.0), y, r, S::kGo);
      fixed(m, type, r, z, true);
      if (flexible) be.dot(z, y, S::kZy);
      be.dot(r, z, S::kRzNew);
      be.update(st::KBeta{flexible});
      be.xpby(z, slot(S::kBeta), p, S::kGo);
    }
  }

  // x += P x_c, optionally scaled (AmgX error_scaling): the prolongated
  // correction e is smoothed against the residual r that was restricted
  // (scaling_smoother_steps sweeps of A e = r), then scaled by
  //   2: alpha = <r, A e> / <A e, A e>  (minimises ||r - alpha A e||_2)
  //   3: alpha = <r, e> / <e, A e>      (minimises the A-norm of the error)
  // with |alpha| kept in [0.3, 10], as AmgX does, and reused for
  // reuse_scale further cycles.
  void correct(int l, T* x) {
    using backend::constant;
    using backend::kAllLanes;
    using backend::slot;
    if (p_.error_scaling < 2) {
      lv_.prolongate_add(l, constant(1.0), x);
      return;
    }
    int& counter = lv_.scale_counter(l);
    if (counter > 0) {
      lv_.prolongate_add(l, slot(S::kScale), x);
      --counter;
      return;
    }
    auto& be = lv_.backend(l);
    T* e = lv_.e(l);
    T* ae = lv_.ae(l);
    const T* r = lv_.r(l);
    lv_.prolongate(l, e);
    lv_.smooth(l, r, e, false, p_.scaling_smoother_steps);
    lv_.matvec(l, e, ae);
    if (p_.error_scaling == 2) {
      be.dot(r, ae, S::kNum);
      be.dot(ae, ae, S::kDen);
    } else {
      be.dot(r, e, S::kNum);
      be.dot(e, ae, S::kDen);
    }
    be.update(cycle_steps::Scale{});
    be.axpy(slot(S::kScale), e, x, kAllLanes);
    counter = p_.reuse_scale;
  }

  Levels& lv_;
  const CycleParams& p_;
  const int coarsest_;
};

}  // namespace jaxamg
