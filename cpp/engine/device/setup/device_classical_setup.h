// The classical (Ruge-Stueben family) AMG hierarchy built on the device from
// a device CSR matrix, with no host copy of any level's matrix: the host's
// AmgSolver with ClassicalCoarsening for the PMIS selector with the D1 or
// D2 interpolator, and on its first aggressive_levels levels AGGRESSIVE_PMIS
// with D2 or D2_TWO_STAGE (strength AHAT or ALL, max_row_sum, truncation),
// on scalar matrices. Every level's strength mask and splitting are the
// host's, and so is P entry for entry (two-stage P to rounding; see
// device_classical.h); the coarse matrices R A P come from cuSPARSE's
// SpGEMM, whose sums run in another order than the host's, so they agree
// with the host's to rounding.
//
// Levels follow AmgSolver::build_levels, as DeviceAggregationSetup. A
// resetup builds the hierarchy anew (structure reuse keeps the host's
// pattern of P and recomputes its weights, which is left to the host
// setup: DeviceSetupSolver routes it there).
#pragma once
#include <cusparse.h>

#include <memory>
#include <string>
#include <vector>

#include "amg/classical/classical_coarsening.h"
#include "config/config.h"
#include "device/setup/device_hierarchy.h"
#include "device/setup/level_rules.h"

namespace jaxamg::cuda {

struct DeviceClassicalParams {
  classical::ClassicalParams classical;   // levels from aggressive_levels on (seed: level 0's)
  classical::ClassicalParams aggressive;  // the first aggressive_levels levels
  int aggressive_levels = 0;
  LevelRules levels;  // max_levels, min_rows, coarsen_threshold

  // The parameters of level l, as classical_params(cfg, scope, l) gives them.
  classical::ClassicalParams level(int l) const;

  // From an AMG scope as the host reads it (classical_params and AmgSolver's
  // level parameters). Throws NotSupported for what the device does not
  // build: selectors other than PMIS (and AGGRESSIVE_PMIS), interpolators
  // other than D1 and D2 (and D2_TWO_STAGE on aggressive levels).
  static DeviceClassicalParams from_config(const Config& cfg, const std::string& scope);
};

// Wall-clock seconds of the phases of the last setup() (with timing on).
struct DeviceClassicalTimings {
  double strength = 0, selection = 0, interpolation = 0, galerkin = 0, total = 0;
};

template <class T>
class DeviceClassicalSetup : public DeviceHierarchy<T> {
 public:
  struct Level {
    DeviceCsrView<T> A;  // level 0: the caller's arrays; below: ptr/col/val here
    DeviceArray<Index> ptr, col;
    DeviceArray<T> val;
    // Levels with a coarser one: P (rows x coarse rows) and R = P^T.
    DeviceArray<Index> p_ptr, p_col, r_ptr, r_col;
    DeviceArray<T> p_val, r_val;
    Index p_nnz = 0;
    DeviceArray<int8_t> cf;  // the C/F splitting (kept for tests and statistics)
    Index rows() const { return A.rows; }
  };

  explicit DeviceClassicalSetup(DeviceClassicalParams params);
  ~DeviceClassicalSetup() override;
  DeviceClassicalSetup(const DeviceClassicalSetup&) = delete;
  DeviceClassicalSetup& operator=(const DeviceClassicalSetup&) = delete;

  void setup(const DeviceCsrView<T>& A) override;
  // A full setup from the new values (see the file comment).
  void resetup(const DeviceCsrView<T>& A) override;
  std::unique_ptr<DeviceHierarchy<T>> make_transposed(const DeviceCsrView<T>& A) const override;

  int num_levels() const override { return static_cast<int>(levels_.size()); }
  DeviceCsrView<T> matrix(int l) const override { return levels_.at(l).A; }
  DeviceCsrView<T> prolongation(int l) const override;
  DeviceCsrView<T> restriction(int l) const override;

  const DeviceClassicalParams& params() const { return params_; }
  // With timing on, setup() synchronises the device after each phase to
  // time it (statistics only; off by default).
  void set_timing(bool on) { clock_.on = on; }
  const DeviceClassicalTimings& timings() const { return timings_; }

  // Host copies for tests: level l's C/F splitting (classical::kCoarse /
  // kFine per point) and its P; empty on the coarsest level.
  std::vector<int8_t> download_splitting(int l) const;
  CsrMatrix<T> download_prolongation(int l) const;

 private:
  DeviceClassicalParams params_;
  cusparseHandle_t handle_ = nullptr;
  std::vector<Level> levels_;
  PhaseClock clock_;
  DeviceClassicalTimings timings_;
};

}  // namespace jaxamg::cuda
