// A float32 AMG hierarchy (MixedPrecisionAmg, "x_amg_precision": "FLOAT")
// applied inside a float64 device solve: a DeviceAmg<float> of the float32
// hierarchy and the conversions at its boundary, step for step as
// MixedPrecisionAmg::solve_iteration on the host: from a zero guess
// x = C(float(b)); otherwise r = b - A x in float64 with the outer solve's
// fine matrix, x += C(float(r)).
#pragma once
#include <cusparse.h>

#include <string>

#include "amg/mixed_precision_amg.h"
#include "device/device_amg.h"

namespace jaxamg::cuda {

class DeviceMixedAmg {
 public:
  // Empty if `amg`'s float32 hierarchy runs on the device; otherwise why not.
  static std::string unsupported(const MixedPrecisionAmg& amg);

  // `A` is the float64 fine matrix on the device (owned by the caller, alive
  // as long as this object).
  DeviceMixedAmg(cusparseHandle_t handle, const MixedPrecisionAmg& amg, const DeviceCsr<double>& A);
  // The float32 hierarchy built on the device from float32(A) (DeviceHierarchy),
  // with the cycle, smoother and coarse solver of the AMG scope `scope` of
  // ctx.config (as DeviceAmg's constructor from a setup).
  DeviceMixedAmg(cusparseHandle_t handle, const DeviceHierarchy<float>& setup, SolverContext& ctx,
                 const std::string& scope, const DeviceCsr<double>& A);

  // MixedPrecisionAmg's solve from a zero guess with monitoring off, as a
  // preconditioner calls it: max_iters steps (x = 0 for max_iters 0).
  void precondition(const double* b, double* x, cudaStream_t s);
  // One step (MixedPrecisionAmg::solve_iteration).
  void cycle(const double* b, double* x, bool x_is_zero, cudaStream_t s);

  // Bytes moved since reset_traffic: the conversions, the float64
  // residuals and the float32 cycles.
  double traffic_bytes() { return traffic_.bytes + amg_.traffic().bytes; }
  void reset_traffic() { traffic_.bytes = amg_.traffic().bytes = 0; }

 private:
  cusparseHandle_t handle_;
  const DeviceCsr<double>& A_;
  DeviceAmg<float> amg_;
  int max_iters_;
  std::size_t n_;
  DeviceArray<float> b_lo_, x_lo_;
  DeviceArray<double> r_hi_;  // float64 residual of a refinement step
  Traffic traffic_;
};

}  // namespace jaxamg::cuda
