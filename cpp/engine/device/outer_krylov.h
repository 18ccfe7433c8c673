// The outer Krylov method of a device solve: the one engine's CG/PCG/PCGF
// (solvers/krylov/cg_method.h), BiCGStab/PBiCGStab (bicgstab_method.h),
// restarted or truncated GMRES/FGMRES (gmres_method.h) and IDR/IDRMSYNC
// (idr_method.h) instantiated on the
// CUDA backend (backend/cuda/vector_backend.cuh). The host solvers run the
// same method objects on the CPU backend and the vmap batches on the lanes
// backend, so a device solve takes the host's steps.
//
// The caller owns the loop (monitoring, convergence test, restarts after a
// rejected true residual) and the operator: products, the preconditioner
// and the residual b - A x, on device vectors. After each iteration the
// method writes 1 to a device word of the caller if its recurrence stopped
// (a breakdown, or an exact solution), else 0, so that a loop that never
// waits for the host (a CUDA graph) can read it.
//
// CG and BiCGStab enqueue their kernels without reading anything back, so
// their iterations can be captured in a CUDA graph; (F)GMRES reads its step
// index on the host (which basis vectors to combine) and IDR keeps it there,
// so their iterations differ from step to step and are not captured.
//
// Plain C++: the CUDA types stay in outer_krylov.cu.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/distribution.h"
#include "solvers/solver.h"

namespace jaxamg::device {

enum class KrylovKind { kCg, kPcg, kPcgf, kBicgstab, kPbicgstab, kGmres, kFgmres, kIdr, kIdrmsync };

// The method registered under `name` (CG, PCG, ..., IDRMSYNC), or false.
bool krylov_kind_of(const std::string& name, KrylovKind* kind);

// Whether the method applies its scope's "preconditioner" (CG and BICGSTAB
// ignore it, as in AmgX).
inline bool applies_preconditioner(KrylovKind kind) {
  return kind != KrylovKind::kCg && kind != KrylovKind::kBicgstab;
}

struct KrylovShape {
  KrylovKind kind = KrylovKind::kCg;
  bool preconditioned = false;  // M is applied (PCG, PCGF, PBICGSTAB, (F)GMRES with one)
  int restart = 20;             // (F)GMRES: Arnoldi steps per cycle (already capped at max_iters)
  int window = 0;               // FGMRES: gmres_krylov_dim (0: the cycle)
  bool track_residual = true;   // (F)GMRES: carry r by its recurrence (the loop measures it)
  int subspace = 8;             // IDR: shadow vectors (already at most the global rows)
  int64_t first_row = 0;        // IDR: the global id of this process's first row
};

// The caller's operator on device vectors of the solve.
template <class T>
class DeviceOperator {
 public:
  virtual ~DeviceOperator() = default;
  virtual void matvec(const T* x, T* y) = 0;        // y = A x
  virtual void precondition(const T* r, T* z) = 0;  // z = M^-1 r
  virtual void residual(const T* x, T* r) = 0;      // r = b - A x, b of the solve
};

template <class T>
class OuterKrylov {
 public:
  // n rows; kernels on `stream` (also for the constructor's allocations).
  // Distributed: vectors of `capacity` entries (n and the ghost tail the
  // operator's products fill) and inner products summed by `reducer`.
  OuterKrylov(const KrylovShape& shape, std::size_t n, cudaStream_t stream,
              std::size_t capacity = 0, const Reducer* reducer = nullptr);
  ~OuterKrylov();
  OuterKrylov(const OuterKrylov&) = delete;
  OuterKrylov& operator=(const OuterKrylov&) = delete;

  // Later kernels run on `stream` (e.g. a CUDA graph's capture stream).
  void set_stream(cudaStream_t stream);
  // (Re)starts the method from the residual r of the current iterate.
  void init(const T* r);
  // One iteration on x and r; then *stopped (device memory) = 1 if the
  // recurrence stopped, else 0.
  void iteration(DeviceOperator<T>& op, T* x, T* r, double* stopped);
  // At the end of a pass of iterations: (F)GMRES adds the correction of the
  // cycle in progress to x; the others have nothing pending.
  void finalize(DeviceOperator<T>& op, T* x);
  // Whether an iteration enqueues its kernels without waiting for the host.
  bool capturable() const;
  // How the last iteration ended (reads the slots: waits for the stream).
  IterationResult outcome() const;
  // The method's scalar slots, on the host (waits for the stream).
  std::vector<double> slots() const;
  // Bytes of the method's vector updates and inner products since the last
  // reset (the products and the preconditioner are the caller's to count);
  // reading waits for the stream.
  void reset_traffic();
  double traffic() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace jaxamg::device
