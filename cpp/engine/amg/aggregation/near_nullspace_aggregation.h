// Smoothed aggregation fitted to near-null-space vectors ("x_smoothed_aggregation":
// 2 in an AGGREGATION scope), as PyAMG's smoothed_aggregation_solver, AMGCL's
// smoothed_aggregation and PETSc's GAMG build it:
//
//   1. aggregates of the level's nodes (k x k blocks for block_dim k): the
//      selector x_STANDARD (standard_aggregation.h, symmetric strength with
//      x_sa_strength_threshold, default 0, on block norms) or a pairwise selector
//      (SIZE_2/4/8, MULTI_PAIRWISE) on the block-norm graph;
//   2. P_tent and the coarse near null space B_c from a QR of B per aggregate
//      (tentative_prolongator.h): P_tent B_c = B;
//   3. P = (I - omega D^-1 A) P_tent with block Jacobi (prolongator_smoothing.h);
//   4. R = P^T, and the AMG forms A_c = P^T A P with block size m (the number
//      of vectors) and recurses with B_c.
//
// B of the finest level is the one given to LinearSolver::setup; without one
// it is the k unit vectors per node (each component constant), which for
// elasticity are the translations only.
//
// Resetup keeps the aggregates, P_tent and B_c; P is smoothed again with the
// new values (same pattern, since the pattern depends on A's pattern only).
#pragma once
#include <vector>

#include "amg/aggregation/aggregation_coarsening.h"
#include "amg/aggregation/standard_aggregation.h"
#include "amg/aggregation/tentative_prolongator.h"
#include "amg/coarsening.h"

namespace jaxamg::aggregation {

struct NearNullspaceOptions {
  bool standard = true;           // x_STANDARD selector; else pairwise with `pairwise`
  double strength_threshold = 0;  // theta of the symmetric strength (x_STANDARD)
  AggregationOptions pairwise;
};

template <class T>
class NearNullspaceAggregation : public Coarsening<T> {
 public:
  explicit NearNullspaceAggregation(NearNullspaceOptions opt) : opt_(opt) {}

  bool set_near_nullspace(const NearNullspace& B) override;
  void build(const CsrMatrix<T>& A, TransferOperators<T>& ops) override;
  void rebuild(const CsrMatrix<T>& A, TransferOperators<T>& ops) override;
  bool restriction_is_transpose() const override { return true; }
  const NearNullspace* coarse_near_nullspace() const override { return &tentative_.coarse; }
  Index coarse_block_dim(Index /*fine*/) const override { return tentative_.coarse_block_dim; }
  Index galerkin_block() const override { return tentative_.coarse_block_dim; }
  std::vector<std::pair<std::string, double>> phase_seconds() const override;

  const NodeAggregates& aggregates() const { return aggregates_; }
  const CsrMatrix<T>& tentative() const { return P_tent_; }
  const TentativeProlongator& tentative_info() const { return tentative_; }
  double omega() const { return omega_; }

 private:
  NodeAggregates select(const CsrMatrix<T>& A) const;

  NearNullspaceOptions opt_;
  NearNullspace B_;  // this level's vectors (empty: unit vectors per component)
  NodeAggregates aggregates_;
  CsrMatrix<T> P_tent_;
  TentativeProlongator tentative_;
  double omega_ = 0;
  bool built_ = false;
  Index built_nnz_ = 0;
  double seconds_aggregate_ = 0, seconds_tentative_ = 0, seconds_smooth_ = 0;
};

}  // namespace jaxamg::aggregation
