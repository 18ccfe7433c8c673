// The XLA FFI handler `jaxamg_mpi_gather_columns` (CPU): for distributed
// gradients (dA_ij = -lambda_i x_j on the pattern) each stored entry k of
// this process's rows needs x_global[indices[k]]. Owned columns are read
// locally; the others arrive by one halo exchange whose plan is built once
// per structure and cached -- only boundary values travel, never the vector.
//
// Operands: indptr S32[n_local + 1], indices S32[nnz_local] (global), x
// [.., n_local] (F32/F64, leading batch dimensions allowed). Attributes:
// comm, row_start, nglobal, structure_hi, structure_lo. Result: xc
// [.., nnz_local]. Collective over comm.
#include <algorithm>
#include <string>

#include "dist/halo_plan.h"
#include "mpi_error.h"
#include "mpi_handlers.h"
#include "mpi_solver_cache.h"
#include "../solver_cache.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace jaxamg::mpi_handlers {

namespace {

std::unique_ptr<mpi_cache::GatherPlan> build_plan(const dist::Communicator& comm,
                                                  const dist::RowPartition& part,
                                                  const int32_t* idx, int64_t nnz) {
  auto g = std::make_unique<mpi_cache::GatherPlan>();
  g->n_local = part.n_local;
  std::vector<int64_t> ghosts;
  for (int64_t k = 0; k < nnz; ++k) {
    if (!part.owns(idx[k])) ghosts.push_back(idx[k]);
  }
  std::sort(ghosts.begin(), ghosts.end());
  ghosts.erase(std::unique(ghosts.begin(), ghosts.end()), ghosts.end());
  g->slot.resize(static_cast<std::size_t>(nnz));
  for (int64_t k = 0; k < nnz; ++k) {
    g->slot[k] = part.owns(idx[k])
                     ? static_cast<int32_t>(idx[k] - part.row_start)
                     : static_cast<int32_t>(part.n_local + (std::lower_bound(ghosts.begin(), ghosts.end(),
                                                                              int64_t(idx[k])) -
                                                             ghosts.begin()));
  }
  g->plan = std::make_unique<dist::HaloPlan>(comm, part, ghosts);
  return g;
}

template <class T>
void gather_typed(const mpi_cache::GatherPlan& g, const T* x, T* xc, int64_t lanes, int64_t n,
                  int64_t nnz) {
  std::vector<T> all(static_cast<std::size_t>(n + g.plan->num_ghosts()));
  for (int64_t lane = 0; lane < lanes; ++lane) {
    const T* xl = x + lane * n;
    std::copy(xl, xl + n, all.begin());
    g.plan->exchange(xl, all.data() + n);
    T* out = xc + lane * nnz;
    for (int64_t k = 0; k < nnz; ++k) out[k] = all[g.slot[k]];
  }
}

}  // namespace

ffi::Error GatherImpl(int64_t comm_handle, int64_t row_start, int64_t nglobal,
                      int64_t structure_hi, int64_t structure_lo, ffi::Buffer<ffi::S32> indptr,
                      ffi::Buffer<ffi::S32> indices, ffi::AnyBuffer x,
                      ffi::Result<ffi::AnyBuffer> xc) {
  return guarded("jaxamg_mpi_gather_columns", [&] {
    require_thread_support("jaxamg_mpi_gather_columns");
    const dist::Communicator comm = dist::Communicator::from_fortran(comm_handle);
    const int64_t n = indptr.dimensions().back() - 1;
    const int64_t nnz = indices.dimensions().back();
    const int32_t* idx = indices.typed_data();
    const auto type = x.element_type();
    const int64_t lanes = n > 0 ? static_cast<int64_t>(x.element_count()) / n : 0;
    comm.agree_on([&] {
      if (indptr.element_count() != static_cast<std::size_t>(n + 1) ||
          indices.element_count() != static_cast<std::size_t>(nnz)) {
        throw InvalidInput("jaxamg_mpi_gather_columns: indptr and indices must not carry batch "
                           "dimensions; pass one local structure");
      }
      if (x.dimensions().back() != n) {
        throw InvalidInput("x: has " + std::to_string(x.dimensions().back()) +
                           " entries but this process owns " + std::to_string(n) +
                           " rows; pass the local block of x");
      }
      if (type != ffi::F64 && type != ffi::F32) {
        throw InvalidInput("x: unsupported dtype; use float32 or float64");
      }
      for (int64_t k = 0; k < nnz; ++k) {
        if (idx[k] < 0 || idx[k] >= nglobal) {
          throw InvalidInput("indices: global column " + std::to_string(idx[k]) +
                             " is out of range [0, nglobal = " + std::to_string(nglobal) + ")");
        }
      }
    });
    if (comm.min_int(lanes) != comm.max_int(lanes)) {
      throw InvalidInput("jaxamg_mpi_gather_columns: the processes passed different batch "
                         "sizes; pass the same number of vectors on every process");
    }
    const auto part = dist::RowPartition::build(comm, row_start, n, nglobal);
    mpi_cache::Key key;
    key.is_double = type == ffi::F64;
    // The engine's duplicate, not the caller's handle (reusable once freed).
    key.comm = static_cast<int64_t>(comm.serial());
    key.comm_size = comm.size();
    key.row_start = row_start;
    key.nglobal = nglobal;
    key.n_local = n;
    key.nnz = nnz;
    if ((structure_hi | structure_lo) != 0) {
      key.structure_hi = static_cast<uint64_t>(structure_hi);
      key.structure_lo = static_cast<uint64_t>(structure_lo);
    } else {
      ffi_cache::fingerprint(n, indptr.typed_data(), idx, nnz, &key.structure_hi, &key.structure_lo);
    }
    // The plan's sends depend on the other processes' patterns too.
    mpi_cache::bind_layout(key, comm);
    auto entry = mpi_cache::Cache::instance().acquire(key);
    std::lock_guard<std::mutex> guard(entry->mutex);
    // Building a plan is collective: agree on whether anyone needs one.
    if (comm.max_int(entry->gather ? 0 : 1) != 0) entry->gather = build_plan(comm, part, idx, nnz);
    if (type == ffi::F64) {
      gather_typed<double>(*entry->gather, x.typed_data<double>(), xc->typed_data<double>(), lanes, n, nnz);
    } else {
      gather_typed<float>(*entry->gather, x.typed_data<float>(), xc->typed_data<float>(), lanes, n, nnz);
    }
  });
}

}  // namespace jaxamg::mpi_handlers

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgMpiGatherColumnsCpu, jaxamg::mpi_handlers::GatherImpl,
                              ffi::Ffi::Bind()
                                  .Attr<int64_t>("comm")
                                  .Attr<int64_t>("row_start")
                                  .Attr<int64_t>("nglobal")
                                  .Attr<int64_t>("structure_hi")
                                  .Attr<int64_t>("structure_lo")
                                  .Arg<ffi::Buffer<ffi::S32>>()  // indptr
                                  .Arg<ffi::Buffer<ffi::S32>>()  // indices (global)
                                  .Arg<ffi::AnyBuffer>()         // x
                                  .Ret<ffi::AnyBuffer>());       // xc
