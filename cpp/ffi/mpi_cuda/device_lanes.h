// The distributed solves of jaxamg_solve_mpi (CUDA) that run on the device:
// cuda::DeviceSolver on the trees the host engine set up, reading b and x0
// and writing x in the call's device buffers.
//
// DeviceLanes is the LaneBackend that the staged call (the matrix copied to
// the host for the setup and the cache's check) hands to SolveMpiWith; it
// keeps in the cache entry the device copies of the trees and of the setup's
// values. solve_cached_on_device() serves a call whose entry holds them
// without copying the matrix to the host: the values, b and x0 are checked
// on the device and every process must find its entry unchanged, or the
// call goes the staged way.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "../mpi/mpi_handlers.h"
#include "xla/ffi/api/ffi.h"

namespace jaxamg::mpi_handlers {

class DeviceLanes final : public LaneBackend {
 public:
  DeviceLanes(xla::ffi::AnyBuffer data, xla::ffi::AnyBuffer b, xla::ffi::AnyBuffer x0,
              xla::ffi::AnyBuffer x, cudaStream_t stream);

  bool solve(dist::DistLinearSolver<float>& s, mpi_cache::Entry& e, bool fresh, int64_t lane,
             bool use_x0, bool transpose, SolveResult* r) override;
  bool solve(dist::DistLinearSolver<double>& s, mpi_cache::Entry& e, bool fresh, int64_t lane,
             bool use_x0, bool transpose, SolveResult* r) override;

  // Whether a lane ran on the device (then x is written there), and why
  // not when none did.
  bool used() const { return used_; }
  const std::string& reason() const { return reason_; }

 private:
  template <class T>
  bool run(dist::DistLinearSolver<T>& s, mpi_cache::Entry& e, bool fresh, int64_t lane, bool use_x0,
           bool transpose, SolveResult* r);

  const void* data_;
  const void* b_;
  const void* x0_;
  void* x_;
  int64_t nnz_, n_;
  cudaStream_t stream_;
  bool used_ = false;
  std::string reason_;
};

// Collective. Solves a one-lane call on the device from its cache entry if
// every process holds the device trees of its setup and the same values (and
// b, x0 are finite); false otherwise (nothing was written: the staged path
// then serves the call).
bool solve_cached_on_device(cudaStream_t stream, const dist::Communicator& comm,
                            const ffi_handlers::SolveAttrs& at, const Partition& part,
                            xla::ffi::AnyBuffer indptr, xla::ffi::AnyBuffer indices,
                            xla::ffi::AnyBuffer data, xla::ffi::AnyBuffer b, xla::ffi::AnyBuffer x0,
                            xla::ffi::AnyBuffer x, xla::ffi::AnyBuffer stats);

}  // namespace jaxamg::mpi_handlers
