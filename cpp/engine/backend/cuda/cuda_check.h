// Error checking for the CUDA backend: every runtime and cuSPARSE call, and
// every kernel launch, goes through one of these so that a failure raises
// CudaError naming the operation instead of corrupting a later solve.
#pragma once
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <stdexcept>
#include <string>

namespace jaxamg::cuda {

class CudaError : public std::runtime_error {
 public:
  explicit CudaError(const std::string& msg) : std::runtime_error(msg) {}
};

inline void check(cudaError_t status, const char* operation) {
  if (status != cudaSuccess) {
    throw CudaError(std::string("CUDA error in ") + operation + ": " +
                    cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")");
  }
}

inline void check(cusparseStatus_t status, const char* operation) {
  if (status != CUSPARSE_STATUS_SUCCESS) {
    throw CudaError(std::string("cuSPARSE error in ") + operation + ": " +
                    cusparseGetErrorString(status));
  }
}

// After a kernel launch: launch-configuration errors and earlier
// asynchronous faults surface here, named by the kernel.
inline void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

}  // namespace jaxamg::cuda
