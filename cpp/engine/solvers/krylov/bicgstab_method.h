// BiCGStab for nonsymmetric systems -- BICGSTAB (no preconditioner) and
// PBICGSTAB, right preconditioned so that r stays the true residual's
// recurrence and the convergence test sees b - A x, not a preconditioned
// residual -- written once over a backend (backend/slots.h). The shadow
// vector is the initial residual. The host solver (bicgstab.cc) and the
// batched solves (batched/batched_krylov.cc) run this same code.
//
// Operator (the caller's): matvec(x, y) sets y = A x, precondition(r, z)
// sets z = M^-1 r (called only with a preconditioner).
#pragma once
#include <vector>

#include "backend/slots.h"
#include "solvers/solver.h"

namespace jaxamg {

// The scalar slots of one lane (backend::kGo is slot 0).
struct BicgstabSlots {
  enum : int {
    kGo = backend::kGo,
    kStop,      // the recurrence cannot continue (kRr2 then tells why)
    kInit,      // set by the caller: (re)start this lane from its residual
    kHasDir,    // a search direction exists (0 on the first iteration)
    kCopyDir,   // this iteration's direction is r itself
    kNextDir,   // this iteration's direction is r + beta (p - omega v)
    kHalf,      // stopped after the half step, which x still takes
    kRho,       // <r0, r> of the current direction
    kRhoNew,
    kBeta,
    kMinusBetaOmega,
    kRv,        // <r0, v>
    kAlpha,
    kTt,        // <t, t>
    kTs,        // <t, s>
    kOmega,
    kRr2,       // <r, r> of a lane that stopped: zero means converged
    kCount
  };
};

namespace bicgstab_steps {
using S = BicgstabSlots;

struct Init {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kInit] != 0.0) s[S::kHasDir] = 0.0;
    s[S::kInit] = 0.0;
  }
};
struct Begin {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    s[S::kGo] = 1.0;
    s[S::kStop] = s[S::kHalf] = 0.0;
  }
};
struct Stop {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    s[S::kGo] = 0.0;
    s[S::kStop] = 1.0;
  }
};
struct Direction {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    s[S::kCopyDir] = s[S::kNextDir] = 0.0;
    // <r0, r> = 0: the shadow space is exhausted, unless r = 0.
    if (backend::unusable_divisor(s[S::kRhoNew])) return Stop{}(s);
    if (s[S::kHasDir] == 0.0) {
      s[S::kCopyDir] = 1.0;
      s[S::kHasDir] = 1.0;
    } else {
      // omega was checked to be usable when it was computed.
      s[S::kBeta] = (s[S::kRhoNew] / s[S::kRho]) * (s[S::kAlpha] / s[S::kOmega]);
      s[S::kMinusBetaOmega] = -s[S::kBeta] * s[S::kOmega];
      s[S::kNextDir] = 1.0;
    }
    s[S::kRho] = s[S::kRhoNew];
  }
};
struct Alpha {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kGo] == 0.0) return;
    if (backend::unusable_divisor(s[S::kRv])) return Stop{}(s);
    s[S::kAlpha] = s[S::kRho] / s[S::kRv];
  }
};
struct Omega {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kGo] == 0.0) return;
    // t = A M s = 0: the half step is kept; with s = 0 it is the solution.
    if (backend::unusable_divisor(s[S::kTt])) {
      s[S::kHalf] = 1.0;
      return Stop{}(s);
    }
    s[S::kOmega] = s[S::kTs] / s[S::kTt];
    // The minimal-residual step is zero: keep the half step (x, r = s
    // consistent) and stop, since the next beta divides by omega.
    if (backend::unusable_divisor(s[S::kOmega])) {
      s[S::kHalf] = 1.0;
      return Stop{}(s);
    }
  }
};
}  // namespace bicgstab_steps

template <class Backend>
class BicgstabMethod {
 public:
  using T = typename Backend::value_type;
  using Vec = typename Backend::vector_type;
  using S = BicgstabSlots;

  BicgstabMethod(Backend& be, bool preconditioned)
      : be_(be), precond_(preconditioned), shadow_(be.make_vector()), p_(be.make_vector()),
        v_(be.make_vector()), t_(be.make_vector()) {
    if (precond_) {
      phat_ = be.make_vector();
      shat_ = be.make_vector();
    }
  }

  // Starts the lanes whose kInit slot is set from their residual r. Each
  // lane has its own recurrence, so whether every lane starts (`every`)
  // does not matter.
  void init(const T* r, bool /*every*/ = true) {
    be_.copy(r, shadow_.data(), S::kInit);
    be_.update(bicgstab_steps::Init{});
  }
  // A lane may start while the others go on.
  bool can_start_lanes() const { return true; }

  template <class Operator>
  void iteration(Operator& op, T* x, T* r) {
    namespace st = bicgstab_steps;
    using backend::constant;
    using backend::slot;
    T* p = p_.data();
    T* v = v_.data();
    T* t = t_.data();
    const T* rs = shadow_.data();
    // Without a preconditioner the preconditioned vectors are p and s (= r).
    T* phat = precond_ ? phat_.data() : p;
    T* shat = precond_ ? shat_.data() : r;

    be_.update(st::Begin{});
    be_.dot(rs, r, S::kRhoNew);
    be_.update(st::Direction{});
    be_.copy(r, p, S::kCopyDir);
    // p = r + beta (p - omega v), in one pass.
    be_.axpbypcz(constant(1.0), r, slot(S::kMinusBetaOmega), v, slot(S::kBeta), p, S::kNextDir);
    if (be_.any(S::kGo)) {
      if (precond_) op.precondition(p, phat);
      op.matvec(phat, v);
      be_.dot(rs, v, S::kRv);
      be_.update(st::Alpha{});
      be_.axpy(slot(S::kAlpha, -1.0), v, r, S::kGo);  // r now holds s = r - alpha v
    }
    if (be_.any(S::kGo)) {
      if (precond_) op.precondition(r, shat);
      op.matvec(shat, t);
      be_.dot(t, t, S::kTt);
      be_.dot(t, r, S::kTs);
      be_.update(st::Omega{});
      be_.axpy(slot(S::kAlpha), phat, x, S::kHalf);
      be_.axpbypcz(slot(S::kAlpha), phat, slot(S::kOmega), shat, constant(1.0), x, S::kGo);
      be_.axpy(slot(S::kOmega, -1.0), t, r, S::kGo);
    }
    be_.dot(r, r, S::kRr2, S::kStop);
  }

  // How a lane's iteration ended (see CgMethod::outcome).
  static IterationResult outcome(const double* s) {
    if (s[S::kStop] == 0.0) return IterationResult::kContinue;
    return s[S::kRr2] == 0.0 ? IterationResult::kConverged : IterationResult::kBreakdown;
  }
  // r is the residual's recurrence: no cheaper norm than r's own.
  bool l2_residual_norm(const double* /*s*/, double* /*norm*/) const { return false; }
  // x is current after every step: nothing to complete when a solve ends.
  template <class Operator>
  void finalize(Operator& /*op*/, T* /*x*/, int /*mask*/) {}

  // The method's vectors (a lanes backend keeps their lanes in step with
  // the loop's when lanes finish).
  std::vector<Vec*> state_vectors() { return {&shadow_, &p_, &v_, &t_, &phat_, &shat_}; }
  // After a lanes backend dropped lanes: the vectors moved, nothing else
  // depends on the block.
  void lanes_dropped(int /*before*/) {}

 private:
  Backend& be_;
  bool precond_;
  Vec shadow_, p_, v_, t_, phat_, shat_;
};

}  // namespace jaxamg
