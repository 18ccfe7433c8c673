// The one size below which the engine's loops run without OpenMP: under
// it, a parallel region's fork/join and barrier cost more than the loop
// saves (and on a busy machine every barrier waits for the slowest thread).
// Loops test it before any OpenMP call, since a region with a false
// if-clause still enters the runtime. bench/threads_small_solve.py measures
// it: at 8192, a 10^4-unknown solve ran 1.08-1.13x slower on 2 threads than
// on 1; at 16384, 0.87-0.93x (2 cores, noise about 10 %).
#pragma once
#include <cstddef>

namespace jaxamg {

// Rows (vector kernels, products, sweeps, setup loops over rows) or, for
// the lanes backend, rows x lanes.
constexpr std::ptrdiff_t kParallelRows = 16384;

}  // namespace jaxamg
