// The MPI FFI targets for JAX processes on CUDA devices (jaxamg_solve_mpi,
// jaxamg_mpi_gather_columns and jaxamg_mpi_allreduce_sum registered with
// platform "CUDA"). The matrix is copied to host memory on XLA's stream and
// the distributed hierarchy is set up (or found in the cache) by the host
// engine (cpp/ffi/mpi/); the solve then runs on the device (device_lanes.h:
// cuda::DeviceSolver on the host-built trees; b, x0 and x stay in device
// memory, halo exchanges and reductions pass through host buffers; a call
// that finds its setup unchanged copies nothing to the host), or,
// for a configuration the device does not run or as JAXAMG_GPU_DIST says
// (device_solves_enabled), on the host with copies of b, x0 and x. last_device_solve() says which
// and why. MPI never sees device pointers, so any MPI build works
// (CUDA-aware or not), and several processes may share one GPU.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "../handler_common.h"
#include "../mpi/mpi_error.h"
#include "../mpi/mpi_handlers.h"
#include "backend/cuda/cuda_check.h"
#include "device_lanes.h"
#include "mpi_cuda_handlers.h"
#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace jaxamg::mpi_handlers {

namespace {

// A host copy of one device buffer, presented as an XLA_FFI_Buffer so that
// the CPU implementations read and write it like any operand.
class HostStaged {
 public:
  HostStaged(ffi::AnyBuffer device, bool copy_in, cudaStream_t stream)
      : device_(device.untyped_data()),
        bytes_(device.size_bytes()),
        dims_(device.dimensions().begin(), device.dimensions().end()),
        host_(bytes_) {
    std::memset(&view_, 0, sizeof view_);
    view_.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
    view_.dtype = static_cast<XLA_FFI_DataType>(device.element_type());
    view_.data = host_.data();
    view_.rank = static_cast<int64_t>(dims_.size());
    view_.dims = dims_.data();
    if (copy_in && bytes_ > 0) {
      cuda::check(cudaMemcpyAsync(host_.data(), device_, bytes_, cudaMemcpyDeviceToHost, stream),
                  "cudaMemcpyAsync (MPI operand to host)");
    }
  }
  HostStaged(const HostStaged&) = delete;
  HostStaged& operator=(const HostStaged&) = delete;

  ffi::AnyBuffer any() const { return ffi::AnyBuffer(&view_); }
  ffi::Buffer<ffi::S32> s32() const { return ffi::Buffer<ffi::S32>(&view_); }
  void copy_out(cudaStream_t stream) {
    if (bytes_ > 0) {
      cuda::check(cudaMemcpyAsync(device_, host_.data(), bytes_, cudaMemcpyHostToDevice, stream),
                  "cudaMemcpyAsync (MPI result to device)");
    }
  }

 private:
  void* device_;
  std::size_t bytes_;
  std::vector<int64_t> dims_;
  std::vector<unsigned char> host_;
  XLA_FFI_Buffer view_;
};

void synchronize(cudaStream_t stream, const char* what) {
  cuda::check(cudaStreamSynchronize(stream), what);
}

std::mutex record_mutex;
DeviceSolveRecord last_record;  // guarded by record_mutex

void record(bool on_device, bool staged, const std::string& reason) {
  std::lock_guard<std::mutex> lock(record_mutex);
  last_record = {on_device, staged, reason};
}

// Where a distributed solve of GPU arrays runs when JAXAMG_GPU_DIST does not
// say ("device" or "host"): the host, until the device path has passed its
// tests on a GPU (cpp/tests/cuda_mpi, tests/mpi).
constexpr bool kDeviceByDefault = false;

bool device_solves_enabled() {
  const char* v = std::getenv("JAXAMG_GPU_DIST");
  if (v && std::strcmp(v, "device") == 0) return true;
  if (v && std::strcmp(v, "host") == 0) return false;
  return kDeviceByDefault;
}

// Why the host solved when device_solves_enabled() said so.
std::string not_selected() {
  return kDeviceByDefault ? "JAXAMG_GPU_DIST=host"
                          : "the device's distributed solve is selected by JAXAMG_GPU_DIST=device";
}

ffi::Error SolveMpiCudaImpl(cudaStream_t stream, std::string_view config, int64_t structure_hi,
                            int64_t structure_lo, bool transpose, bool use_x0, bool reuse_setup,
                            int64_t block_dim, int64_t history_len, int64_t comm_handle,
                            int64_t row_start, int64_t nglobal, ffi::AnyBuffer indptr,
                            ffi::AnyBuffer indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                            ffi::AnyBuffer x0, ffi::Result<ffi::AnyBuffer> x,
                            ffi::Result<ffi::AnyBuffer> stats) {
  ffi::Error result = ffi::Error::Success();
  const ffi::Error staged = ffi_handlers::guarded("jaxamg_solve_mpi (CUDA)", [&] {
    const bool device = device_solves_enabled();
    if (device) {
      require_thread_support("jaxamg_solve_mpi");
      const dist::Communicator comm = dist::Communicator::from_fortran(comm_handle);
      const ffi_handlers::SolveAttrs at =
          ffi_handlers::make_attrs(config, structure_hi, structure_lo, transpose, use_x0,
                                   reuse_setup, block_dim, history_len);
      if (solve_cached_on_device(stream, comm, at, Partition{comm_handle, row_start, nglobal},
                                 indptr, indices, data, b, x0, *x, *stats)) {
        record(true, false, "");
        return;
      }
    }
    // b and x0 come to the host too: the handler checks them for NaN/Inf
    // and a host solve reads them.
    HostStaged h_ptr(indptr, true, stream), h_idx(indices, true, stream), h_data(data, true, stream),
        h_b(b, true, stream), h_x0(x0, true, stream), h_x(*x, false, stream),
        h_stats(*stats, false, stream);
    synchronize(stream, "cudaStreamSynchronize (MPI operands)");
    DeviceLanes lanes(data, b, x0, *x, stream);
    result = SolveMpiWith(device ? &lanes : nullptr, config, structure_hi, structure_lo, transpose,
                          use_x0, reuse_setup, block_dim, history_len, comm_handle, row_start,
                          nglobal, h_ptr.s32(), h_idx.s32(), h_data.any(), h_b.any(), h_x0.any(),
                          h_x.any(), h_stats.any());
    const std::string why = !device ? not_selected() : lanes.used() ? "" : lanes.reason();
    record(lanes.used(), true, why);
    if (result.success()) {
      // Every lane of a call takes the same place (one tree, one decision).
      if (!lanes.used()) h_x.copy_out(stream);
      h_stats.copy_out(stream);
      // The host copies end with this scope: finish the uploads first.
      synchronize(stream, "cudaStreamSynchronize (MPI results)");
    }
  });
  return staged.success() ? std::move(result) : staged;
}

ffi::Error GatherCudaImpl(cudaStream_t stream, int64_t comm_handle, int64_t row_start,
                          int64_t nglobal, int64_t structure_hi, int64_t structure_lo,
                          ffi::AnyBuffer indptr, ffi::AnyBuffer indices, ffi::AnyBuffer x,
                          ffi::Result<ffi::AnyBuffer> xc) {
  ffi::Error result = ffi::Error::Success();
  const ffi::Error staged = ffi_handlers::guarded("jaxamg_mpi_gather_columns (CUDA)", [&] {
    HostStaged h_ptr(indptr, true, stream), h_idx(indices, true, stream), h_x(x, true, stream),
        h_xc(*xc, false, stream);
    synchronize(stream, "cudaStreamSynchronize (MPI operands)");
    result = GatherImpl(comm_handle, row_start, nglobal, structure_hi, structure_lo, h_ptr.s32(),
                        h_idx.s32(), h_x.any(), h_xc.any());
    if (result.success()) {
      h_xc.copy_out(stream);
      synchronize(stream, "cudaStreamSynchronize (MPI results)");
    }
  });
  return staged.success() ? std::move(result) : staged;
}

ffi::Error AllreduceCudaImpl(cudaStream_t stream, int64_t comm_handle, ffi::AnyBuffer x,
                             ffi::Result<ffi::AnyBuffer> y) {
  ffi::Error result = ffi::Error::Success();
  const ffi::Error staged = ffi_handlers::guarded("jaxamg_mpi_allreduce_sum (CUDA)", [&] {
    HostStaged h_x(x, true, stream), h_y(*y, false, stream);
    synchronize(stream, "cudaStreamSynchronize (MPI operands)");
    result = AllreduceImpl(comm_handle, h_x.any(), h_y.any());
    if (result.success()) {
      h_y.copy_out(stream);
      synchronize(stream, "cudaStreamSynchronize (MPI results)");
    }
  });
  return staged.success() ? std::move(result) : staged;
}

}  // namespace

DeviceSolveRecord last_device_solve() {
  std::lock_guard<std::mutex> lock(record_mutex);
  return last_record;
}

}  // namespace jaxamg::mpi_handlers

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgMpiAllreduceSumCuda, jaxamg::mpi_handlers::AllreduceCudaImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Attr<int64_t>("comm")
                                  .Arg<ffi::AnyBuffer>()   // x
                                  .Ret<ffi::AnyBuffer>());  // sum over ranks

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgSolveMpiCuda, jaxamg::mpi_handlers::SolveMpiCudaImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Attr<std::string_view>("config")
                                  .Attr<int64_t>("structure_hi")
                                  .Attr<int64_t>("structure_lo")
                                  .Attr<bool>("transpose")
                                  .Attr<bool>("use_x0")
                                  .Attr<bool>("reuse_setup")
                                  .Attr<int64_t>("block_dim")
                                  .Attr<int64_t>("history_len")
                                  .Attr<int64_t>("comm")
                                  .Attr<int64_t>("row_start")
                                  .Attr<int64_t>("nglobal")
                                  .Arg<ffi::AnyBuffer>()   // indptr
                                  .Arg<ffi::AnyBuffer>()   // indices (global)
                                  .Arg<ffi::AnyBuffer>()   // data
                                  .Arg<ffi::AnyBuffer>()   // b
                                  .Arg<ffi::AnyBuffer>()   // x0
                                  .Ret<ffi::AnyBuffer>()   // x
                                  .Ret<ffi::AnyBuffer>());  // stats

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgMpiGatherColumnsCuda, jaxamg::mpi_handlers::GatherCudaImpl,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<cudaStream_t>>()
                                  .Attr<int64_t>("comm")
                                  .Attr<int64_t>("row_start")
                                  .Attr<int64_t>("nglobal")
                                  .Attr<int64_t>("structure_hi")
                                  .Attr<int64_t>("structure_lo")
                                  .Arg<ffi::AnyBuffer>()   // indptr
                                  .Arg<ffi::AnyBuffer>()   // indices (global)
                                  .Arg<ffi::AnyBuffer>()   // x
                                  .Ret<ffi::AnyBuffer>());  // xc
