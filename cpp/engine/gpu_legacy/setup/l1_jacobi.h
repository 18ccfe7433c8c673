// JACOBI_L1's scaled inverse diagonal computed on the device from a device
// matrix (host: solvers/smoothers/jacobi_l1.cc, same expression in double):
//   dinv[i] = w / (sign(a_ii) * sum_j |a_ij|).
#pragma once
#include "gpu_legacy/setup/device_aggregates.h"

namespace jaxamg::cuda {

// Throws InvalidInput naming the first all-zero row (the host's message).
template <class T>
void l1_scaled_inverse_diagonal(const DeviceCsrView<T>& A, double w, T* dinv);

}  // namespace jaxamg::cuda
