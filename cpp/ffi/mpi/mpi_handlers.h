// The implementations behind the MPI FFI targets, callable with any buffers
// in host memory: the CPU handlers bind them directly, and the CUDA
// handlers (cpp/ffi/mpi_cuda/) call them on host copies of device buffers.
#pragma once
#include <cstdint>
#include <string_view>

#include "../handler_common.h"
#include "dist/dist_linear_solver.h"
#include "mpi_solver_cache.h"
#include "xla/ffi/api/ffi.h"

namespace jaxamg::mpi_handlers {

// The solve of one lane by another backend than the host engine, which the
// CUDA handler passes to SolveMpiImpl: the lane's tree (A's or A^T's) is set
// up on the host; `fresh` says that this call set it up or gave it new
// values. Returns false to leave the lane to the host engine. Every process
// decides alike (the decision depends on the config and the tree alone).
class LaneBackend {
 public:
  virtual ~LaneBackend() = default;
  virtual bool solve(dist::DistLinearSolver<float>& s, mpi_cache::Entry& e, bool fresh,
                     int64_t lane, bool use_x0, bool transpose, SolveResult* r) = 0;
  virtual bool solve(dist::DistLinearSolver<double>& s, mpi_cache::Entry& e, bool fresh,
                     int64_t lane, bool use_x0, bool transpose, SolveResult* r) = 0;
};

// The partition attributes jaxamg_solve_mpi takes beyond SolveAttrs.
struct Partition {
  int64_t comm, row_start, nglobal;
};

// The cache key of a solve of n local rows and nnz entries. Collective
// (bind_layout). The structure is the attributes' fingerprint when given
// with one structure for every lane, else one of ptr and idx (host memory).
mpi_cache::Key solve_key(const dist::Communicator& comm, const ffi_handlers::SolveAttrs& at,
                         const Partition& part, int64_t n, int64_t nnz, bool is_double,
                         bool shared_structure, const int32_t* ptr, const int32_t* idx);

// jaxamg_solve_mpi (mpi_solve_handler.cc).
xla::ffi::Error SolveMpiImpl(std::string_view config, int64_t structure_hi, int64_t structure_lo,
                             bool transpose, bool use_x0, bool reuse_setup, int64_t block_dim,
                             int64_t history_len, int64_t comm_handle, int64_t row_start,
                             int64_t nglobal, xla::ffi::Buffer<xla::ffi::S32> indptr,
                             xla::ffi::Buffer<xla::ffi::S32> indices, xla::ffi::AnyBuffer data,
                             xla::ffi::AnyBuffer b, xla::ffi::AnyBuffer x0,
                             xla::ffi::Result<xla::ffi::AnyBuffer> x,
                             xla::ffi::Result<xla::ffi::AnyBuffer> stats);
// The same with the lanes offered to `device` first.
xla::ffi::Error SolveMpiWith(LaneBackend* device, std::string_view config, int64_t structure_hi,
                             int64_t structure_lo, bool transpose, bool use_x0, bool reuse_setup,
                             int64_t block_dim, int64_t history_len, int64_t comm_handle,
                             int64_t row_start, int64_t nglobal,
                             xla::ffi::Buffer<xla::ffi::S32> indptr,
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
