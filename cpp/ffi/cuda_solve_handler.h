// What the CUDA handler of jaxamg_solve reports about its last solve (for
// the nanobind module jaxamg._cuda: tests and the benchmark).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace jaxamg::ffi_handlers {

struct CudaSolveInfo {
  bool on_device = false;   // false: the configuration was solved on the host
  std::string host_reason;  // why, when on the host
  bool setup_on_device = false;  // the AMG hierarchy was built on the device
  std::string setup_reason;      // why not, when it was built on the host
  int iterations = 0;
  double bytes = 0;         // device traffic of the solve (model)
  // What the call refreshed ("setup", "resetup", "reuse") and the wall
  // times of the refresh and of the solve, each up to a stream
  // synchronisation (for the benchmark's breakdown of a call).
  std::string refresh = "reuse";
  double refresh_ms = 0;
  double solve_ms = 0;
  double lane_ms = 0;  // the handler's whole time for this right-hand side
  std::vector<std::pair<int64_t, int64_t>> levels;  // AMG hierarchy: (rows, nnz) per level
};

CudaSolveInfo last_cuda_solve();

}  // namespace jaxamg::ffi_handlers
