// Smoothed aggregation (an extension: "x_smoothed_aggregation": 1 in an
// AGGREGATION scope). The aggregates are the selector's (SIZE_2/4/8,
// MULTI_PAIRWISE); the tentative prolongation is the aggregate indicator, and
// one damped-Jacobi step with the filtered matrix smooths it:
//
//   P = (I - omega D_F^-1 A_F) P_tent,   omega = (4/3) / rho(D_F^-1 A_F),
//
// where A_F keeps the strong off-diagonal entries (a_ij^2 > eps^2 |a_ii a_jj|)
// and adds the weak ones to the diagonal, and rho is bounded by Gershgorin's
// row sums (an upper bound, so omega errs on the stable side). eps starts at
// 0.08 and halves per level, as in AMGCL. R = P^T; the AMG forms R A P.
//
// Near-null space: the constant vector. An unnormalised indicator keeps it
// exactly representable on every level (P_tent 1_c = 1), which is what a
// per-aggregate QR of the constant would give up to a diagonal scaling of
// the coarse unknowns; that scaling changes neither the range of P nor the
// convergence. Several near-null-space vectors (systems) need a QR per
// aggregate and a way to hand the coarse vectors to the next level.
//
// A row whose couplings are all weak and cancel its diagonal (a zero row sum)
// has a zero row in A_F and keeps its unsmoothed row of P.
//
// Aggregates of about 8 (SIZE_8, MULTI_PAIRWISE) suit it: on 3D Poisson the
// operator complexity is about 1.8, while SIZE_2's pairs make the smoothed
// P's stencils overlap so much that it exceeds 50.
//
// Resetup keeps the aggregates and the strong/weak classification, so P and
// R keep their patterns and only their values change.
#pragma once
#include <vector>

#include "amg/aggregation/aggregation_coarsening.h"

namespace jaxamg::aggregation {

template <class T>
class SmoothedAggregationCoarsening : public Coarsening<T> {
 public:
  SmoothedAggregationCoarsening(AggregationOptions opt, double strength_threshold)
      : opt_(opt), eps_(strength_threshold) {}

  void build(const CsrMatrix<T>& A, TransferOperators<T>& ops) override;
  void rebuild(const CsrMatrix<T>& A, TransferOperators<T>& ops) override;

  const Aggregates& aggregates() const { return aggregates_; }
  double strength_threshold() const { return eps_; }
  // The damping of the last build/rebuild.
  double omega() const { return omega_; }

 private:
  // Fills ops.P (pattern too unless same_pattern) and ops.R from A.
  void smooth(const CsrMatrix<T>& A, TransferOperators<T>& ops, bool same_pattern);

  AggregationOptions opt_;
  double eps_;
  double omega_ = 0;
  bool built_ = false;
  Index built_nnz_ = 0;
  Aggregates aggregates_;
  std::vector<char> strong_;  // per entry of A: off-diagonal entry kept in A_F
};

}  // namespace jaxamg::aggregation
