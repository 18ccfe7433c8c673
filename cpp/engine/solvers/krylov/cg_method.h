// Conjugate gradients -- CG (no preconditioner), PCG, and PCGF, the flexible
// variant whose Polak-Ribiere beta stays correct when the preconditioner
// changes between applications -- written once over a backend (the CPU
// backend, the CPU lanes backend, the CUDA backend; see backend/slots.h for
// how a backend keeps the scalars). The host solver (cg.cc) and the batched
// solves of several right-hand sides (batched/batched_krylov.cc) run this
// same code, so a lane of a batch is a one-lane solve step for step.
//
// The direction for the next step is formed at the start of the following
// iteration: the loop tests convergence in between, and a converged solve
// then skips one preconditioner application, as AmgX's early exit does.
//
// Operator (the caller's): matvec(x, y) sets y = A x (with the halo exchange
// on a distributed matrix), precondition(r, z) sets z = M^-1 r.
#pragma once
#include <cmath>
#include <vector>

#include "backend/slots.h"
#include "solvers/solver.h"

namespace jaxamg {

// The scalar slots of one lane (backend::kGo is slot 0).
struct CgSlots {
  enum : int {
    kGo = backend::kGo,
    kStop,     // the recurrence cannot continue (kRr2 then tells why)
    kInit,     // set by the caller: (re)start this lane from its residual
    kHasDir,   // a search direction exists (0 on the first iteration)
    kCopyDir,  // this iteration's direction is z itself
    kNextDir,  // this iteration's direction is z + beta p
    kRz,       // <r, z> of the current direction
    kRzNew,    // <r, z> of the new residual
    kZq,       // PCGF: <z_new, A p_old>
    kBeta,
    kPq,       // <p, A p>
    kAlpha,    // the step length (PCGF's beta needs the previous one)
    kRr,       // without M: <r, r> (the next <r, z> and the loop's L2 norm)
    kRr2,      // <r, r> of a lane that stopped: zero means converged
    kCount
  };
};

namespace cg_steps {
using S = CgSlots;

struct Init {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kInit] != 0.0) s[S::kHasDir] = 0.0;
  }
};
struct EndInit {
  JAXAMG_HOST_DEVICE void operator()(double* s) const { s[S::kInit] = 0.0; }
};
struct Begin {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    s[S::kGo] = 1.0;
    s[S::kStop] = 0.0;
  }
};
// Plain CG: the new <r, z> is the <r, r> of the last update.
struct RzFromRr {
  JAXAMG_HOST_DEVICE void operator()(double* s) const { s[S::kRzNew] = s[S::kRr]; }
};
struct Direction {
  bool flexible;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    s[S::kCopyDir] = s[S::kNextDir] = 0.0;
    // <r, M r> = 0 with r != 0 (an indefinite or singular preconditioner)
    // ends the recurrence; r = 0 is the exact solution.
    if (backend::unusable_divisor(s[S::kRzNew])) {
      s[S::kGo] = 0.0;
      s[S::kStop] = 1.0;
      return;
    }
    if (s[S::kHasDir] == 0.0) {
      s[S::kCopyDir] = 1.0;
    } else {
      // Polak-Ribiere for PCGF: <z_new, r_new - r_old> / <z_old, r_old>,
      // with r_new - r_old = -alpha q (q = A p of the previous step).
      s[S::kBeta] = flexible ? -s[S::kAlpha] * s[S::kZq] / s[S::kRz] : s[S::kRzNew] / s[S::kRz];
      s[S::kNextDir] = 1.0;
    }
    s[S::kHasDir] = 1.0;
    s[S::kRz] = s[S::kRzNew];
  }
};
struct Step {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kGo] == 0.0) return;
    if (backend::unusable_divisor(s[S::kPq])) {
      s[S::kGo] = 0.0;
      s[S::kStop] = 1.0;
      return;
    }
    s[S::kAlpha] = s[S::kRz] / s[S::kPq];
  }
};
}  // namespace cg_steps

template <class Backend>
class CgMethod {
 public:
  using T = typename Backend::value_type;
  using Vec = typename Backend::vector_type;
  using S = CgSlots;

  // preconditioned: M is applied (else z = r); flexible: PCGF's beta.
  CgMethod(Backend& be, bool preconditioned, bool flexible)
      : be_(be), precond_(preconditioned), flexible_(flexible), p_(be.make_vector()),
        q_(be.make_vector()) {
    // Without a preconditioner z is r itself: no copy, no extra vector. PCG
    // keeps z in q's storage, as hypre's PCG does: z = M r is consumed by
    // <r, z> and the new direction before q = A p overwrites it. PCGF's beta
    // needs the new z and the old q together, so it has its own z.
    if (precond_ && flexible_) z_ = be.make_vector();
  }

  // Starts the lanes whose kInit slot is set from their residual r. Each
  // lane has its own recurrence, so whether every lane starts (`every`)
  // does not matter.
  void init(const T* r, bool /*every*/ = true) {
    be_.update(cg_steps::Init{});
    if (!precond_) be_.dot(r, r, S::kRr, S::kInit);
    be_.update(cg_steps::EndInit{});
  }
  // A lane may start while the others go on.
  bool can_start_lanes() const { return true; }

  // One iteration on x and its residual r (updated by the recurrence).
  template <class Operator>
  void iteration(Operator& op, T* x, T* r) {
    const bool precond = precond_;
    const bool flexible = flexible_;
    T* p = p_.data();
    T* q = q_.data();
    T* z = !precond ? r : flexible ? z_.data() : q;
    be_.update(cg_steps::Begin{});
    if (precond) {
      op.precondition(r, z);
      be_.dot(r, z, S::kRzNew);
    } else {
      be_.update(cg_steps::RzFromRr{});
    }
    if (flexible) be_.dot(z, q, S::kZq, S::kHasDir);
    be_.update(cg_steps::Direction{flexible});
    be_.copy(z, p, S::kCopyDir);
    be_.xpby(z, backend::slot(S::kBeta), p, S::kNextDir);
    if (be_.any(S::kGo)) {
      op.matvec(p, q);
      be_.dot(p, q, S::kPq);
      be_.update(cg_steps::Step{});
      be_.axpy(backend::slot(S::kAlpha), p, x, S::kGo);
      be_.axpy(backend::slot(S::kAlpha, -1.0), q, r, S::kGo);
      // Needed for the next beta anyway; it also gives the loop its L2 norm.
      if (!precond) be_.dot(r, r, S::kRr, S::kGo);
    }
    be_.dot(r, r, S::kRr2, S::kStop);
  }

  // How a lane's iteration ended: a stop is kConverged if r is exactly zero
  // (the previous step solved the system, which an unmonitored solve has
  // not noticed), kBreakdown otherwise.
  static IterationResult outcome(const double* s) {
    if (s[S::kStop] == 0.0) return IterationResult::kContinue;
    return s[S::kRr2] == 0.0 ? IterationResult::kConverged : IterationResult::kBreakdown;
  }
  // Without a preconditioner, the L2 residual norm from the <r, r> that
  // the last update computed anyway (lane slots s).
  bool l2_residual_norm(const double* s, double* norm) const {
    if (precond_) return false;
    *norm = std::sqrt(s[S::kRr]);
    return true;
  }
  // x is current after every step: nothing to complete when a solve ends.
  template <class Operator>
  void finalize(Operator& /*op*/, T* /*x*/, int /*mask*/) {}

  // The method's vectors (a lanes backend keeps their lanes in step with
  // the loop's when lanes finish).
  std::vector<Vec*> state_vectors() { return {&p_, &q_, &z_}; }
  // After a lanes backend dropped lanes: the vectors moved, nothing else
  // depends on the block.
  void lanes_dropped(int /*before*/) {}

 private:
  Backend& be_;
  bool precond_, flexible_;
  Vec p_, q_, z_;
};

}  // namespace jaxamg
