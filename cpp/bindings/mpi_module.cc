// nanobind module jaxamg._mpi: the XLA FFI handler capsules of the
// distributed solver (cpp/ffi/mpi/), registered from Python with
// platform="cpu". Built only when CMake finds MPI (option JAXAMG_MPI).
#include <mpi.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <type_traits>

#include "xla/ffi/api/c_api.h"
#include "xla/ffi/api/ffi.h"
#include "../ffi/solver_cache.h"

namespace nb = nanobind;

XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgSolveMpiCpu);
XLA_FFI_DECLARE_HANDLER_SYMBOL(JaxamgMpiGatherColumnsCpu);

namespace {

template <class T>
nb::capsule encapsulate(T* fn) {
  static_assert(std::is_invocable_r_v<XLA_FFI_Error*, T, XLA_FFI_CallFrame*>,
                "not an XLA FFI handler");
  return nb::capsule(reinterpret_cast<void*>(fn));
}

}  // namespace

NB_MODULE(_mpi, m) {
  m.doc() = "XLA FFI handlers of jaxamg's distributed (MPI) solver";
  m.def("registrations", [] {
    nb::dict d;
    d["jaxamg_solve_mpi"] = encapsulate(JaxamgSolveMpiCpu);
    d["jaxamg_mpi_gather_columns"] = encapsulate(JaxamgMpiGatherColumnsCpu);
    return d;
  });
  // The module exists only in builds with MPI; the handlers themselves need
  // MPI initialised (mpi4py does that on import) and say so if it is not.
  m.def("available", [] { return true; });
  // Statistics text printed by MPI solves since the last call (then cleared).
  m.def("take_stats_text", &jaxamg::ffi_cache::take_stats_text);
  m.def("mpi_initialized", [] {
    int flag = 0;
    MPI_Initialized(&flag);
    return flag != 0;
  });
}
