// The AMG cycle of a hierarchy in device memory: the one cycle of
// amg/cycle.h (V, W, F, the CG/CGF K-cycles, error scaling) and the
// smoothers' methods (solvers/smoothers/diagonal_sweep_method.h,
// chebyshev_method.h, multicolor_methods.h) instantiated on the CUDA backend
// (backend/cuda/vector_backend.cuh). The host hierarchy (amg_cycle.cc), the
// vmap lanes (batched/batched_amg.cc) and the distributed hierarchy run the
// same cycle code, so the device takes the steps the CPU takes.
//
// DeviceAmgData holds what a builder fills: the level operators, the
// smoothers' diagonals, Chebyshev intervals and colourings, and the coarsest level's
// inverse (from a host setup or from a device setup). AmgCycle adds the
// per-level backends, work vectors and smoother methods, made at
// construction; the one scratch vector a diagonal smoother makes at its first
// apply of more than one sweep or from a nonzero guess is made by the first
// cycle. The first cycle must
// therefore run outside a CUDA graph capture; later cycles allocate nothing
// and never wait for the host, so an iteration that runs them can be captured.
//
// A run's kernels go to the stream it is given, which must be the stream of
// the cuSPARSE handle given at construction (the products run there).
// Traffic is counted by the model of the benchmarks (each operand read once,
// each result written once) for products, smoothing
// sweeps, restriction, prolongation and the coarse solve; the K-cycle's and
// error scaling's vector updates are not counted.
#pragma once
#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <functional>
#include <memory>
#include <vector>

#include "amg/amg_level.h"
#include "backend/cuda/device_array.h"
#include "backend/cuda/device_csr.h"

namespace jaxamg::device {

enum class DeviceSmoother {
  kNone,
  kDiagonal,
  kBlockJacobi,
  kChebyshev,
  kMulticolorGS,
  kMulticolorDILU,
  kMulticolorILU
};

template <class T>
struct DeviceAmgLevel {
  cuda::DeviceCsr<T> A, P, R;  // P and R empty on the coarsest level
  DeviceSmoother smoother = DeviceSmoother::kNone;
  // D of the diagonal sweep (w / d_i), or Chebyshev's diagonal S.
  cuda::DeviceArray<T> diag;
  double lmin = 0, lmax = 0;  // Chebyshev: the interval of the recurrence
  int order = 0;              // Chebyshev: steps per sweep
  // BLOCK_JACOBI with block_dim > 1: diag holds w D_I^-1 per node
  // (block_dim x block_dim each).
  // The multicolour smoothers (solvers/smoothers/multicolor_methods.h): the
  // rows grouped by colour and the colours' offsets (host memory).
  // MULTICOLOR_GS: diag holds the update's scale (w / a_ii, or w D_I^-1 per
  // node of block_dim rows). MULTICOLOR_DILU and _ILU: split_* the matrix
  // regrouped by colour (smoothers::ColorSplit), diag 1 / e (DILU) or 1 / u
  // (ILU) by colour position, split_lu ILU's factors in that layout.
  cuda::DeviceArray<Index> color_rows;
  std::vector<Index> color_ptr;
  Index block_dim = 1;
  bool symmetric = false;
  T w = 1;
  cuda::DeviceArray<Index> split_ptr, split_col, split_diag;
  cuda::DeviceArray<T> split_val, split_lu;
  // Entries of the level's work vectors: the rows, and on a distributed
  // level the ghost tail its products fill (the widest of A's and of the
  // finer level's P's ghost columns).
  Index capacity = 0;
  Index rows() const { return A.rows(); }
};

template <class T>
struct DeviceAmgData {
  CycleParams params;
  std::vector<DeviceAmgLevel<T>> levels;
  // > 0: the coarsest level is solved by x = coarse_inverse b (row-major,
  // coarse_n x coarse_n); otherwise by coarsest_sweeps of its smoother.
  Index coarse_n = 0;
  cuda::DeviceArray<T> coarse_inverse;
  // Distributed: the levels' inner products summed over processes, and the
  // coarsest level solved on the host (gathered on one process) from host
  // copies of its owned rows of b and x; empty when the coarsest level is
  // smoothed or inverted here.
  const Reducer* reducer = nullptr;
  std::function<void(const T* b, T* x)> host_coarse;
};

template <class T>
class AmgCycle {
 public:
  // `data` must outlive this object; its level matrices may get new values
  // (DeviceCsr::replace_values keeps their addresses), nothing else may change.
  // `bytes` accumulates the traffic of every cycle.
  AmgCycle(cusparseHandle_t handle, const DeviceAmgData<T>& data, double* bytes);
  ~AmgCycle();
  AmgCycle(const AmgCycle&) = delete;
  AmgCycle& operator=(const AmgCycle&) = delete;

  // One cycle from level 0 on device vectors (x overwritten if x_is_zero),
  // its kernels on `stream`.
  void run(const T* b, T* x, bool x_is_zero, cudaStream_t stream);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jaxamg::device
