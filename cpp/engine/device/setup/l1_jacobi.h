// The diagonal sweeps' scaled inverse diagonals computed on the device from
// a device matrix:
//   JACOBI_L1 (host: solvers/smoothers/jacobi_l1.cc, same expression in
//   double): dinv[i] = w / (sign(a_ii) * sum_j |a_ij|);
//   BLOCK_JACOBI with block_dim 1 (host: block_jacobi.cc, the same
//   operations in T): dinv[i] = (1 / a_ii) * w.
#pragma once
#include "device/setup/device_aggregates.h"

namespace jaxamg::cuda {

// Throws InvalidInput naming the first all-zero row (the host's message).
template <class T>
void l1_scaled_inverse_diagonal(const DeviceCsrView<T>& A, double w, T* dinv);

// Throws InvalidInput naming the first row without a stored or with a zero
// diagonal (the host's message).
template <class T>
void jacobi_scaled_inverse_diagonal(const DeviceCsrView<T>& A, T w, T* dinv);

}  // namespace jaxamg::cuda
