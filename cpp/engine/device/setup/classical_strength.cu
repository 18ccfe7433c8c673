// Strength of connection on the device: one thread per row, the host's
// strength_graph arithmetic (amg/classical/strength.cc) in the same order,
// so the mask is the host's bit for bit.
#include <cmath>

#include "backend/cuda/setup/launch.cuh"
#include "device/setup/device_classical.h"

namespace jaxamg::cuda {

namespace {

using classical::StrengthKind;

template <class T>
__global__ void strength_rows(Index n, const Index* __restrict__ ptr,
                              const Index* __restrict__ col, const T* __restrict__ val,
                              StrengthKind kind, double theta, double max_row_sum,
                              Index* __restrict__ dpos, uint8_t* __restrict__ strong,
                              Index* __restrict__ depends, Index* __restrict__ influences) {
  const Index i = global_id();
  if (i >= n) return;
  const Index b = ptr[i], e = ptr[i + 1];
  Index lo = b, hi = e;  // columns ascend: the diagonal by bisection
  while (lo < hi) {
    const Index m = lo + (hi - lo) / 2;
    if (col[m] < i) {
      lo = m + 1;
    } else {
      hi = m;
    }
  }
  const Index d = lo < e && col[lo] == i ? lo : -1;
  dpos[i] = d;
  const double diag = d >= 0 ? static_cast<double>(val[d]) : 0.0;
  Index cnt = 0;
  if (max_row_sum < 1.0) {
    double sum = 0;
    for (Index k = b; k < e; ++k) sum += static_cast<double>(val[k]);
    if (fabs(sum) > max_row_sum * fabs(diag)) {
      depends[i] = 0;
      return;
    }
  }
  if (kind == StrengthKind::kAll) {
    for (Index k = b; k < e; ++k) {
      if (col[k] != i && val[k] != T(0)) {
        strong[k] = 1;
        ++cnt;
        atomicAdd(influences + col[k], 1);
      }
    }
  } else {
    const double s = diag < 0 ? 1.0 : -1.0;
    double m = 0;
    for (Index k = b; k < e; ++k) {
      const double v = s * static_cast<double>(val[k]);
      if (col[k] != i && m < v) m = v;
    }
    if (m > 0) {
      const double cut = theta * m;
      for (Index k = b; k < e; ++k) {
        const double v = s * static_cast<double>(val[k]);
        if (col[k] != i && v > 0 && v >= cut) {
          strong[k] = 1;
          ++cnt;
          atomicAdd(influences + col[k], 1);
        }
      }
    }
  }
  depends[i] = cnt;
}

}  // namespace

template <class T>
DeviceStrength device_strength(const DeviceCsrView<T>& A, const classical::StrengthParams& p) {
  const Index n = A.rows;
  DeviceStrength S;
  S.diag_pos.resize(n);
  S.strong.resize(A.nnz);
  S.depends.resize(n);
  S.influences.resize(n);
  if (n == 0) return S;
  if (A.nnz > 0) {
    check(cudaMemsetAsync(S.strong.data(), 0, A.nnz * sizeof(uint8_t)), "cudaMemsetAsync (strength)");
  }
  check(cudaMemsetAsync(S.influences.data(), 0, n * sizeof(Index)), "cudaMemsetAsync (strength)");
  strength_rows<T><<<blocks(n), kBlock>>>(n, A.ptr, A.col, A.val, p.kind, p.theta, p.max_row_sum,
                                          S.diag_pos.data(), S.strong.data(), S.depends.data(),
                                          S.influences.data());
  check_launch("strength_rows");
  return S;
}

template DeviceStrength device_strength(const DeviceCsrView<float>&, const classical::StrengthParams&);
template DeviceStrength device_strength(const DeviceCsrView<double>&,
                                        const classical::StrengthParams&);

}  // namespace jaxamg::cuda
