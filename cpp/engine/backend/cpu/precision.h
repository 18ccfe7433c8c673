// Vector kernels between two floating-point precisions (OpenMP), for a
// float32 AMG hierarchy inside a float64 solve (amg/mixed_precision_amg.h).
#pragma once
#include <cstddef>

namespace jaxamg::cpu {

// y = x, each entry rounded (or widened) to To.
template <class To, class From>
void convert(std::size_t n, const From* x, To* y);
// y += x, x widened (or rounded) to To first.
template <class To, class From>
void add_converted(std::size_t n, const From* x, To* y);

}  // namespace jaxamg::cpu
