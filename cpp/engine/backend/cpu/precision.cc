#include "backend/cpu/precision.h"

#include "core/parallel.h"

namespace jaxamg::cpu {

template <class To, class From>
void convert(std::size_t n, const From* x, To* y) {
  const auto m = static_cast<std::ptrdiff_t>(n);
  if (m <= kParallelRows) {
    for (std::ptrdiff_t i = 0; i < m; ++i) y[i] = static_cast<To>(x[i]);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < m; ++i) y[i] = static_cast<To>(x[i]);
}

template <class To, class From>
void add_converted(std::size_t n, const From* x, To* y) {
  const auto m = static_cast<std::ptrdiff_t>(n);
  if (m <= kParallelRows) {
    for (std::ptrdiff_t i = 0; i < m; ++i) y[i] += static_cast<To>(x[i]);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < m; ++i) y[i] += static_cast<To>(x[i]);
}

template void convert(std::size_t, const double*, float*);
template void convert(std::size_t, const float*, double*);
template void add_converted(std::size_t, const float*, double*);
template void add_converted(std::size_t, const double*, float*);

}  // namespace jaxamg::cpu
