// Batch (vmap) lanes of the jaxamg_solve handlers: operands carry leading
// batch dimensions, each either 1 (shared by every lane) or the batch size.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace jaxamg::ffi_handlers {

// Leading (batch) dimensions of an operand whose last dimension is the core.
template <class Dims>
std::vector<int64_t> batch_dims(const Dims& dims) {
  std::vector<int64_t> out;
  for (std::size_t i = 0; i + 1 < dims.size(); ++i) out.push_back(dims[i]);
  return out;
}

// Maps output lane `lane` (row-major over out_shape) to the lane of an
// operand with batch shape `in_shape` broadcast against it.
inline int64_t broadcast_lane(int64_t lane, const std::vector<int64_t>& out_shape,
                              const std::vector<int64_t>& in_shape) {
  int64_t in_lane = 0, in_stride = 1;
  const std::size_t offset = out_shape.size() - in_shape.size();
  for (std::size_t d = out_shape.size(); d-- > 0;) {
    const int64_t idx = lane % out_shape[d];
    lane /= out_shape[d];
    if (d >= offset) {
      const int64_t extent = in_shape[d - offset];
      if (extent != 1) in_lane += idx * in_stride;
      in_stride *= extent;
    }
  }
  return in_lane;
}

inline int64_t product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

}  // namespace jaxamg::ffi_handlers
