// Launch shape shared by the device setup kernels: one thread per item.
#pragma once
#include <cstddef>

#include "backend/cuda/cuda_check.h"
#include "core/types.h"

namespace jaxamg::cuda {

constexpr int kBlock = 256;

inline unsigned blocks(std::size_t n) {
  return static_cast<unsigned>((n + kBlock - 1) / kBlock);
}

__device__ inline Index global_id() {
  return static_cast<Index>(blockIdx.x * blockDim.x + threadIdx.x);
}

}  // namespace jaxamg::cuda
