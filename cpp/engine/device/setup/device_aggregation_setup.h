// The unsmoothed aggregation AMG hierarchy built on the device from a device
// CSR matrix, with no host copy of any level's matrix: the same hierarchy as
// AmgSolver with AggregationCoarsening (the same aggregates on every level,
// coarse matrices bitwise equal to the host's Galerkin sums) for the
// selectors SIZE_2, SIZE_4, SIZE_8, MULTI_PAIRWISE and DUMMY on scalar
// matrices (block_dim 1).
//
// Levels follow AmgSolver::build_levels: a level is the coarsest when
// max_levels is reached or it has at most min_rows rows; a coarse level is
// kept only if it is smaller, not larger than coarsen_threshold times the
// level, and has at least min_rows rows.
//
// resetup() takes new values of the same pattern and recomputes only the
// coarse values through the kept Galerkin plans (AmgSolver's setup with
// structure reuse on every level).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "amg/aggregation/aggregation_coarsening.h"
#include "config/config.h"
#include "core/csr_matrix.h"
#include "device/setup/aggregate_galerkin.h"
#include "device/setup/device_aggregates.h"
#include "device/setup/device_hierarchy.h"
#include "device/setup/level_rules.h"

namespace jaxamg::cuda {

struct DeviceAggregationParams {
  aggregation::AggregationOptions aggregation;
  LevelRules levels;  // max_levels, min_rows, coarsen_threshold

  // From an AMG scope as the host reads it (make_aggregation_coarsening and
  // AmgSolver's level parameters). Throws NotSupported for an algorithm or
  // aggregation variant the device setup does not build (CLASSICAL,
  // x_smoothed_aggregation, x_STANDARD).
  static DeviceAggregationParams from_config(const Config& cfg, const std::string& scope);
};

// Wall-clock seconds of the phases of the last setup() (with timing on).
struct DeviceSetupTimings {
  double weights = 0;        // edge weight graphs
  double matching = 0;       // handshakes, merging, numbering, member lists
  double coarse_graphs = 0;  // collapsed graphs (MULTI_PAIRWISE: Galerkin matrices) between passes
  double galerkin = 0;       // symbolic + numeric coarse matrices, P and R
  double total = 0;
};

template <class T>
class DeviceAggregationSetup : public DeviceHierarchy<T> {
 public:
  struct Level {
    DeviceCsrView<T> A;  // level 0: the caller's arrays; below: ptr/col/val here
    DeviceArray<Index> ptr, col;
    DeviceArray<T> val;
    // Levels with a coarser one: the aggregates, P (row_ptr = 0..n, col =
    // agg.of) and R = P^T (row_ptr = agg.ptr, col = agg.members), all
    // values one, and the plan of the coarse matrix.
    DeviceAggregates agg;
    DeviceArray<Index> p_ptr;
    DeviceArray<T> ones;
    DeviceGalerkin<T> galerkin;
    Index rows() const { return A.rows; }
  };

  explicit DeviceAggregationSetup(DeviceAggregationParams params) : params_(params) {}

  // Full setup. A's arrays must stay valid (and unchanged unless a resetup
  // follows) while the hierarchy is used: level 0 is not copied.
  void setup(const DeviceCsrView<T>& A) override;
  // New values (and arrays) of the matrix given to setup(), same pattern:
  // the coarse values through the kept Galerkin plans.
  void resetup(const DeviceCsrView<T>& A) override;
  // The hierarchy of A^T for an adjoint solve (AmgSolver::transpose_levels):
  // every level matrix transposed, level 0 from `A` (the fine matrix of this
  // setup, with its current values), the same aggregates, P and R (the
  // transposed cycle restricts with P^T and prolongates with R^T = P). The
  // result owns all its arrays; it has no Galerkin plans, so build it again
  // after a resetup of this one rather than resetting it up.
  DeviceAggregationSetup transposed(const DeviceCsrView<T>& A) const;
  std::unique_ptr<DeviceHierarchy<T>> make_transposed(const DeviceCsrView<T>& A) const override {
    return std::make_unique<DeviceAggregationSetup>(transposed(A));
  }

  int num_levels() const override { return static_cast<int>(levels_.size()); }
  DeviceCsrView<T> matrix(int l) const override { return levels_.at(l).A; }
  // P: one entry of value one per row, in the column of its aggregate; R =
  // P^T lists each aggregate's members.
  DeviceCsrView<T> prolongation(int l) const override {
    const Level& L = levels_.at(l);
    return {L.rows(), L.agg.n, L.p_ptr.data(), L.agg.of.data(), L.ones.data()};
  }
  DeviceCsrView<T> restriction(int l) const override {
    const Level& L = levels_.at(l);
    return {L.agg.count, L.agg.n, L.agg.ptr.data(), L.agg.members.data(), L.ones.data()};
  }
  const Level& level(int l) const { return levels_.at(l); }
  const DeviceAggregationParams& params() const { return params_; }
  // With timing on, setup() synchronises the device after each phase to
  // time it (statistics only; off by default).
  void set_timing(bool on) { clock_.on = on; }
  const DeviceSetupTimings& timings() const { return timings_; }

  // A host copy of level l's aggregates, for tests.
  std::vector<Index> download_aggregates(int l) const;  // empty on the coarsest level

 private:
  DeviceAggregates select(const DeviceCsrView<T>& A);
  DeviceAggregationParams params_;
  std::vector<Level> levels_;
  PhaseClock clock_;
  DeviceSetupTimings timings_;
};

}  // namespace jaxamg::cuda
