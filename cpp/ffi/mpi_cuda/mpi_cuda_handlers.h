// What the CUDA MPI handlers (mpi_cuda_handlers.cc) tell Python besides
// their results.
#pragma once
#include <string>

namespace jaxamg::mpi_handlers {

// This process's last distributed solve of GPU arrays.
struct DeviceSolveRecord {
  bool on_device = false;  // the solve ran on the device
  bool staged = false;     // the matrix was copied to the host (setup, cache check)
  std::string reason;      // why the host solved ("" when on_device)
};
DeviceSolveRecord last_device_solve();

}  // namespace jaxamg::mpi_handlers
