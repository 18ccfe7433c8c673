// Restarted GMRES(m) and flexible GMRES written once over a backend (the CPU
// backend, the CPU lanes backend and the CUDA backend; see backend/slots.h
// for how a backend keeps the scalars). The host solvers (gmres.cc,
// fgmres.cc), the batched solves of several right-hand sides
// (batched/batched_krylov.cc) and the device solves (device/outer_krylov.cu)
// run this same code, so a lane of a batch is a one-lane solve step for step.
//
// One iteration is one Arnoldi step. Each cycle starts from the true
// residual r = b - A x (beta = |r|, v_0 = r / beta); each step
// orthogonalises A M^{-1} v_j against the basis by modified Gram-Schmidt
// (with a second pass when cancellation was severe), rotates the new
// Hessenberg column into triangular form and updates the rotated right-hand
// side g, whose last entry |g_{j+1}| is the residual norm of the
// least-squares iterate. With L1/LMAX norms (or truncated FGMRES) the
// residual vector is carried by its own recurrence instead.
//
//  - GMRES is right preconditioned with a fixed M: the correction
//    M^{-1} V y is formed once per cycle (one extra application of M) and
//    only V is stored.
//  - FGMRES stores z_j = M_j^{-1} v_j, so M may change between applications;
//    the correction is Z y. A window k < m (gmres_krylov_dim) bounds the
//    memory: each new vector is orthogonalised against the last k basis
//    vectors only, and x is updated at every step from k + 1 stored
//    directions (a direct, quasi-minimal-residual form of truncated GMRES).
//
// Every lane has its own Arnoldi step j (a slot): a lane whose cycle closed
// early (an invariant subspace) or that restarted after a rejected true
// residual goes on from j = 0 while the others continue. The basis vector a
// lane reads or writes then depends on the lane, which the backend's
// gather/scatter resolve; Gram-Schmidt and the corrections run over the
// rows of the widest lane, masked per lane. The small dense part (the
// triangular factor R, the rotations, g and y) is kept in double, in the
// lane's slots, whatever the vector type.
//
// Operator (the caller's): matvec(x, y) sets y = A x, precondition(r, z)
// sets z = M^-1 r, residual(x, r) sets r = b - A x for the solve's b.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/slots.h"
#include "solvers/solver.h"

namespace jaxamg {

// The shape of a (F)GMRES solve.
struct GmresShape {
  int cycle = 1;          // m: Arnoldi steps per restart
  int window = 1;         // FGMRES: vectors orthogonalised against (window < cycle: truncated)
  bool flexible = false;  // FGMRES
  bool preconditioned = false;
  bool truncated() const { return window < cycle; }
};

// The scalar slots of one lane: named scalars, then the arrays of the
// least-squares problem, whose length depends on the cycle.
struct GmresSlots {
  enum : int {
    kGo = backend::kGo,
    kStop,       // the recurrence cannot continue: breakdown
    kConverged,  // the cycle started from r = 0
    kInit,       // set by the caller: (re)start this lane from its residual
    kFirst,      // the first cycle starts from the caller's r
    kStart,      // this lane starts a cycle in this iteration
    kRecompute,  // ... from a recomputed residual
    kJ,          // the Arnoldi step within the cycle
    kLo, kRlo,   // rows orthogonalised against / rotated (truncated FGMRES)
    kFrom, kTo,  // the range of a combination of basis vectors
    kBeta, kInvBeta, kHn, kH2, kD, kRow, kReorth, kInvariant, kScaleW, kInvHn,
    kS2, kCg, kInvDiag, kGj, kEnd, kUpdate,
    kEst,        // the residual norm from g, -1 before the first cycle
    kCount
  };
  int m;      // the cycle length
  bool full;  // R is kept (not truncated)
  // Offsets: the new column by row (m + 2), g (m + 1), the rotations' m
  // cosines and m sines, y or the truncated step's coefficients (m + 1),
  // then R (column-major, leading dimension m + 1).
  JAXAMG_HOST_DEVICE int col() const { return kCount; }
  JAXAMG_HOST_DEVICE int g() const { return col() + m + 2; }
  JAXAMG_HOST_DEVICE int c() const { return g() + m + 1; }
  JAXAMG_HOST_DEVICE int s() const { return c() + m; }
  JAXAMG_HOST_DEVICE int y() const { return s() + m; }
  JAXAMG_HOST_DEVICE int r() const { return y() + m + 1; }
  JAXAMG_HOST_DEVICE int count() const { return r() + (full ? (m + 1) * m : 0); }
};

namespace gmres_steps {
using S = GmresSlots;

struct Init {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kInit] == 0.0) return;
    s[S::kJ] = 0.0;
    s[S::kFirst] = 1.0;
    s[S::kEst] = -1.0;
    s[S::kInit] = 0.0;
  }
};
struct Begin {
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    s[S::kGo] = 1.0;
    s[S::kStop] = s[S::kConverged] = s[S::kInvariant] = s[S::kScaleW] = s[S::kEnd] = 0.0;
    s[S::kStart] = s[S::kJ] == 0.0 ? 1.0 : 0.0;
    s[S::kRecompute] = s[S::kStart] != 0.0 && s[S::kFirst] == 0.0 ? 1.0 : 0.0;
  }
};
// g = beta e_1 from beta^2 in kBeta; r = 0 is the solution, a non-finite
// residual a breakdown.
struct StartCycle {
  S L;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kStart] == 0.0) return;
    s[S::kFirst] = 0.0;
    const double beta = sqrt(s[S::kBeta]);
    s[S::kEst] = beta;
    if (beta == 0.0 || !(beta - beta == 0.0)) {
      s[beta == 0.0 ? S::kConverged : S::kStop] = 1.0;
      s[S::kGo] = s[S::kStart] = 0.0;
      return;
    }
    s[S::kInvBeta] = 1.0 / beta;
    for (int i = 0; i <= L.m; ++i) s[L.g() + i] = 0.0;
    s[L.g()] = beta;
  }
};
// The rows of column j: orthogonalised against lo..j, rotated from rlo.
struct Column {
  S L;
  int window;
  bool truncated;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kGo] == 0.0) return;
    const int j = static_cast<int>(s[S::kJ]);
    const int lo = truncated ? (j - window + 1 > 0 ? j - window + 1 : 0) : 0;
    const int rlo = truncated ? (j - window > 0 ? j - window : 0) : 0;
    s[S::kLo] = lo;
    s[S::kRlo] = rlo;
    if (lo > rlo) s[L.col() + rlo] = 0.0;
    s[S::kH2] = 0.0;
  }
};
// kRow: row i of column j is orthogonalised in this lane (for the lanes
// selected by `mask`).
struct Row {
  int i, mask;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    s[S::kRow] = backend::selected(s, mask) && s[S::kLo] <= i && i <= s[S::kJ] ? 1.0 : 0.0;
  }
};
struct AddSquare {
  S L;
  int i;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kRow] != 0.0) s[S::kH2] += s[L.col() + i] * s[L.col() + i];
  }
};
struct AddSecondPass {
  S L;
  int i;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kRow] != 0.0) s[L.col() + i] += s[S::kD];
  }
};
// hn = |w| from |w|^2; a second pass when most of w lay in the basis
// (|w_after|^2 < |w_before|^2 / 2, with |w_before|^2 = |h|^2 + |w_after|^2):
// the remainder is then dominated by rounding and still leans on the basis
// (Daniel-Gragg-Kaufman-Stewart). Near an invariant subspace this is what
// lets the method see that nothing new is left.
struct Norm {
  bool test;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (test) {
      s[S::kReorth] = 0.0;
      if (s[S::kGo] == 0.0) return;
      s[S::kHn] = sqrt(s[S::kHn]);
      const double hn = s[S::kHn];
      if (hn * hn < 0.5 * (s[S::kH2] + hn * hn)) s[S::kReorth] = 1.0;
    } else if (s[S::kReorth] != 0.0) {
      s[S::kHn] = sqrt(s[S::kHn]);
    }
  }
};
// Applies the earlier rotations to column j, makes rotation j from
// (h_jj, hn) and rotates g. A vanishing rotated diagonal (the new direction
// adds nothing: singular Hessenberg matrix) stops the lane; hn ~ 0 is the
// "happy" breakdown that closes the cycle. Sets the coefficients of the
// vector updates that follow.
struct Rotate {
  S L;
  double unit;  // the unit roundoff of the vector type
  bool truncated, track;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kGo] == 0.0) return;
    const int j = static_cast<int>(s[S::kJ]);
    const int lo = static_cast<int>(s[S::kLo]), rlo = static_cast<int>(s[S::kRlo]);
    double* col = s + L.col();
    double* g = s + L.g();
    double* c = s + L.c();
    double* sn = s + L.s();
    const double hn = s[S::kHn];
    double col2 = hn * hn;
    for (int i = lo; i <= j; ++i) col2 += col[i] * col[i];
    const double tiny = unit * sqrt(col2);
    for (int i = rlo; i < j; ++i) {
      const double t = c[i] * col[i] + sn[i] * col[i + 1];
      col[i + 1] = -sn[i] * col[i] + c[i] * col[i + 1];
      col[i] = t;
    }
    const double d = hypot(col[j], hn);
    if (d == 0.0 || !(d - d == 0.0)) {
      s[S::kGo] = 0.0;
      s[S::kStop] = 1.0;
      return;
    }
    c[j] = col[j] / d;
    sn[j] = hn / d;
    col[j] = d;
    if (!(d > tiny)) {
      s[S::kGo] = 0.0;
      s[S::kStop] = 1.0;
      return;
    }
    g[j + 1] = -sn[j] * g[j];
    g[j] = c[j] * g[j];
    s[S::kEst] = fabs(g[j + 1]);
    const bool invariant = !(hn > tiny);
    s[S::kInvariant] = invariant ? 1.0 : 0.0;
    s[S::kScaleW] = invariant ? 0.0 : 1.0;
    s[S::kInvHn] = 1.0 / hn;
    if (L.full) {
      for (int i = 0; i <= j; ++i) s[L.r() + j * (L.m + 1) + i] = col[i];
    }
    if (truncated) {
      // p_j = (z_j - sum_i R(i,j) p_i) / R(j,j); x += g_j p_j.
      for (int i = rlo; i < j; ++i) s[L.y() + i] = -col[i];
      s[S::kFrom] = rlo;
      s[S::kTo] = j;
      s[S::kInvDiag] = 1.0 / col[j];
      s[S::kGj] = g[j];
    }
    if (track) {
      s[S::kS2] = sn[j] * sn[j];
      s[S::kCg] = c[j] * g[j + 1];
    }
  }
};
struct Advance {
  int cycle;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kGo] == 0.0) return;
    s[S::kJ] += 1.0;
    s[S::kEnd] = s[S::kJ] == cycle || s[S::kInvariant] != 0.0 ? 1.0 : 0.0;
  }
};
// Lanes selected by `mask` whose iterate waits for R y = g (full storage).
struct Pending {
  int mask;
  bool full;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    s[S::kUpdate] = full && backend::selected(s, mask) && s[S::kJ] > 0.0 ? 1.0 : 0.0;
  }
};
// y = R^{-1} g over the first j columns; the combination then runs over 0..j.
struct BackSolve {
  S L;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (s[S::kUpdate] == 0.0) return;
    const int k = static_cast<int>(s[S::kJ]);
    const int ld = L.m + 1;
    double* y = s + L.y();
    const double* R = s + L.r();
    for (int i = 0; i < k; ++i) y[i] = s[L.g() + i];
    for (int i = k - 1; i >= 0; --i) {
      double v = y[i];
      for (int j = i + 1; j < k; ++j) v -= R[i + j * ld] * y[j];
      y[i] = v / R[i + i * ld];
    }
    s[S::kFrom] = 0.0;
    s[S::kTo] = k;
  }
};
// A lane whose cycle ended (or whose iterate was just updated) starts the
// next from j = 0.
struct Close {
  int mask;
  JAXAMG_HOST_DEVICE void operator()(double* s) const {
    if (backend::selected(s, mask)) s[S::kJ] = 0.0;
  }
};
// kRow: some lane's step is at least j.
struct AtLeast {
  int j;
  JAXAMG_HOST_DEVICE void operator()(double* s) const { s[S::kRow] = s[S::kJ] >= j ? 1.0 : 0.0; }
};
}  // namespace gmres_steps

template <class Backend>
class GmresMethod {
 public:
  using T = typename Backend::value_type;
  using Vec = typename Backend::vector_type;
  using S = GmresSlots;

  // The slot layout of a shape (the backend is made with layout.count()).
  static S layout(const GmresShape& sh) { return S{sh.cycle, !sh.truncated()}; }

  // track: carry the residual vector r by its recurrence (the caller's
  // loop measures it); otherwise r is only recomputed at restarts.
  GmresMethod(Backend& be, const GmresShape& shape, bool track)
      : be_(be), sh_(shape), L_(layout(shape)), track_(track) {
    const bool t = sh_.truncated();
    vslots_ = t ? sh_.window + 1 : sh_.cycle + 1;
    zslots_ = !sh_.flexible ? 0 : t ? sh_.window + 1 : (sh_.preconditioned ? sh_.cycle : 0);
    V_.resize(vslots_);
    Z_.resize(zslots_);
    vtab_.assign(sh_.cycle + 1, nullptr);
    ztab_.assign(sh_.cycle + 1, nullptr);
  }

  const GmresShape& shape() const { return sh_; }
  void set_tracking(bool track) { track_ = track; }

  // Starts the lanes whose kInit slot is set: the next iteration begins a
  // cycle from their residual r. Each lane has its own Arnoldi step, so
  // whether every lane starts (`every`) does not matter.
  void init(const T* /*r*/, bool /*every*/ = true) { be_.update(gmres_steps::Init{}); }
  // A lane may start while the others go on.
  bool can_start_lanes() const { return true; }

  // One Arnoldi step on x and r (a new cycle first where j = 0).
  template <class Operator>
  void iteration(Operator& op, T* x, T* r) {
    be_.update(gmres_steps::Begin{});
    if (be_.any(S::kStart)) start_cycle(op, x, r);
    reach(hi_ + 1);
    if (!be_.any(S::kGo)) return tighten();

    // w = A M^{-1} v_j into v_{j+1}'s place (z_j's too for FGMRES).
    const T* vj = be_.gather(vtab_.data(), S::kJ, 0, &gv_, S::kGo, true);
    T* w = be_.gather(vtab_.data(), S::kJ, 1, &gw_, S::kGo, false);
    T* z = const_cast<T*>(vj);
    if (zslots_ > 0) {
      z = be_.gather(ztab_.data(), S::kJ, 0, &gz_, S::kGo, false);
      op.precondition(vj, z);
    } else if (sh_.preconditioned && !sh_.flexible) {
      if (z_.empty()) z_ = be_.make_vector();
      z = z_.data();
      op.precondition(vj, z);
    }
    op.matvec(z, w);

    orthogonalize(w);
    be_.update(gmres_steps::Rotate{L_, unit_roundoff(), sh_.truncated(), track_});
    be_.scale(backend::slot(S::kInvHn), w, S::kScaleW);
    if (sh_.truncated()) {
      be_.combine(ztab_.data(), L_.y(), S::kFrom, z, S::kGo);
      be_.scale(backend::slot(S::kInvDiag), z, S::kGo);
      be_.axpy(backend::slot(S::kGj), z, x, S::kGo);
    }
    be_.scatter(w, vtab_.data(), S::kJ, 1, S::kGo);
    if (zslots_ > 0) be_.scatter(z, ztab_.data(), S::kJ, 0, S::kGo);
    if (track_) {
      // r_j = s_j^2 r_{j-1} + c_j g_{j+1} v_{j+1}: the residual of the
      // least-squares iterate without forming it (exact for any basis with
      // A Z = V H); v_{j+1} is unused when the space is invariant.
      be_.scale(backend::slot(S::kS2), r, S::kInvariant);
      be_.axpby(backend::slot(S::kCg), w, backend::slot(S::kS2), r, S::kScaleW);
    }
    be_.update(gmres_steps::Advance{sh_.cycle});
    if (be_.any(S::kEnd)) {
      update_solution(op, x, S::kEnd);
      be_.update(gmres_steps::Close{S::kEnd});
    }
    tighten();
  }

  // At the end of the solve of the lanes `mask` selects (a slot the caller
  // sets, or kAllLanes): the iterate of a cycle in progress, then j = 0.
  template <class Operator>
  void finalize(Operator& op, T* x, int mask) {
    update_solution(op, x, mask);
    be_.update(gmres_steps::Close{mask});
    tighten();
  }

  // How a lane's iteration ended.
  static IterationResult outcome(const double* s) {
    if (s[S::kConverged] != 0.0) return IterationResult::kConverged;
    return s[S::kStop] != 0.0 ? IterationResult::kBreakdown : IterationResult::kContinue;
  }
  // The L2 residual norm from the rotations, where g keeps it (lane slots s).
  bool l2_residual_norm(const double* s, double* norm) const {
    if (sh_.truncated() || s[S::kEst] < 0) return false;
    *norm = s[S::kEst];
    return true;
  }

  // The method's vectors that hold a lane's state across iterations.
  std::vector<Vec*> state_vectors() {
    std::vector<Vec*> out;
    for (Vec& v : V_) out.push_back(&v);
    for (Vec& v : Z_) out.push_back(&v);
    return out;
  }
  // After a lanes backend dropped lanes (from `before` lanes), which swaps
  // the storage of the state vectors: the step-to-vector maps are rebuilt.
  void lanes_dropped(int /*before*/) {
    std::fill(vtab_.begin(), vtab_.end(), nullptr);
    std::fill(ztab_.begin(), ztab_.end(), nullptr);
  }
  // The n-vectors allocated so far (basis, directions, GMRES's z); none
  // before the first iteration.
  std::size_t stored_vectors() const {
    std::size_t k = z_.empty() ? 0 : 1;
    for (const Vec& v : V_) k += v.empty() ? 0 : 1;
    for (const Vec& v : Z_) k += v.empty() ? 0 : 1;
    return k;
  }

 private:
  static constexpr double unit_roundoff() {
    return sizeof(T) == sizeof(float) ? 5.960464477539063e-08 : 1.1102230246251565e-16;
  }

  // r = b - A x after the first cycle, beta = |r|, v_0 = r / beta.
  template <class Operator>
  void start_cycle(Operator& op, const T* x, T* r) {
    if (be_.any(S::kRecompute)) {
      T* t = be_.lane_work(r, &gr_);
      op.residual(x, t);
      be_.copy(t, r, S::kRecompute);
    }
    be_.dot(r, r, S::kBeta, S::kStart);
    be_.update(gmres_steps::StartCycle{L_});
    reach(0);
    be_.copy(r, vtab_[0], S::kStart);
    be_.scale(backend::slot(S::kInvBeta), vtab_[0], S::kStart);
  }

  // Modified Gram-Schmidt of w against v_lo..v_j (the coefficients in the
  // column slots), with a second pass where the first cancelled.
  void orthogonalize(T* w) {
    be_.update(gmres_steps::Column{L_, sh_.window, sh_.truncated()});
    for (int i = 0; i <= hi_; ++i) {
      be_.update(gmres_steps::Row{i, S::kGo});
      if (!be_.any(S::kRow)) continue;
      be_.dot(w, vtab_[i], L_.col() + i, S::kRow);
      be_.axpy(backend::slot(L_.col() + i, -1.0), vtab_[i], w, S::kRow);
      be_.update(gmres_steps::AddSquare{L_, i});
    }
    be_.dot(w, w, S::kHn, S::kGo);
    be_.update(gmres_steps::Norm{true});
    if (!be_.any(S::kReorth)) return;
    for (int i = 0; i <= hi_; ++i) {
      be_.update(gmres_steps::Row{i, S::kReorth});
      if (!be_.any(S::kRow)) continue;
      be_.dot(w, vtab_[i], S::kD, S::kRow);
      be_.axpy(backend::slot(S::kD, -1.0), vtab_[i], w, S::kRow);
      be_.update(gmres_steps::AddSecondPass{L_, i});
    }
    be_.dot(w, w, S::kHn, S::kReorth);
    be_.update(gmres_steps::Norm{false});
  }

  // Full storage, for the lanes `mask` selects with j > 0: x += M^{-1} V y
  // (GMRES) or x += Z y (FGMRES), R y = g over the first j columns.
  template <class Operator>
  void update_solution(Operator& op, T* x, int mask) {
    be_.update(gmres_steps::Pending{mask, !sh_.truncated()});
    if (!be_.any(S::kUpdate)) return;
    be_.update(gmres_steps::BackSolve{L_});
    if (sh_.flexible) {
      be_.combine(zslots_ > 0 ? ztab_.data() : vtab_.data(), L_.y(), S::kFrom, x, S::kUpdate);
    } else if (sh_.preconditioned) {
      be_.fill_zero(z_.data());
      be_.combine(vtab_.data(), L_.y(), S::kFrom, z_.data(), S::kUpdate);
      // The basis is rebuilt at the next restart, so a one-lane backend
      // lets v_0 take M^{-1} z.
      T* t = be_.lane_work(vtab_[0], &gr_);
      op.precondition(z_.data(), t);
      be_.axpy(backend::constant(1.0), t, x, S::kUpdate);
    } else {
      be_.combine(vtab_.data(), L_.y(), S::kFrom, x, S::kUpdate);
    }
  }

  // v_0..v_i and z_0..z_{i-1} usable (allocated when a step first reaches
  // them).
  void reach(int i) {
    i = std::min(i, sh_.cycle);
    for (int k = 0; k <= i; ++k) {
      if (!vtab_[k]) vtab_[k] = allocated(V_[k % vslots_]);
      if (zslots_ > 0 && k < i && !ztab_[k]) ztab_[k] = allocated(Z_[k % zslots_]);
    }
  }
  T* allocated(Vec& v) {
    if (v.empty()) v = be_.make_vector();
    return v.data();
  }
  // hi_: the largest step j of any lane (a bound where the backend cannot
  // tell; the masks keep the loops exact).
  void tighten() {
    hi_ = std::min(hi_ + 1, sh_.cycle - 1);
    while (hi_ > 0) {
      be_.update(gmres_steps::AtLeast{hi_});
      if (be_.any(S::kRow)) break;
      --hi_;
    }
  }

  Backend& be_;
  GmresShape sh_;
  S L_;
  bool track_;
  int vslots_ = 0, zslots_ = 0;
  int hi_ = 0;
  // V_: v_0..v_m (truncated: a ring of window + 1); Z_: z_0..z_{m-1} (FGMRES
  // with M; truncated: a ring). vtab_/ztab_ map a step to its vector.
  std::vector<Vec> V_, Z_;
  std::vector<T*> vtab_, ztab_;
  Vec z_;                    // GMRES with M: M^{-1} v_j, then M^{-1} V y's argument
  Vec gv_, gw_, gz_, gr_;    // lanes' gathered vectors (unused by a one-lane backend)
};

}  // namespace jaxamg
