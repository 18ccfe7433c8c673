// The XLA FFI handler `jaxamg_mpi_allreduce_sum` (CPU): the elementwise sum
// of a small array over the processes of a communicator. The null-space
// projections of distributed singular solves need it for the global inner
// products N^T v and the Gram matrix N^T N (k numbers, k^2 numbers), both
// eagerly and under jax.jit, so it is an FFI target rather than an mpi4py
// call from Python.
//
// Operand: x (F32/F64, any shape). Attribute: comm (Fortran handle).
// Result: the sum over ranks, same shape and dtype, bitwise the same on
// every process. Collective over comm: every process must pass the same
// shape and dtype; a mismatch raises on every process instead of hanging.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "dist/communicator.h"
#include "mpi_error.h"
#include "mpi_handlers.h"
#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace jaxamg::mpi_handlers {

namespace {

// Every process gathers all contributions and adds them in rank order, so
// the sum is bitwise identical on every process (MPI_Allreduce does not
// promise that), and a projection or a norm built from it agrees everywhere.
// The arrays are small (k or k^2 numbers), so size * count values travel.
template <class T>
void allreduce_typed(const dist::Communicator& comm, const T* in, T* out, int count) {
  if (comm.size() == 1 || count == 0) {
    if (out != in) std::copy(in, in + count, out);
    return;
  }
  std::vector<T> all(static_cast<std::size_t>(count) * comm.size());
  const int rc = MPI_Allgather(in, count, dist::mpi_type<T>(), all.data(), count,
                               dist::mpi_type<T>(), comm.comm());
  if (rc != MPI_SUCCESS) {
    throw std::runtime_error("jaxamg_mpi_allreduce_sum: MPI_Allgather failed with code " +
                             std::to_string(rc));
  }
  std::fill(out, out + count, T(0));
  for (int r = 0; r < comm.size(); ++r) {
    const T* part = all.data() + static_cast<std::size_t>(r) * count;
    for (int i = 0; i < count; ++i) out[i] += part[i];
  }
}

}  // namespace

ffi::Error AllreduceImpl(int64_t comm_handle, ffi::AnyBuffer x, ffi::Result<ffi::AnyBuffer> y) {
  return guarded("jaxamg_mpi_allreduce_sum", [&] {
    require_thread_support("jaxamg_mpi_allreduce_sum");
    const dist::Communicator comm = dist::Communicator::from_fortran(comm_handle);
    const auto type = x.element_type();
    const auto count = static_cast<int64_t>(x.element_count());
    comm.agree_on([&] {
      if (type != ffi::F64 && type != ffi::F32) {
        throw InvalidInput("jaxamg_mpi_allreduce_sum: x has an unsupported dtype; use float32 "
                           "or float64");
      }
      if (count > INT_MAX) {
        throw InvalidInput("jaxamg_mpi_allreduce_sum: x has " + std::to_string(count) +
                           " entries, more than one MPI message holds; reduce smaller arrays");
      }
    });
    // Same count and dtype everywhere, or MPI_Allreduce would hang or mix types.
    const int64_t code = count * 2 + (type == ffi::F64 ? 1 : 0);
    if (comm.min_int(code) != comm.max_int(code)) {
      // Every process throws the same message, whatever its own size.
      throw InvalidInput("jaxamg_mpi_allreduce_sum: the processes passed arrays of different "
                         "sizes or dtypes (" + std::to_string(comm.min_int(count)) + " to " +
                         std::to_string(comm.max_int(count)) + " entries); pass the same "
                         "shape and dtype on every process");
    }
    if (type == ffi::F64) {
      allreduce_typed<double>(comm, x.typed_data<double>(), y->typed_data<double>(),
                              static_cast<int>(count));
    } else {
      allreduce_typed<float>(comm, x.typed_data<float>(), y->typed_data<float>(),
                             static_cast<int>(count));
    }
  });
}

}  // namespace jaxamg::mpi_handlers

XLA_FFI_DEFINE_HANDLER_SYMBOL(JaxamgMpiAllreduceSumCpu, jaxamg::mpi_handlers::AllreduceImpl,
                              ffi::Ffi::Bind()
                                  .Attr<int64_t>("comm")
                                  .Arg<ffi::AnyBuffer>()   // x
                                  .Ret<ffi::AnyBuffer>());  // sum over ranks
