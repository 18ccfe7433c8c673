#include "backend/cpu/precision.h"

namespace jaxamg::cpu {

namespace {
// Below this many entries OpenMP's fork/join costs more than the loop (the
// threshold of blas.cc). The branch is taken before any OpenMP call: a
// region with a false if-clause still enters the runtime.
constexpr std::ptrdiff_t kParallelMin = 8192;
}  // namespace

template <class To, class From>
void convert(std::size_t n, const From* x, To* y) {
  const auto m = static_cast<std::ptrdiff_t>(n);
  if (m <= kParallelMin) {
    for (std::ptrdiff_t i = 0; i < m; ++i) y[i] = static_cast<To>(x[i]);
    return;
  }
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < m; ++i) y[i] = static_cast<To>(x[i]);
}

template <class To, class From>
void add_converted(std::size_t n, const From* x, To* y) {
  const auto m = static_cast<std::ptrdiff_t>(n);
  if (m <= kParallelMin) {
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
