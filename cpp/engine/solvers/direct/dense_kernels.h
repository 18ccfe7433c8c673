// Dense kernels of the direct solver: a packed, register-blocked matrix
// product for the trailing update of the blocked LU. The inner kernel is
// compiled for AVX-512, AVX2 and baseline x86-64 and chosen at run time.
#pragma once
#include "core/types.h"

namespace jaxamg::dense {

// C -= A B with row-major A (m x k, leading dimension lda), B (k x n, ldb)
// and C (m x n, ldc). OpenMP over row blocks of C.
template <class T>
void gemm_minus(Index m, Index n, Index k, const T* A, Index lda, const T* B, Index ldb, T* C,
                Index ldc);

// Name of the instruction set the kernels use on this machine.
const char* kernel_isa();

}  // namespace jaxamg::dense
