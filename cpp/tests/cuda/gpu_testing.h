// Shared by the CUDA tests: whether a device is present, and a skip for
// tests that need one (the tests build everywhere, run where a GPU is).
#pragma once
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

namespace jaxamg::testing {

inline bool have_gpu() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return n > 0;
}

}  // namespace jaxamg::testing

#define REQUIRE_GPU() \
  if (!::jaxamg::testing::have_gpu()) GTEST_SKIP() << "no CUDA device"
