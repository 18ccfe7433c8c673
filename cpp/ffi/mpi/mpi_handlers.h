// The implementations behind the MPI FFI targets, callable with any buffers
// in host memory: the CPU handlers bind them directly, and the CUDA
// handlers (cpp/ffi/mpi_cuda/) call them on host copies of device buffers.
#pragma once
#include <cstdint>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace jaxamg::mpi_handlers {

// jaxamg_solve_mpi (mpi_solve_handler.cc).
xla::ffi::Error SolveMpiImpl(std::string_view config, int64_t structure_hi, int64_t structure_lo,
                             bool transpose, bool use_x0, bool reuse_setup, int64_t block_dim,
                             int64_t history_len, int64_t comm_handle, int64_t row_start,
                             int64_t nglobal, xla::ffi::Buffer<xla::ffi::S32> indptr,
                             xla::ffi::Buffer<xla::ffi::S32> indices, xla::ffi::AnyBuffer data,
                             xla::ffi::AnyBuffer b, xla::ffi::AnyBuffer x0,
                             xla::ffi::Result<xla::ffi::AnyBuffer> x,
                             xla::ffi::Result<xla::ffi::AnyBuffer> stats);

// jaxamg_mpi_gather_columns (mpi_gather_handler.cc).
xla::ffi::Error GatherImpl(int64_t comm_handle, int64_t row_start, int64_t nglobal,
                           int64_t structure_hi, int64_t structure_lo,
                           xla::ffi::Buffer<xla::ffi::S32> indptr,
                           xla::ffi::Buffer<xla::ffi::S32> indices, xla::ffi::AnyBuffer x,
                           xla::ffi::Result<xla::ffi::AnyBuffer> xc);

// jaxamg_mpi_allreduce_sum (mpi_allreduce_handler.cc).
xla::ffi::Error AllreduceImpl(int64_t comm_handle, xla::ffi::AnyBuffer x,
                              xla::ffi::Result<xla::ffi::AnyBuffer> y);

}  // namespace jaxamg::mpi_handlers
