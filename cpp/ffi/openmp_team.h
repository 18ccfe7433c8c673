// One OpenMP thread team per process for the CPU handlers.
//
// A team belongs to the thread that starts it, and XLA runs eager (op by op)
// custom calls on its worker threads: an eager gradient starts a second team.
// libgomp then manages more threads than there are cores, stops spinning and
// puts every later parallel region of every team through a futex sleep and
// wake-up (a jitted 10^4 CG solve took 0.7 ms before one eager gradient and
// 2.3 ms after it, for the rest of the process). So the first thread that
// solves keeps the team, and any other thread runs its solves on itself.
#pragma once
#include <omp.h>

#include <atomic>

namespace jaxamg::ffi_handlers {

inline void keep_one_openmp_team() {
  thread_local bool decided = false;
  if (decided) return;
  decided = true;
  static std::atomic<bool> claimed{false};
  bool expected = false;
  if (!claimed.compare_exchange_strong(expected, true)) omp_set_num_threads(1);
}

}  // namespace jaxamg::ffi_handlers
