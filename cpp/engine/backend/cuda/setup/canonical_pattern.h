// Whether a device CSR pattern is one the device setup can take as it is:
// row offsets from 0 to nnz, never decreasing, and in every row column
// indices inside [0, cols) and strictly ascending (sorted, no duplicates),
// the form the host's LinearSolver::setup brings any input to. Other
// patterns go to the host setup, which canonicalises them or names what is
// wrong with them.
#pragma once
#include <cuda_runtime_api.h>

#include "core/types.h"

namespace jaxamg::cuda {

// Runs on `stream` and waits for it (one int comes back).
bool device_pattern_is_canonical(Index rows, Index cols, const Index* ptr, Index nnz,
                                 const Index* col, cudaStream_t stream);

}  // namespace jaxamg::cuda
