// Plain CG on a small system as ONE kernel launch: the initial residual and
// its norm, every iteration, the convergence test, the true-residual check
// before SUCCESS and its restart passes, the residual history and the final
// finiteness check of x all run inside a cooperative kernel (one block of
// threads per slice of rows, grid-wide barriers between the dependent
// steps); the host reads one small record (and the history) at the end.
//
// The semantics are DeviceSolver's for CG without a preconditioner (its
// host loop, and loop_control_kernel in iteration_graph.cu): the same
// statuses, iteration counts, history and stopping rule. The arithmetic of
// the SpMV and the reductions is the kernel's own (row-sequential sums,
// per-block partials combined in block order), so norms agree with the
// cuSPARSE path to rounding, and are bitwise reproducible from run to run
// for a given block count G.
//
// Per iteration there are two grid barriers, one per dependent reduction:
//   1. each block forms the new direction p = r + beta p_old for its rows
//      and, for the SpMV, recomputes it on the fly at the columns it reads
//      (p is double-buffered, so no barrier is needed before the SpMV);
//      it writes its partial <p, Ap>;           barrier; every block sums.
//   2. x += alpha p, r -= alpha q, partial <r, r> (and |r| for L1/LMAX);
//                                               barrier; every block sums.
// <r, r> gives beta of the next iteration and, in L2, the monitored norm.
// Every block sums the G partials in the same order, so all blocks take the
// same decisions and leave the loop together.
#pragma once
#include <cuda_runtime_api.h>

#include <vector>

#include "backend/cuda/device_array.h"
#include "backend/cuda/device_csr.h"
#include "solvers/stopping_rule.h"

namespace jaxamg::cuda {

// Largest system solved by the fused kernel. Up to here the operator and
// the six vectors of the solve (~16 MB in float64 for a 2D/3D stencil at
// 1<<17 rows) stay in the H200's 50 MB L2, and the default grid (512 rows a
// block: 256 blocks) is one wave of co-resident blocks (264 on an H200 at
// two blocks per SM), so a thread keeps at most two rows and an iteration
// costs its two grid barriers plus a few microseconds of L2 traffic. Larger
// systems would need more rows per thread of a capped grid, out of L2, with
// a scalar-per-row SpMV that cuSPARSE beats, while their iterations are
// long enough that the multi-kernel path's launch overhead matters less.
constexpr Index kSmallCgMaxRows = Index(1) << 17;

// Threads per block, and rows per block when the block count is chosen
// from n (two rows per thread: small grids keep the barriers cheap).
constexpr int kSmallCgThreads = 256;
constexpr int kSmallCgRowsPerBlock = 512;

// JAXAMG_SMALL_CG=0 in the environment turns the fused path off.
bool small_cg_enabled();
// JAXAMG_SMALL_CG_BLOCKS=G forces the block count (benchmarks, tests); 0
// when unset; InvalidInput naming the variable when it is not an integer
// from 1 to 2^20.
int small_cg_forced_blocks();

// What the solve tests, from the solver's configuration.
struct SmallCgRule {
  StoppingRule rule;
  bool monitor = true;  // monitor_residual
  bool store = false;   // store_res_history (kept only when monitored)
  NormType norm = NormType::kL2;
  int max_iters = 100;
};

// The record the kernel leaves for the host (host and device layout).
struct SmallCgRecord {
  double initial = -1;
  double largest = -1;
  double final_norm = -1;
  int iterations = 0;
  int status = 0;       // Status
  int passes = 0;       // CG passes started (1 + restarts after a failed true-residual check)
  int true_checks = 0;  // true-residual checks run
};

template <class T>
class SmallCg {
 public:
  // `A` (square, on the device) must outlive this object; its arrays are
  // read at every solve, so new values (DeviceCsr::replace_values) are seen.
  explicit SmallCg(const DeviceCsr<T>& A);
  ~SmallCg();
  SmallCg(const SmallCg&) = delete;
  SmallCg& operator=(const SmallCg&) = delete;

  // Solves A x = b (x holds the initial guess if use_x0) on `stream` and
  // waits for it; the outcome is last_record(), and `history` (when the
  // rule monitors and stores) receives the initial norm and one norm per
  // iteration. Returns false, having enqueued nothing, when the fused
  // kernel cannot run here (no cooperative launch, a forced block count
  // larger than can be co-resident, a launch the driver refuses): the
  // caller then solves another way.
  bool solve(const SmallCgRule& rule, const T* b, T* x, bool use_x0, cudaStream_t stream,
             std::vector<double>* history);

  // Of the last successful solve: the block count G, the kernel's record,
  // and the bytes by DeviceSolver's traffic model (the per-kernel path's
  // count for the same iterations, passes and checks).
  int last_blocks() const { return last_blocks_; }
  const SmallCgRecord& last_record() const { return last_; }
  double last_solve_bytes() const { return last_bytes_; }

 private:
  // Blocks that can be co-resident for a cooperative launch, 0 if the
  // device cannot launch cooperatively; queried once.
  int capacity();
  double model_bytes(const SmallCgRule& rule, bool use_x0) const;

  const DeviceCsr<T>& A_;
  Index n_ = 0;
  int capacity_ = -1;
  DeviceArray<T> r_, q_, p_;   // p_: two direction buffers of n
  DeviceArray<double> parts_;  // per-block partial sums: 2 buffers x 2 values x G
  DeviceArray<int> flags_;     // per-block "x has a NaN/Inf"
  DeviceArray<double> state_;  // SmallCgRecord, then the history
  double* pinned_ = nullptr;   // host mirror of the record and the first history entries
  int last_blocks_ = 0;
  SmallCgRecord last_;
  double last_bytes_ = 0;
};

}  // namespace jaxamg::cuda
