// IDR(s) with biorthogonalised basis vectors (AmgX's IDR and IDRMSYNC),
// right preconditioned, written once over a backend (backend/slots.h). The
// host solvers (idr.cc) run it on the CPU backend and the device solves
// (device/outer_krylov.cu) on the CUDA backend.
//
// A cycle is s steps that keep the residual orthogonal to more and more
// shadow vectors P, then one minimal-residual step that enters the next
// Sonneveld space; for s = 1 a cycle does BiCGStab's work. One iteration is
// one step (one product with A and one application of M), so every history
// entry is a true point of the recurrence.
//
// IDRMSYNC computes the same iterates with the inner products of each step
// taken together: P^T g once, then one triangular solve, instead of one
// product per earlier vector. That is one global reduction per step instead
// of k in a distributed solve (the backend's `dots`), and fewer passes over
// memory.
//
// P is the initial residual for s = 1 (as AmgX, which uses b) and otherwise
// s fixed pseudo-random vectors, orthonormalised. Entry (i, j) is a function
// of the global row id i and j alone, so a matrix distributed over
// processes gets the serial P and the distributed iterates equal the serial
// ones up to rounding.
//
// With larger s the recurrence residual drifts from b - A x by thousands of
// roundoffs of the largest residual seen (3e-4 relative in float for s = 8
// on a 2D Poisson problem, where the requested 1e-5 was met by the
// recurrence). At the end of a cycle where the residual has dropped 100-fold
// since the last replacement, r is therefore replaced by b - A x (one extra
// product, a few times per solve), so that the drift is measured against
// the current residual instead of the initial one.
//
// The step within the cycle (k) is kept on the host: every lane of a
// backend takes the same step. On the lanes backend a lane that restarts
// while the others go on (a rejected true residual) therefore waits, held,
// until the cycle ends (can_start_lanes): its kInit slot stays set and the
// steps skip it. It joins at the next cycle with its G and U zeroed, which
// makes that cycle its first, step for step. The small dense systems
// (M = P^T G, f, c) are in the lane's slots, in double whatever the vector
// type.
//
// Operator (the caller's): matvec(x, y) sets y = A x, precondition(r, z)
// sets z = M^-1 r (called only with a preconditioner), residual(x, r) sets
// r = b - A x for the solve's b.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "backend/slots.h"
#include "solvers/solver.h"

namespace jaxamg {

struct IdrShape {
  int s = 8;                    // shadow vectors (already at most the global rows)
  bool synchronised = false;    // IDRMSYNC: one reduction per step
  bool preconditioned = false;  // M is applied
  int64_t first_row = 0;        // the global id of this process's first row
};

// The scalar slots of the lane: named scalars, then M (s x s, column-major),
// f (s), c (s + 1: a step's s - k coefficients, then omega for u_k's
// combination), mu (s) and the coefficients of a combination (s).
struct IdrSlots {
  enum : int {
    kGo = backend::kGo,
    kStop,      // the recurrence cannot continue (kRr2 then tells why)
    kRr2,       // <r, r> of a lane that stopped: zero means converged
    kBeta,      // f_k / M_kk
    kOmega,     // the last minimal-residual step
    kTt,        // <t, t>
    kTs,        // <t, r>
    kRn2,       // <r, r>
    kReplaced,  // |r| at the last residual replacement
    kReplace,   // this cycle's end replaces r by b - A x
    kH,         // a projection coefficient
    kInit,      // set by the caller: (re)start this lane from its residual;
                // until init() does, the lane is held and takes no step
    kCount
  };
  int s;
  JAXAMG_HOST_DEVICE int m(int i, int j) const { return kCount + i + j * s; }
  JAXAMG_HOST_DEVICE int f() const { return kCount + s * s; }
  JAXAMG_HOST_DEVICE int c() const { return f() + s; }
  JAXAMG_HOST_DEVICE int mu() const { return c() + s + 1; }
  JAXAMG_HOST_DEVICE int coef() const { return mu() + s; }
  JAXAMG_HOST_DEVICE int count() const { return coef() + s; }
};

namespace idr_steps {
using S = IdrSlots;

JAXAMG_HOST_DEVICE inline void stop(double* s) {
  s[S::kGo] = 0.0;
  s[S::kStop] = 1.0;
}

// The lanes whose kInit slot is set: M = I, omega = 1; kRn2 holds
// <r0, r0>.
struct Start {
  S L;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kInit] == 0.0) return;
    s[S::kInit] = 0.0;
    for (int j = 0; j < L.s; ++j) {
      for (int i = 0; i < L.s; ++i) s[L.m(i, j)] = i == j ? 1.0 : 0.0;
    }
    s[S::kOmega] = 1.0;
    s[S::kGo] = 1.0;
    s[S::kStop] = 0.0;
    s[S::kReplaced] = sqrt(s[S::kRn2]);
  }
};
// kH = 1 / sqrt(kH): the scale that normalises a shadow vector.
struct InvSqrt {
  JAXAMG_HOST_DEVICE void operator()(double* s) const { s[S::kH] = 1.0 / sqrt(s[S::kH]); }
};
// A lane whose (re)start waits for the cycle to end: kInit set, init() not
// yet run for it.
JAXAMG_HOST_DEVICE inline bool held(const double* s) { return s[S::kInit] != 0.0; }
// A step goes on for every lane but a held one.
JAXAMG_HOST_DEVICE inline void go(double* s) {
  s[S::kGo] = held(s) ? 0.0 : 1.0;
  s[S::kStop] = 0.0;
}

// Starts step k: c = M(k:s, k:s) \ f(k:s) (M is lower triangular with
// checked diagonal); coef = -c, for v = r - G(:, k:s) c.
struct SolveC {
  S L;
  int k;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    go(s);
    if (held(s)) return;
    for (int i = k; i < L.s; ++i) {
      double sum = s[L.f() + i];
      for (int l = k; l < i; ++l) sum -= s[L.m(i, l)] * s[L.c() + l - k];
      s[L.c() + i - k] = sum / s[L.m(i, i)];
      s[L.coef() + i - k] = -s[L.c() + i - k];
    }
  }
};
// IDRMSYNC's projection of g_k (mu = P^T g_k): a = M(0:k, 0:k) \ mu(0:k)
// into c, coef = -a, mu(k:s) -= M(k:s, 0:k) a; then column k of M is mu.
struct SyncProject {
  S L;
  int k;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    for (int i = 0; i < k; ++i) {
      double sum = s[L.mu() + i];
      for (int l = 0; l < i; ++l) sum -= s[L.m(i, l)] * s[L.c() + l];
      s[L.c() + i] = sum / s[L.m(i, i)];
      s[L.coef() + i] = -s[L.c() + i];
    }
    for (int i = k; i < L.s; ++i) {
      for (int l = 0; l < k; ++l) s[L.mu() + i] -= s[L.m(i, l)] * s[L.c() + l];
      s[L.m(i, k)] = s[L.mu() + i];
    }
  }
};
// IDR's projection of g_k against p_i: kH = -(p_i^T g_k) / M_ii.
struct Project {
  S L;
  int i;
  JAXAMG_HOST_DEVICE void operator()(double* s) const { s[S::kH] = -(s[S::kH] / s[L.m(i, i)]); }
};
// Column k of M from mu = P(:, k:s)^T g_k.
struct FillColumn {
  S L;
  int k;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    for (int i = k; i < L.s; ++i) s[L.m(i, k)] = s[L.mu() + i - k];
  }
};
// beta = f_k / M_kk and f(k+1:s) -= beta M(k+1:s, k); a vanishing M_kk
// stops the lane.
struct Beta {
  S L;
  int k;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kGo] == 0.0) return;
    const double mkk = s[L.m(k, k)];
    if (backend::unusable_divisor(mkk)) return stop(s);
    const double beta = s[L.f() + k] / mkk;
    s[S::kBeta] = beta;
    for (int i = k + 1; i < L.s; ++i) s[L.f() + i] -= beta * s[L.m(i, k)];
  }
};
// The minimal-residual omega = <t, r> / <t, t>, enlarged to keep at least
// the cosine `angle` between t and r (van Gijzen and Sonneveld's
// "maintaining the convergence"; 0 keeps the plain omega, as AmgX for
// s = 1). t = 0 or t orthogonal to r: no step reduces the residual.
struct Omega {
  double angle;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    go(s);
    if (held(s)) return;
    const double nt = sqrt(s[S::kTt]);
    const double ts = s[S::kTs];
    if (backend::unusable_divisor(nt) || backend::unusable_divisor(ts)) return stop(s);
    double omega = ts / (nt * nt);
    if (angle > 0) {
      const double rho = fabs(ts) / (nt * sqrt(s[S::kRn2]));
      if (rho < angle) omega *= angle / rho;
    }
    if (backend::unusable_divisor(omega)) return stop(s);
    s[S::kOmega] = omega;
  }
};
// s[c + count] = omega, after c(0:count), so that the combination for u_k
// reads its coefficients c(1:count) and omega from one row of slots.
struct OmegaAfterC {
  S L;
  int count;
  JAXAMG_HOST_DEVICE void operator()(double* s) const { s[L.c() + count] = s[S::kOmega]; }
};
// Replace r by b - A x when |r| (from kRn2) fell 100-fold since the last
// replacement.
struct Replace {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    s[S::kReplace] = 0.0;
    if (s[S::kGo] == 0.0) return;
    const double rn = sqrt(s[S::kRn2]);
    if (rn < 1e-2 * s[S::kReplaced]) {
      s[S::kReplace] = 1.0;
      s[S::kReplaced] = rn;
    }
  }
};
}  // namespace idr_steps

template <class Backend>
class IdrMethod {
 public:
  using T = typename Backend::value_type;
  using Vec = typename Backend::vector_type;
  using S = IdrSlots;

  static S layout(const IdrShape& sh) { return S{sh.s}; }

  // Builds the shadow space for s > 1 (inner products over the backend).
  IdrMethod(Backend& be, const IdrShape& shape)
      : be_(be), sh_(shape), L_{shape.s}, v_(be.make_vector()), t_(be.make_vector()) {
    for (int i = 0; i < sh_.s; ++i) {
      P_.push_back(be.make_vector());
      G_.push_back(be.make_vector());
      U_.push_back(be.make_vector());
    }
    if (sh_.preconditioned) z_ = be.make_vector();
    if (sh_.s > 1) make_shadow_space();
  }

  const IdrShape& shape() const { return sh_; }

  // (Re)starts the lanes whose kInit slot is set from their residual r.
  // `every`: all lanes start (a fresh solve); otherwise the others go on,
  // and the caller starts lanes only when can_start_lanes().
  void init(const T* r, bool every = true) {
    if (every) {
      if (sh_.s > 1 && be_.lanes() != shadow_lanes_) make_shadow_space();
      k_ = 0;
      first_cycle_ = true;
    } else {
      // The lanes' first cycle, run as a later one: G = U = 0 make its
      // combinations give what the first cycle's copies give, bit for bit.
      for (int i = 0; i < sh_.s; ++i) {
        be_.fill_zero(G_[i].data(), S::kInit);
        be_.fill_zero(U_[i].data(), S::kInit);
      }
    }
    if (sh_.s == 1) be_.copy(r, P_[0].data(), S::kInit);
    be_.dot(r, r, S::kRn2, S::kInit);
    be_.update(idr_steps::Start{L_});
  }

  // Lanes may join only between cycles: the step k is shared. Until then a
  // lane whose kInit slot is set is held.
  bool can_start_lanes() const { return k_ == 0; }

  // The method's vectors that hold a lane's state across iterations.
  std::vector<Vec*> state_vectors() {
    std::vector<Vec*> out;
    for (auto* set : {&P_, &G_, &U_}) {
      for (Vec& v : *set) out.push_back(&v);
    }
    return out;
  }
  // After a lanes backend dropped lanes (from `before` lanes), moving the
  // state vectors: the shadow space moved with them if it was valid.
  void lanes_dropped(int before) { shadow_lanes_ = shadow_lanes_ == before ? be_.lanes() : -1; }

  template <class Operator>
  void iteration(Operator& op, T* x, T* r) {
    if (k_ < sh_.s) {
      subspace_step(op, x, r);
    } else {
      reduction_step(op, x, r);
    }
    be_.dot(r, r, S::kRr2, S::kStop);
  }

  // How the iteration ended: a stopped recurrence converged if r = 0.
  static IterationResult outcome(const double* s) {
    if (s[S::kStop] == 0.0) return IterationResult::kContinue;
    return s[S::kRr2] == 0.0 ? IterationResult::kConverged : IterationResult::kBreakdown;
  }
  // r is the residual's recurrence: no cheaper norm than r's own.
  bool l2_residual_norm(const double* /*s*/, double* /*norm*/) const { return false; }
  // x is current after every step: nothing to complete when a solve ends.
  template <class Operator>
  void finalize(Operator& /*op*/, T* /*x*/, int /*mask*/) {}

 private:
  // A standard normal number from (global row, column): splitmix64 of the
  // pair, then Box-Muller on its two 32-bit halves. Any partition of the
  // rows draws the same P.
  static double shadow_entry(int64_t row, int column) {
    uint64_t z = 20111u + (static_cast<uint64_t>(row) * 64u + static_cast<uint64_t>(column)) *
                              0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const double u1 = (static_cast<double>(z >> 32) + 0.5) / 4294967296.0;
    const double u2 = static_cast<double>(z & 0xffffffffu) / 4294967296.0;
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }

  // P: the pseudo-random columns, orthonormalised by Gram-Schmidt (the same
  // in every lane).
  void make_shadow_space() {
    shadow_lanes_ = be_.lanes();
    using backend::kAllLanes;
    using backend::slot;
    std::vector<T> host(be_.size());
    for (int i = 0; i < sh_.s; ++i) {
      for (std::size_t r = 0; r < host.size(); ++r) {
        host[r] = static_cast<T>(shadow_entry(sh_.first_row + static_cast<int64_t>(r), i));
      }
      T* p = P_[i].data();
      be_.upload(host.data(), p);
      for (int j = 0; j < i; ++j) {
        be_.dot(p, P_[j].data(), S::kH);
        be_.axpy(slot(S::kH, -1.0), P_[j].data(), p, kAllLanes);
      }
      be_.dot(p, p, S::kH);
      be_.update(idr_steps::InvSqrt{});
      be_.scale(slot(S::kH), p, kAllLanes);
    }
  }

  // out += sum_i s[coef + i] vs[i] over count vectors, two per pass.
  void add_combination(T* const* vs, int count, int coef, T* out) {
    using backend::slot;
    int i = 0;
    for (; i + 1 < count; i += 2) {
      be_.axpbypcz(slot(coef + i), vs[i], slot(coef + i + 1), vs[i + 1], backend::constant(1.0),
                   out, S::kGo);
    }
    if (i < count) be_.axpy(slot(coef + i), vs[i], out, S::kGo);
  }

  // s[out + i - first] = p_i^T g for i in [first, s): one reduction.
  void shadow_products(int first, const T* g, int out) {
    ptrs_.clear();
    for (int i = first; i < sh_.s; ++i) ptrs_.push_back(P_[i].data());
    be_.dots(ptrs_.data(), sh_.s - first, g, out);
  }

  template <class Operator>
  void subspace_step(Operator& op, T* x, T* r) {
    namespace st = idr_steps;
    using backend::slot;
    const int k = k_, s = sh_.s;
    if (k == 0) shadow_products(0, r, L_.f());
    be_.update(st::SolveC{L_, k});
    T* v = v_.data();
    be_.copy(r, v, S::kGo);
    // G(:, k:s) does not exist yet in the first cycle (zero in the method).
    if (!first_cycle_) {
      ptrs_.clear();
      for (int i = k; i < s; ++i) ptrs_.push_back(G_[i].data());
      add_combination(ptrs_.data(), s - k, L_.coef(), v);
    }
    T* z = v;
    if (sh_.preconditioned) {
      z = z_.data();
      op.precondition(v, z);
    }
    // u_k = U(:, k:s) c + omega z
    T* uk = U_[k].data();
    if (first_cycle_) {
      be_.copy(z, uk, S::kGo);  // omega is still 1
    } else {
      be_.scale(slot(L_.c()), uk, S::kGo);
      ptrs_.clear();
      for (int i = k + 1; i < s; ++i) ptrs_.push_back(U_[i].data());
      ptrs_.push_back(z);
      // The coefficients c(1:s-k) then omega, in a row of slots.
      be_.update(st::OmegaAfterC{L_, s - k});
      add_combination(ptrs_.data(), s - k, L_.c() + 1, uk);
    }
    T* gk = G_[k].data();
    op.matvec(uk, gk);
    biorthogonalize(k);
    be_.update(st::Beta{L_, k});
    be_.axpy(slot(S::kBeta, -1.0), gk, r, S::kGo);
    be_.axpy(slot(S::kBeta), uk, x, S::kGo);
    ++k_;
  }

  // Makes g_k orthogonal to p_0..p_{k-1} (updating u_k alike, so that
  // g_k = A u_k still holds) and fills column k of M = P^T G.
  void biorthogonalize(int k) {
    using backend::slot;
    T* gk = G_[k].data();
    T* uk = U_[k].data();
    if (sh_.synchronised) {
      shadow_products(0, gk, L_.mu());
      be_.update(idr_steps::SyncProject{L_, k});
      if (k > 0) {
        ptrs_.clear();
        for (int i = 0; i < k; ++i) ptrs_.push_back(G_[i].data());
        add_combination(ptrs_.data(), k, L_.coef(), gk);
        ptrs_.clear();
        for (int i = 0; i < k; ++i) ptrs_.push_back(U_[i].data());
        add_combination(ptrs_.data(), k, L_.coef(), uk);
      }
      return;
    }
    for (int i = 0; i < k; ++i) {
      be_.dot(P_[i].data(), gk, S::kH, S::kGo);
      be_.update(idr_steps::Project{L_, i});
      be_.axpy(slot(S::kH), G_[i].data(), gk, S::kGo);
      be_.axpy(slot(S::kH), U_[i].data(), uk, S::kGo);
    }
    shadow_products(k, gk, L_.mu());
    be_.update(idr_steps::FillColumn{L_, k});
  }

  template <class Operator>
  void reduction_step(Operator& op, T* x, T* r) {
    using backend::slot;
    T* z = r;
    if (sh_.preconditioned) {
      z = z_.data();
      op.precondition(r, z);
    }
    T* t = t_.data();
    op.matvec(z, t);
    be_.dot(t, t, S::kTt);
    be_.dot(t, r, S::kTs);
    const double angle = sh_.s == 1 ? 0.0 : 0.7;
    if (angle > 0) be_.dot(r, r, S::kRn2);
    be_.update(idr_steps::Omega{angle});
    be_.axpy(slot(S::kOmega), z, x, S::kGo);  // before r changes: z may be r
    be_.axpy(slot(S::kOmega, -1.0), t, r, S::kGo);
    k_ = 0;
    first_cycle_ = false;
    // Residual replacement between cycles (see the top of the file): the
    // next cycle starts from f = P^T r, so nothing depends on the old r.
    be_.dot(r, r, S::kRn2, S::kGo);
    be_.update(idr_steps::Replace{});
    if (be_.any(S::kReplace)) {
      T* w = be_.lane_work(r, &replaced_);
      op.residual(x, w);
      be_.copy(w, r, S::kReplace);
    }
  }

  Backend& be_;
  IdrShape sh_;
  S L_;
  std::vector<Vec> P_, G_, U_;  // s vectors each
  Vec v_, t_, z_, replaced_;
  std::vector<T*> ptrs_;
  int k_ = 0;  // the step within the cycle: s is the minimal-residual step
  bool first_cycle_ = true;
  int shadow_lanes_ = -1;  // the block width P was built for
};

}  // namespace jaxamg
