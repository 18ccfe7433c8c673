// Engine exceptions -> ffi::Error for the MPI handlers. The distributed
// layer has already made every process throw the same exception, so every
// process returns the same error.
#pragma once
#include <mpi.h>

#include <string>

#include "core/error.h"
#include "../handler_common.h"
#include "xla/ffi/api/ffi.h"

namespace jaxamg::mpi_handlers {

// XLA runs handlers on its own threads: MPI must have been initialised with
// at least MPI_THREAD_SERIALIZED for calls from a thread other than the one
// that initialised it (mpi4py asks for MPI_THREAD_MULTIPLE by default).
inline void require_thread_support(const char* what) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) return;  // Communicator raises the clearer error
  int provided = MPI_THREAD_SINGLE, is_main = 0;
  MPI_Query_thread(&provided);
  MPI_Is_thread_main(&is_main);
  if (!is_main && provided < MPI_THREAD_SERIALIZED) {
    throw InvalidInput(std::string(what) + ": MPI was initialised with thread level " +
                       std::to_string(provided) + " but XLA calls this handler from another "
                       "thread; initialise MPI with MPI_THREAD_SERIALIZED or MULTIPLE (mpi4py's "
                       "default, mpi4py.rc.thread_level = 'multiple')");
  }
}

// Engine exceptions -> ffi::Error, as for the single-process handlers.
using ffi_handlers::guarded;

}  // namespace jaxamg::mpi_handlers
