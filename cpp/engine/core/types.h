// Small shared vocabulary of the engine: index type, solve status, norms.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

// Marks small inline functions that device code calls too (the CUDA
// backend compiles them with nvcc; elsewhere the mark is empty).
#if defined(__CUDACC__)
#define JAXAMG_HOST_DEVICE __host__ __device__
#else
#define JAXAMG_HOST_DEVICE
#endif

namespace jaxamg {

using Index = int32_t;  // local row/column indices and row offsets

// Same values as AmgX's AMGX_SOLVE_STATUS and JAX-AMG's AMGXStatus.
enum class Status : int { kSuccess = 0, kFailed = 1, kDiverged = 2, kNotConverged = 3 };

const char* status_name(Status s);

enum class NormType { kL1, kL2, kLMax };

enum class ConvergenceType {
  kAbsolute,
  kRelativeIni,        // also RELATIVE_INI_CORE
  kRelativeMax,        // also RELATIVE_MAX_CORE
  kCombinedRelIniAbs,
};

// Vectors live in host memory for the CPU backend.
template <class T>
using Vector = std::vector<T>;

}  // namespace jaxamg
