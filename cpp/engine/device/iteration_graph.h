// The iteration loop of a device solve as one CUDA graph: one iteration
// (captured once from the solver's own enqueue code) followed by a one-thread
// kernel that applies Solver::solve's convergence test to the device
// scalars and sets the condition of a while node. A launch runs iterations
// until the test stops it or a limit is reached, without returning to the
// host in between; the host then reads one small state record (and the
// residual history). Removes the per-iteration stream synchronisation and
// most of the host's launch cost of the kernels of an iteration.
//
// The captured iteration reads and writes fixed device addresses: the
// caller runs it only on the vectors it was captured with.
#pragma once
#include <cuda_runtime_api.h>

#include <functional>
#include <vector>

#include "backend/cuda/device_array.h"
#include "solvers/stopping_rule.h"

namespace jaxamg::cuda {

// The loop's state between and after launches (host and device layout).
struct LoopState {
  double initial = -1;     // initial residual norm of the solve
  double largest = -1;     // largest norm so far (RELATIVE_MAX)
  double final_norm = -1;  // norm after the last iteration run
  int iterations = 0;      // iterations run by this launch
  int limit = 0;           // run at most this many
  int done = 0;            // 1: stopped by convergence, a failure or a breakdown
  int status = 0;          // Status when done
};

// What the test reads besides the scalars.
struct LoopRule {
  StoppingRule rule;
  int monitor = 0;  // monitor_residual: the norm decides; otherwise only a stop does
  int store = 0;    // store_res_history
};

class IterationGraph {
 public:
  IterationGraph() = default;
  ~IterationGraph();
  IterationGraph(const IterationGraph&) = delete;
  IterationGraph& operator=(const IterationGraph&) = delete;

  bool captured() const { return exec_ != nullptr; }

  // Captures `body(stream)`, which enqueues one iteration on the stream it
  // is given and leaves the stop flag in scal[kStop] and the residual norm in
  // scal[kNorm], then the test. `max_history`: most iterations one launch
  // can run (sizes the history).
  void capture(const std::function<void(cudaStream_t)>& body, const double* scal,
               const LoopRule& rule, int max_history);

  // Runs the loop on `stream` from `start` (its iterations field ignored,
  // limit >= 1) and waits for it; appends the norms of the iterations run to
  // `history` when the rule stores them.
  LoopState run(const LoopState& start, cudaStream_t stream, std::vector<double>* history);

 private:
  void release();

  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  cudaStream_t capture_stream_ = nullptr;
  DeviceArray<LoopState> state_;
  DeviceArray<double> history_;
  LoopState* pinned_ = nullptr;
  bool store_ = false;
};

}  // namespace jaxamg::cuda
