// The MPI FFI targets for JAX processes on CUDA devices (jaxamg_solve_mpi,
// jaxamg_mpi_gather_columns and jaxamg_mpi_allreduce_sum registered with
// platform "CUDA"): the operands
// are copied to host memory on XLA's stream, the distributed CPU engine
// solves (cpp/ffi/mpi/), and the results are copied back before XLA reads
// them. MPI therefore never sees device pointers, so any MPI build works
// (CUDA-aware or not), and several processes may share one GPU. The solve
// itself runs on the host: a device-resident distributed solve is not built.
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <vector>

#include "../handler_common.h"
#include "../mpi/mpi_handlers.h"
#include "backend/cuda/cuda_check.h"
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

ffi::Error SolveMpiCudaImpl(cudaStream_t stream, std::string_view config, int64_t structure_hi,
                            int64_t structure_lo, bool transpose, bool use_x0, bool reuse_setup,
                            int64_t block_dim, int64_t history_len, int64_t comm_handle,
                            int64_t row_start, int64_t nglobal, ffi::AnyBuffer indptr,
                            ffi::AnyBuffer indices, ffi::AnyBuffer data, ffi::AnyBuffer b,
                            ffi::AnyBuffer x0, ffi::Result<ffi::AnyBuffer> x,
                            ffi::Result<ffi::AnyBuffer> stats) {
  ffi::Error result = ffi::Error::Success();
  const ffi::Error staged = ffi_handlers::guarded("jaxamg_solve_mpi (CUDA)", [&] {
    HostStaged h_ptr(indptr, true, stream), h_idx(indices, true, stream), h_data(data, true, stream),
        h_b(b, true, stream), h_x0(x0, true, stream), h_x(*x, false, stream),
        h_stats(*stats, false, stream);
    synchronize(stream, "cudaStreamSynchronize (MPI operands)");
    result = SolveMpiImpl(config, structure_hi, structure_lo, transpose, use_x0, reuse_setup,
                          block_dim, history_len, comm_handle, row_start, nglobal, h_ptr.s32(),
                          h_idx.s32(), h_data.any(), h_b.any(), h_x0.any(), h_x.any(),
                          h_stats.any());
    if (result.success()) {
      h_x.copy_out(stream);
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
