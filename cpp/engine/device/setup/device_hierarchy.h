// The interface of an AMG hierarchy built on the device, whatever the
// coarsening: DeviceAmg and DeviceSetupSolver read the level matrices and
// the transfer operators through it, so aggregation
// (DeviceAggregationSetup) and classical AMG (DeviceClassicalSetup) share
// the cycle, the smoother setup and the solver around them.
#pragma once
#include <memory>

#include "core/csr_matrix.h"
#include "device/setup/device_aggregates.h"

namespace jaxamg::cuda {

template <class T>
class DeviceHierarchy {
 public:
  virtual ~DeviceHierarchy() = default;

  // Full setup. A's arrays must stay valid (and unchanged unless a resetup
  // follows) while the hierarchy is used: level 0 is not copied.
  virtual void setup(const DeviceCsrView<T>& A) = 0;
  // New values (and arrays) of the matrix given to setup(), same pattern;
  // what is kept follows the coarsening's structure reuse.
  virtual void resetup(const DeviceCsrView<T>& A) = 0;
  // The hierarchy of A^T for an adjoint solve (AmgSolver::transpose_levels):
  // every level matrix transposed, level 0 from `A` (the fine matrix of this
  // setup with its current values), the same transfers (R = P^T, so the
  // transposed cycle's P^T and R^T are R and P).
  virtual std::unique_ptr<DeviceHierarchy<T>> make_transposed(const DeviceCsrView<T>& A) const = 0;

  virtual int num_levels() const = 0;
  // Level l's matrix (rows x rows).
  virtual DeviceCsrView<T> matrix(int l) const = 0;
  // Levels with a coarser one: P_l (rows_l x rows_{l+1}) and R_l
  // (rows_{l+1} x rows_l).
  virtual DeviceCsrView<T> prolongation(int l) const = 0;
  virtual DeviceCsrView<T> restriction(int l) const = 0;

  // A host copy of level l's matrix (tests, the dense coarse solve).
  CsrMatrix<T> download_matrix(int l) const;
};

// A host copy of a device CSR matrix with `cols` columns.
template <class T>
CsrMatrix<T> download_csr(const DeviceCsrView<T>& M, Index cols);

}  // namespace jaxamg::cuda
