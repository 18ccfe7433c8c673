#include "device/iteration_graph.h"

#include <cmath>
#include <string>

#include "backend/cuda/kernels.h"
#include "core/types.h"

namespace jaxamg::cuda {

namespace {

// Solver::solve's per-iteration decision (device_solver.cc's host loop does
// the same with the numbers it reads back).
__global__ void loop_control_kernel(cudaGraphConditionalHandle handle, const double* scal,
                                    LoopState* st, double* history, LoopRule rule) {
  const double norm = scal[kNorm];
  const bool stopped = scal[kStop] != 0.0;
  // stop_recurrence(): an exactly zero residual means converged.
  const bool step_converged = stopped && norm == 0.0;
  const bool breakdown = stopped && !step_converged;
  const int it = ++st->iterations;
  bool done = false;
  if (rule.monitor) {
    st->final_norm = norm;
    if (st->largest < norm) st->largest = norm;
    if (rule.store) history[it - 1] = norm;
    if (!isfinite(norm)) {
      st->status = static_cast<int>(Status::kFailed);
      done = true;
    } else if (step_converged || rule.rule.converged(norm, st->initial, st->largest)) {
      st->status = static_cast<int>(Status::kSuccess);
      done = true;
    } else if (rule.rule.diverged(norm, st->initial)) {
      st->status = static_cast<int>(Status::kDiverged);
      done = true;
    }
  } else if (step_converged) {
    st->status = static_cast<int>(Status::kSuccess);
    done = true;
  }
  if (!done && breakdown) {
    st->status = static_cast<int>(Status::kDiverged);
    done = true;
  }
  st->done = done ? 1 : 0;
  cudaGraphSetConditional(handle, (!done && it < st->limit) ? 1u : 0u);
}

}  // namespace

IterationGraph::~IterationGraph() { release(); }

void IterationGraph::release() {
  if (exec_) cudaGraphExecDestroy(exec_);
  if (graph_) cudaGraphDestroy(graph_);
  if (capture_stream_) cudaStreamDestroy(capture_stream_);
  if (pinned_) cudaFreeHost(pinned_);
  exec_ = nullptr;
  graph_ = nullptr;
  capture_stream_ = nullptr;
  pinned_ = nullptr;
}

void IterationGraph::capture(const std::function<void(cudaStream_t)>& body, const double* scal,
                             const LoopRule& rule, int max_history) {
  release();
  store_ = rule.store != 0;
  state_.resize(1);
  history_.resize(store_ && max_history > 0 ? static_cast<std::size_t>(max_history) : 1);
  check(cudaMallocHost(reinterpret_cast<void**>(&pinned_), sizeof(LoopState)),
        "cudaMallocHost (loop state)");
  check(cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking),
        "cudaStreamCreate (graph capture)");
  check(cudaGraphCreate(&graph_, 0), "cudaGraphCreate");
  cudaGraphConditionalHandle handle;
  // Every launch enters the body once: the host launches only when an
  // iteration is due.
  check(cudaGraphConditionalHandleCreate(&handle, graph_, 1, cudaGraphCondAssignDefault),
        "cudaGraphConditionalHandleCreate");
  cudaGraphNodeParams params = {};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = handle;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  cudaGraphNode_t node;
  check(cudaGraphAddNode(&node, graph_, nullptr, nullptr, 0, &params),
        "cudaGraphAddNode (while)");
  cudaGraph_t loop_body = params.conditional.phGraph_out[0];
  check(cudaStreamBeginCaptureToGraph(capture_stream_, loop_body, nullptr, nullptr, 0,
                                      cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCaptureToGraph");
  try {
    body(capture_stream_);
    loop_control_kernel<<<1, 1, 0, capture_stream_>>>(handle, scal, state_.data(),
                                                      history_.data(), rule);
    check_launch("loop_control_kernel");
  } catch (...) {
    cudaGraph_t discard = nullptr;
    cudaStreamEndCapture(capture_stream_, &discard);
    release();
    throw;
  }
  check(cudaStreamEndCapture(capture_stream_, &loop_body), "cudaStreamEndCapture");
  check(cudaGraphInstantiate(&exec_, graph_, 0), "cudaGraphInstantiate (iteration loop)");
}

LoopState IterationGraph::run(const LoopState& start, cudaStream_t stream,
                              std::vector<double>* history) {
  *pinned_ = start;
  pinned_->iterations = 0;
  pinned_->done = 0;
  check(cudaMemcpyAsync(state_.data(), pinned_, sizeof(LoopState), cudaMemcpyHostToDevice, stream),
        "cudaMemcpyAsync (loop state)");
  check(cudaGraphLaunch(exec_, stream), "cudaGraphLaunch (iteration loop)");
  check(cudaMemcpyAsync(pinned_, state_.data(), sizeof(LoopState), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync (loop state)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (iteration loop)");
  const LoopState out = *pinned_;
  if (store_ && history && out.iterations > 0) {
    const std::size_t old = history->size();
    history->resize(old + static_cast<std::size_t>(out.iterations));
    check(cudaMemcpy(history->data() + old, history_.data(), out.iterations * sizeof(double),
                     cudaMemcpyDeviceToHost),
          "cudaMemcpy (residual history)");
  }
  return out;
}

}  // namespace jaxamg::cuda
